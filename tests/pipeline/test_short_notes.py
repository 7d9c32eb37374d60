"""Short notes through consolidation: a note a pass took is consolidated (listed, searched and
left out of packets as such), and a note its memories quote cannot be forgotten before them;
forgetting leaves no trace of its words anywhere in the store."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rdflib import Literal

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.errors import LifecycleError, UnknownMemory
from kgmem.pipeline.consolidation import PassStatus
from kgmem.pipeline.signatures import ExtractClaims
from kgmem.vocab import KGM
from tests.pipeline.passes import UID, consolidation, memories
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, quote

ROBERT = "Alice says Robert moved to Paris in May, she wants to visit him in June."
REMINDER = "ask Alice next week whether the June trip is booked"


def _words_anywhere(services: Services, text: str) -> bool:
    return any(
        isinstance(q.object, Literal) and text in str(q.object) for q in services.store.quads()
    )


def test_a_note_a_pass_took_is_consolidated_and_guarded_by_its_memory(
    services: Services, clock: FixedClock
) -> None:
    robert = services.sources.remember(UID, ROBERT).iri
    clock.advance(timedelta(seconds=5))
    reminder = services.sources.remember(UID, REMINDER).iri
    listed, total = services.notes.listing(UID)
    assert total == 2 and [n.iri for n in listed] == [reminder, robert]  # newest first
    assert {n.consolidated for n in listed} == {False}
    services.settle()
    [before] = services.search.memory_search(UID, "where does Robert live now", kinds=["note"])
    assert before.id == str(robert) and before.consolidated is False
    assert "a short note, not yet consolidated" in before.why
    packet = services.retrieval.retrieve_memory(UID, "plan the Paris visit to Robert", "plan")
    assert [n.id for n in packet.notes] == [str(robert)]

    engine = ScriptedEngine()
    engine.add(
        ExtractClaims,
        claims_reply(
            claim(
                "Robert",
                "schema:homeLocation",
                quote("S1", "Robert moved to Paris"),
                object="Paris",
                statement="Robert lives in Paris",
            )
        ),
    )
    clock.advance(timedelta(minutes=30))  # the notes' conversation is idle
    [done] = consolidation(services, engine).consolidate(UID)
    assert done.status is PassStatus.COMMITTED, done.error
    memory = memories(services)["Robert lives in Paris"]
    assert [str(e.source) for e in memory.evidence] == [str(robert)]

    listed, _ = services.notes.listing(UID)
    assert {n.consolidated for n in listed} == {True}
    assert services.notes.listing(UID, consolidated=False) == ([], 0)
    services.settle()
    [after] = services.search.memory_search(UID, "where does Robert live now", kinds=["note"])
    assert after.consolidated is True and "a short note, not yet consolidated" not in after.why
    packet = services.retrieval.retrieve_memory(UID, "plan the Paris visit to Robert", "plan")
    assert packet.notes == ()  # its memory speaks for it now

    with pytest.raises(LifecycleError, match=str(memory.iri)):
        services.notes.forget(UID, robert, "person")
    assert _words_anywhere(services, "Robert moved to Paris")
    kept = [q for q in services.store.quads(predicate=KGM.payload) if "Robert moved" in q.object]
    assert kept  # the ended pass keeps its last state, quotes and all
    services.lifecycle.forget(UID, memory.iri)
    # forgetting the memory takes what the pass that read its sources kept of them
    assert not [q for q in services.store.quads(predicate=KGM.payload) if "Robert" in q.object]
    services.notes.forget(UID, reminder, "person")  # taken, but nothing quotes it
    services.notes.forget(UID, robert, "person")
    assert services.notes.listing(UID) == ([], 0)
    assert not _words_anywhere(services, "Robert moved to Paris")
    assert not _words_anywhere(services, "June trip")
    services.settle()
    assert services.search.memory_search(UID, "Robert Paris June trip") == []
    with pytest.raises(UnknownMemory):
        services.notes.forget(UID, robert, "person")  # gone: forgetting again is a 404
