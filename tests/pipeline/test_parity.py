"""The consolidation path decides as the foreground gate does (#23, path parity): a model
answer run through a whole pass, on a real store, ends where the same drafts written one by
one through the gate end.

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
from kgmem.pipeline import Consolidation, ExtractClaims, PassRecord, PassStatus
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
