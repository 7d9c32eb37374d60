"""Memories as kgmem knew them at a time (record time): later memories left out, later status
changes, pins and closed valid times undone, a reverted creation shown while it stood, a
forgotten memory never; and bitemporal with valid_at (what held then, as known then)."""

from __future__ import annotations

from datetime import timedelta

from kgmem.memory.decisions import Decisions
from kgmem.memory.known_at import KnownAt
from kgmem.memory.model import MemoryStatus
from kgmem.store import OxigraphStore, QueryRegistry
from tests.memory.world import EMPLOYER, NOW, World, claim_draft, works_at

HOUR = timedelta(hours=1)


def test_a_timeline_read_as_it_was_known(
    world: World, store: OxigraphStore, queries: QueryRegistry
) -> None:
    known = KnownAt(store, queries, Decisions(store, queries))
    first = world.say("user", "I work at Acme since 2019.")
    acme_draft = works_at(first, predicate=str(EMPLOYER))
    acme_draft["claims"][0]["valid_from"] = "2019-01-01T00:00:00Z"
    [acme] = world.draft(acme_draft)
    t_acme = world.clock.now()

    world.clock.advance(24 * HOUR)
    bike = world.say("user", "I ride my bike to the office every day.")
    [rides] = world.draft(
        claim_draft(
            bike,
            "I ride my bike to the office",
            "I",
            "schema:description",
            types={},
            value="ride my bike to the office",
        )
    )
    assert rides.memory is not None, rides
    world.lifecycle.pin("alice", rides.memory)
    t_pinned = world.clock.now()

    world.clock.advance(24 * HOUR)
    later = world.say("user", "I now work at Globex, since June.")
    globex_draft = works_at(later, "Globex", "I now work at Globex", predicate=str(EMPLOYER))
    globex_draft["claims"][0]["valid_from"] = "2026-06-01T00:00:00Z"
    [globex] = world.draft(globex_draft)
    assert globex.superseded == (acme.memory,)
    world.lifecycle.unpin("alice", rides.memory)
    world.lifecycle.archive("alice", rides.memory)
    t_moved = world.clock.now()

    world.clock.advance(24 * HOUR)
    world.lifecycle.pin("alice", globex.memory)
    gym = world.say("user", "I joined the Crux climbing gym.")
    [climbs] = world.draft(
        claim_draft(
            gym,
            "I joined the Crux climbing gym",
            "I",
            "schema:description",
            types={},
            value="joined the Crux climbing gym",
        )
    )
    t_climbs = world.clock.now()
    world.clock.advance(HOUR)
    [created] = world.lifecycle.decisions.history("alice", [climbs.memory])
    world.lifecycle.revert("alice", created.iri)  # the user says it was never true
    world.clock.advance(HOUR)
    world.lifecycle.forget("alice", rides.memory)

    def as_known(at, **kw):  # type: ignore[no-untyped-def]
        return {s.iri: s for s in known.memories("alice", known_at=at, **kw)}

    then = as_known(t_acme + HOUR)  # only Acme, still the current job
    assert list(then) == [acme.memory]
    assert then[acme.memory].status is MemoryStatus.ACTIVE
    assert then[acme.memory].valid_until is None
    assert as_known(t_acme - HOUR) == {}  # nothing recorded yet

    then = as_known(t_pinned + HOUR)  # the bike memory was pinned then; it is forgotten now
    assert rides.memory not in then and set(then) == {acme.memory}

    then = as_known(t_moved + HOUR)
    assert then[acme.memory].status is MemoryStatus.SUPERSEDED
    assert then[globex.memory].status is MemoryStatus.ACTIVE
    assert not then[globex.memory].pinned  # pinned a day later
    assert climbs.memory not in then

    then = as_known(t_climbs + 30 * timedelta(minutes=1))  # before the revert
    assert then[climbs.memory].status is MemoryStatus.ACTIVE
    now = as_known(world.clock.now() + HOUR)
    assert climbs.memory not in now  # reverted: the memory is gone since
    assert now[globex.memory].pinned
    assert {s.status for s in known.memories("alice", known_at=world.clock.now())} == {
        MemoryStatus.SUPERSEDED,
        MemoryStatus.ACTIVE,
    }

    # bitemporal: where did she work in March 2026, as known after Acme, and as known now
    march = NOW.replace(month=3)
    before = known.memories("alice", known_at=t_acme + HOUR, valid_at=march, predicate=EMPLOYER)
    assert [s.iri for s in before] == [acme.memory]
    after = known.memories("alice", known_at=world.clock.now(), valid_at=march, predicate=EMPLOYER)
    assert [s.iri for s in after] == [acme.memory]  # Acme held in March, superseded in June
    july = NOW.replace(month=7)
    assert [s.iri for s in known.memories("alice", known_at=t_acme + HOUR, valid_at=july)] == [
        acme.memory
    ]  # as known then, Acme still held in July
    assert [
        s.iri
        for s in known.memories(
            "alice", known_at=world.clock.now(), valid_at=july, predicate=EMPLOYER
        )
    ] == [globex.memory]
    only = known.memories("alice", known_at=t_moved + HOUR, status=MemoryStatus.SUPERSEDED)
    assert [s.iri for s in only] == [acme.memory]
