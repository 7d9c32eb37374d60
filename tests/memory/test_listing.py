"""Listing memories, the review inbox, and reads "as of" an earlier time."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from rdflib import URIRef

from kgmem.memory.gate import WriteMode
from kgmem.memory.listing import MemoryList
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.store import QueryRegistry
from kgmem.vocab import SDO
from tests.memory.world import ALICE, NOW, World, works_at


def test_list_filters_by_kind_and_status_and_pages(world: World) -> None:
    listing = MemoryList(world.store, QueryRegistry.load())
    msg = world.say("user", "I work at Acme. I work at Globex. I work at Initech.")
    for company in ("Acme", "Globex", "Initech"):
        world.clock.advance(timedelta(minutes=1))
        world.draft(works_at(msg, company), mode=WriteMode.REVIEW)
    inbox = listing.inbox("alice")
    assert [m.title for m in inbox] == [
        "Alice works at Initech",
        "Alice works at Globex",
        "Alice works at Acme",
    ]
    assert listing.memories("alice", kind=MemoryKind.EPISODIC) == []
    assert len(listing.memories("alice", kind=MemoryKind.SEMANTIC, limit=2)) == 2
    assert listing.memories("alice", offset=2)[0].title == "Alice works at Acme"
    assert listing.memories("alice", status=MemoryStatus.ACTIVE) == []
    assert listing.memories("bob") == []


def test_as_of_returns_what_was_active_then(world: World) -> None:
    listing = MemoryList(world.store, QueryRegistry.load())
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg))
    world.clock.advance(timedelta(days=10))
    world.lifecycle.archive("alice", item.memory)
    assert listing.as_of("alice", NOW - timedelta(seconds=1)) == []
    assert [m.iri for m in listing.as_of("alice", NOW + timedelta(days=5))] == [item.memory]
    assert listing.as_of("alice", NOW + timedelta(days=11)) == []


def _club(source: str, club: str, quote: str) -> dict[str, object]:
    return {
        "kind": "semantic",
        "title": f"Runs with {club}",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "schema:memberOf", "object": club}],
        "evidence": [{"source": source, "quote": quote}],
    }


def _clubs(world: World) -> tuple[URIRef, URIRef]:
    """Alice ran with Riverside Striders (said at NOW), then with Harbour Harriers (said ten
    days later, "since"): the first memory is superseded as of the second message."""
    first = world.say("user", "I run with Riverside Striders.", timestamp=NOW)
    [old] = world.draft(_club(first, "Riverside Striders", "I run with Riverside Striders."))
    said = "Since February I run with Harbour Harriers."
    world.clock.advance(timedelta(days=10))
    second = world.say("user", said, timestamp=NOW + timedelta(days=10))
    [new] = world.draft(_club(second, "Harbour Harriers", said))
    assert (old.outcome, new.outcome) == ("active", "active")
    return old.memory, new.memory


def test_valid_at_returns_the_value_that_held_then(world: World) -> None:
    listing = MemoryList(world.store, QueryRegistry.load())
    old, new = _clubs(world)
    assert world.memory(old).status is MemoryStatus.SUPERSEDED

    def held(when: datetime, **filters: Any) -> list[URIRef]:
        return [m.iri for m in listing.memories("alice", valid_at=when, **filters)]

    club = {"entity": "I", "predicate": SDO.memberOf}
    assert held(NOW - timedelta(days=30), **club) == [old]  # from a time nobody said
    assert held(NOW + timedelta(days=5), **club) == [old]
    assert held(NOW + timedelta(days=10), **club) == [new]  # closed as the new one opens
    assert held(NOW + timedelta(days=50), **club) == [new]
    assert held(NOW + timedelta(days=5)) == [old]  # no filter: every memory
    assert held(NOW + timedelta(days=50), entity="alice") == [new]
    [summary] = listing.memories("alice", valid_at=NOW + timedelta(days=5))
    assert summary.valid_until == NOW + timedelta(days=10) and summary.valid_from is None


def test_valid_at_filters_see_only_the_asked_subject_predicate_and_status(world: World) -> None:
    listing = MemoryList(world.store, QueryRegistry.load())
    old, new = _clubs(world)
    later = NOW + timedelta(days=50)
    assert listing.memories("alice", valid_at=later, entity="Harbour Harriers") == []
    assert listing.memories("alice", valid_at=later, entity="nobody we know") == []
    assert listing.memories("alice", valid_at=later, predicate=SDO.worksFor) == []
    assert listing.memories("alice", valid_at=later, entity=str(ALICE.kg)) == []
    assert listing.memories("bob", valid_at=later, entity="I") == []
    superseded = listing.memories("alice", valid_at=later, status=MemoryStatus.SUPERSEDED)
    assert superseded == []  # the superseded value no longer held
    kept = listing.memories("alice", entity="I", predicate=SDO.memberOf)
    assert [m.iri for m in kept] == [new, old]  # without a time: the whole history


def test_valid_at_leaves_out_what_waits_for_review(world: World) -> None:
    listing = MemoryList(world.store, QueryRegistry.load())
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg), mode=WriteMode.REVIEW)
    assert item.outcome == "pending"
    assert listing.memories("alice", valid_at=NOW) == []
    pending = listing.memories("alice", valid_at=NOW, status=MemoryStatus.PENDING)
    assert [m.iri for m in pending] == [item.memory]
