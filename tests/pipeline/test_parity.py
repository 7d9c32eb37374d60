"""The consolidation path decides as the foreground gate does (#23, path parity): a model
answer run through a whole pass, on a real store, ends where the same drafts written one by
one through the gate end.

- a change the chat states closes the older value's valid time, also when both statements
  are in one pass (the later one is decided by the next pass, against the committed one);
- what the answer says a mention is ("Mercury ... the planet I mean", "our dog is also
  called Juno") keeps a known entity of a disjoint type apart, and is checked against what
  the chat says of it ("my colleague Claire Fontaine", typed as an organization, is
  refused as a mislabel);
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
from kgmem.memory.decisions import Action
from kgmem.memory.model import MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.memory.source_inputs import MessageIn
from kgmem.pipeline import Consolidation, ExtractClaims, PassRecord, PassStatus, StageName
from kgmem.pipeline.stages.reconcile import Reconciled
from kgmem.vocab import KGM, RC, SDO
from tests.pipeline.passes import UID, G, consolidation, memories, types_of
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


def _deferred_then_superseding(
    services: Services, clock: FixedClock, first: dict[str, Any], later: dict[str, Any]
) -> tuple[MemoryRecord, MemoryRecord]:
    """Two passes over one answer of ``first`` then ``later``: the first pass defers
    ``later`` (it decides against the store); the memories of both, by their titles."""
    pipeline, records = _run(services, clock, [first, later], passes=2)
    state = pipeline.checkpoints.state(UID, records[0].pass_id)
    reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE))
    assert [d.draft.title for d in reconciled.deferred] == [later["statement"]]
    found = memories(services)
    return found[first["statement"]], found[later["statement"]]


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
    # decided against the store, the promotion could not see the title of the same pass:
    # it waits for the next pass instead of standing beside it
    old, new = _deferred_then_superseding(services, clock, titled, promoted)
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


def test_a_thing_moved_to_a_new_holder_in_the_same_pass_leaves_the_old_one(
    services: Services, clock: FixedClock
) -> None:
    _say(
        services,
        clock,
        ("user", "Core Ledger owns ledger-api."),
        ("user", "Big change: ledger-api moved to the Payments Platform team."),
    )
    owned = claim(
        "Core Ledger",
        "schema:owns",
        quote("S1", "Core Ledger owns ledger-api"),
        object="ledger-api",
        statement="Core Ledger owns ledger-api",
    )
    moved = claim(
        "Payments Platform",
        "schema:owns",
        quote("S2", "ledger-api moved to the Payments Platform team"),
        object="ledger-api",
        statement="Payments Platform owns ledger-api",
    )
    # the move names no old holder: the pass sees Core Ledger's claim only once it is
    # committed, so the move waits for the next pass rather than leave both owners
    old, new = _deferred_then_superseding(services, clock, owned, moved)
    assert old.status is MemoryStatus.SUPERSEDED
    assert new.status is MemoryStatus.ACTIVE and new.supersedes == (old.iri,)


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


# -- what the answer says a mention is ---------------------------------------------------


def test_a_colleague_the_chat_makes_a_person_said_to_be_an_organization_is_refused(
    services: Services, clock: FixedClock
) -> None:
    text = "Internet is covered: my colleague Claire Fontaine lent me her old hotspot."
    [said] = _say(services, clock, ("user", text))
    known = _gate(
        services,
        said,
        title="Claire Fontaine is a colleague",
        claims=[{"subject": "I", "predicate": "schema:colleague", "object": "Claire Fontaine"}],
        entities=[{"name": "Claire Fontaine", "types": ["schema:Person"]}],
        evidence=["my colleague Claire Fontaine"],
    )
    lent = quote("S1", "my colleague Claire Fontaine lent me her old hotspot")
    answer = [
        claim("Claire Fontaine", "schema:description", lent, value="lent me her old hotspot"),
        # the lie: no quote says so (ground refuses it), and the chat says she is a person
        claim("Claire Fontaine", "rdf:type", lent, object="schema:Organization"),
    ]
    pipeline, [record] = _run(services, clock, answer)
    state = pipeline.checkpoints.state(UID, record.pass_id)
    reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE))
    [refused] = reconciled.dropped
    assert refused.code == "disjoint"
    assert str(SDO.Person) in refused.message and str(SDO.Organization) in refused.message
    assert set(memories(services)) == {known.title}
    [claire] = _named(services, "Claire Fontaine")
    assert types_of(services, claire) == {SDO.Person}
    # the refusal is in the decisions feed, as the gate's is
    assert any(d.action is Action.REFUSE for d in services.gate.decisions.feed(UID, 10))


def test_a_planet_and_a_message_broker_named_mercury_stay_two_entities(
    services: Services, clock: FixedClock
) -> None:
    broker, planet = (
        "ledger-api publishes events to Mercury, which is our internal message broker.",
        "My daughter asked me about Mercury for a school project, the planet I mean.",
    )
    first, _ = _say(services, clock, ("user", broker), ("user", planet))
    _gate(
        services,
        first,
        title="Mercury is the message broker",
        claims=[
            {
                "subject": "Mercury",
                "predicate": "schema:description",
                "value": "our internal message broker",
            }
        ],
        entities=[{"name": "Mercury", "types": ["schema:SoftwareApplication"]}],
        evidence=["Mercury, which is our internal message broker"],
    )
    said = quote("S2", "Mercury for a school project, the planet I mean")
    answer = [
        claim("Mercury", "schema:description", said, value="the planet", statement="Planet"),
        claim("Mercury", "rdf:type", said, object="rc:Planet"),
    ]
    _run(services, clock, answer)
    named = _named(services, "Mercury")
    assert len(named) == 2
    assert {frozenset(types_of(services, e)) for e in named} == {
        frozenset({SDO.SoftwareApplication}),
        frozenset({RC.Planet, SDO.Thing}),
    }
    [held] = [e for e in named if RC.Planet in types_of(services, e)]
    assert held in memories(services)["Planet"].about


def test_one_answer_naming_two_mercuries_makes_two_entities(
    services: Services, clock: FixedClock
) -> None:
    """What a typing says holds where it is quoted: one answer may speak of two referents
    of one name, each typed beside the words it cites."""
    broker, planet = (
        "ledger-api publishes events to Mercury, which is our internal message broker.",
        "My daughter asked me about Mercury for a school project, the planet I mean.",
    )
    _say(services, clock, ("user", broker), ("user", planet))
    said_broker = quote("S1", "Mercury, which is our internal message broker")
    said_planet = quote("S2", "Mercury for a school project, the planet I mean")
    answer = [
        claim(
            "Mercury",
            "schema:description",
            said_broker,
            value="our internal message broker",
            statement="Broker",
        ),
        claim("Mercury", "rdf:type", said_broker, object="schema:SoftwareApplication"),
        claim("Mercury", "schema:description", said_planet, value="the planet", statement="Planet"),
        claim("Mercury", "rdf:type", said_planet, object="rc:Planet"),
    ]
    _run(services, clock, answer)
    found = memories(services)
    [first], [second] = found["Broker"].about, found["Planet"].about
    assert first != second
    assert sorted(_named(services, "Mercury")) == sorted([first, second])
    assert RC.Planet in types_of(services, second)


def test_a_dog_named_like_a_firm_is_not_the_firm(services: Services, clock: FixedClock) -> None:
    text = (
        "Juno Electrics, a two-person firm down the road. "
        "Funny, because our dog is also called Juno."
    )
    [said] = _say(services, clock, ("user", text))
    firm = _gate(
        services,
        said,
        title="Juno Electrics",
        claims=[
            {
                "subject": "Juno Electrics",
                "predicate": "schema:description",
                "value": "a two-person firm down the road",
            }
        ],
        entities=[
            {"name": "Juno Electrics", "types": ["schema:Organization"], "aliases": ["Juno"]}
        ],
        evidence=["Juno Electrics, a two-person firm down the road"],
    )
    dog = quote("S1", "our dog is also called Juno")
    answer = [
        claim("Juno", "schema:description", dog, value="our dog", statement="Juno is the dog"),
        # no quote names the class (ground refuses the typing), but it says which Juno
        claim("Juno", "rdf:type", dog, object="rc:DomesticPet"),
    ]
    _run(services, clock, answer)
    [known] = firm.about
    pet = memories(services)["Juno is the dog"]
    assert pet.status is MemoryStatus.ACTIVE and known not in pet.about
    assert len(_named(services, "Juno")) == 2
    # the said class is no fact: the dog's entity is not typed by it
    [juno] = [e for e in _named(services, "Juno") if e != known]
    assert RC.DomesticPet not in types_of(services, juno)


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
