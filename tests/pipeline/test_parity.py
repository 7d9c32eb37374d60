"""The consolidation path decides as the foreground gate does (#23, path parity): a model
answer run through a whole pass, on a real store, ends where the same drafts written one by
one through the gate end.

- a change the chat states closes the older value's valid time, also when both statements
  are in one pass (the later one is decided by the next pass, against the committed one);
- a company named with and without its legal form is one entity, also within one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from rdflib import Literal, URIRef

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.memory.decider import Actor, Outcome
from kgmem.memory.model import MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.memory.source_inputs import MessageIn
from kgmem.pipeline import Consolidation, ExtractClaims, PassRecord, PassStatus, StageName
from kgmem.pipeline.reconcile import Reconciled
from kgmem.vocab import KGM
from tests.pipeline.passes import UID, G, consolidation, memories
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, quote

CHAT = "lyon"


def _say(services: Services, clock: FixedClock, *turns: tuple[str, str]) -> list[str]:
    """The turns of one chat, each a day after the one before (so a later one is newer)."""
    iris = []
    for role, text in turns:
        turn = sum(1 for _ in services.store.quads(G.sources, None, KGM.turn))
        clock.advance(timedelta(days=1))
        msg = MessageIn(chat=CHAT, turn=turn, role=role, text=text)
        iris.append(str(services.sources.ingest_message(UID, msg).iri))
    return iris


def _gate(services: Services, source: str, **draft: Any) -> MemoryRecord:
    """A memory the user already has, written through the foreground gate."""
    payload = {"kind": "semantic", "confidence": 0.9, **draft}
    payload["evidence"] = [{"source": source, "quote": q} for q in draft["evidence"]]
    [item] = services.gate.draft(UID, [payload], actor=Actor.PERSON).items
    assert item.outcome is Outcome.ACTIVE, item.reasons
    return memories(services)[payload["title"]]


def _run(
    services: Services, clock: FixedClock, answer: Sequence[dict[str, Any]], passes: int = 1
) -> tuple[Consolidation, list[PassRecord]]:
    """Passes over the chat whose model answers ``answer`` (the first pass's extraction;
    the later ones decide what it queued again)."""
    clock.advance(timedelta(minutes=10))
    engine = ScriptedEngine({ExtractClaims: [claims_reply(*answer)]})
    pipeline = consolidation(services, engine)
    records: list[PassRecord] = []
    for _ in range(passes):
        records += pipeline.consolidate(UID, now=True)
    assert records and all(r.status is PassStatus.COMMITTED for r in records), records
    return pipeline, records


def _named(services: Services, name: str) -> list[URIRef]:
    """The entities of alice's kg graph that go by ``name`` (their name or an alias)."""
    found = {
        q.subject
        for p in (KGM.name, KGM.alias)
        for q in services.store.quads(G.kg, None, p, Literal(name))
    }
    return sorted(s for s in found if isinstance(s, URIRef))


# -- a stated change closes the older value --------------------------------------------


def test_a_change_stated_in_the_same_pass_closes_the_older_value(
    services: Services, clock: FixedClock
) -> None:
    first, later = _say(
        services,
        clock,
        ("user", "I'm a UX researcher at Maison Vert."),
        ("user", "Small news: since April 1st I'm a senior UX researcher!"),
    )
    titled = claim(
        "user",
        "schema:jobTitle",
        quote("S1", "I'm a UX researcher"),
        value="UX researcher",
        statement="Ana is a UX researcher",
    )
    promoted = claim(
        "user",
        "schema:jobTitle",
        quote("S2", "since April 1st I'm a senior UX researcher"),
        value="senior UX researcher",
        statement="Ana is a senior UX researcher",
    )
    pipeline, records = _run(services, clock, [titled, promoted], passes=2)
    # decided against the store, the promotion could not see the title of the same pass:
    # it waits for the next pass instead of standing beside it
    state = pipeline.checkpoints.state(UID, records[0].pass_id)
    reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE))
    assert [d.draft.title for d in reconciled.deferred] == ["Ana is a senior UX researcher"]
    found = memories(services)
    old, new = found["Ana is a UX researcher"], found["Ana is a senior UX researcher"]
    assert old.status is MemoryStatus.SUPERSEDED and old.valid_until is not None
    assert new.status is MemoryStatus.ACTIVE and new.supersedes == (old.iri,)
    assert (first, later) == tuple(str(e.source) for e in (*old.evidence, *new.evidence))


def test_a_stated_change_closes_the_value_an_earlier_pass_committed(
    services: Services, clock: FixedClock
) -> None:
    [said] = _say(services, clock, ("user", "Claire's the research lead, my boss."))
    old = _gate(
        services,
        said,
        title="Claire Fontaine is the research lead",
        claims=[{"subject": "Claire", "predicate": "schema:jobTitle", "value": "research lead"}],
        entities=[{"name": "Claire", "types": ["schema:Person"]}],
        evidence=["Claire's the research lead"],
    )
    _say(services, clock, ("user", "Claire got promoted too, she's head of research now."))
    head = claim(
        "Claire",
        "schema:jobTitle",
        quote("S2", "Claire got promoted too, she's head of research now"),
        value="head of research",
        statement="Claire is head of research",
    )
    _run(services, clock, [head])
    found = memories(services)
    closed = found[old.title]
    assert closed.status is MemoryStatus.SUPERSEDED and closed.valid_until is not None
    assert found["Claire is head of research"].supersedes == (old.iri,)


def test_a_second_value_of_a_slot_that_holds_several_is_decided_in_the_same_pass(
    services: Services, clock: FixedClock
) -> None:
    """The control: jobTitle may hold two values, and nothing says the first one ended, so
    the gate would weigh neither against the other: both are decided at once, both open."""
    said = "I'm a UX researcher, and a part-time lecturer"
    _say(services, clock, ("user", said + "."))
    answer = [
        claim("user", "schema:jobTitle", quote("S1", said), value=title, statement=title)
        for title in ("UX researcher", "part-time lecturer")
    ]
    pipeline, [record] = _run(services, clock, answer)
    state = pipeline.checkpoints.state(UID, record.pass_id)
    assert Reconciled.model_validate(state.output(StageName.RECONCILE)).deferred == ()
    found = memories(services)
    assert {t: (m.status, m.valid_until) for t, m in found.items()} == {
        "UX researcher": (MemoryStatus.ACTIVE, None),
        "part-time lecturer": (MemoryStatus.ACTIVE, None),
    }


# -- legal forms -------------------------------------------------------------------------


def test_a_firm_with_and_without_its_legal_form_is_one_entity_in_one_pass(
    services: Services, clock: FixedClock
) -> None:
    _say(
        services,
        clock,
        ("user", "My accountant, Yusuf Haddad of Haddad & Co. Ltd, does my taxes."),
        ("user", "Haddad & Co. merged, it's Haddad Pierce now."),
    )
    answer = [
        claim(
            "Yusuf Haddad",
            "schema:worksFor",
            quote("S1", "Yusuf Haddad of Haddad & Co. Ltd"),
            object="Haddad & Co. Ltd",
            statement="Yusuf works at Haddad & Co. Ltd",
        ),
        claim(
            "Haddad & Co.",
            "schema:alternateName",
            quote("S2", "Haddad & Co. merged, it's Haddad Pierce now"),
            value="Haddad Pierce",
            statement="Haddad & Co. is Haddad Pierce",
        ),
    ]
    _run(services, clock, answer)
    found = memories(services)
    assert {m.status for m in found.values()} == {MemoryStatus.ACTIVE}
    [firm] = _named(services, "Haddad & Co. Ltd")
    assert _named(services, "Haddad & Co.") == [firm]
    assert firm in found["Haddad & Co. is Haddad Pierce"].about
