"""Listing memories, the review inbox, and reads "as of" an earlier time."""

from __future__ import annotations

from datetime import timedelta

from kgmem.memory.gate import WriteMode
from kgmem.memory.listing import MemoryList
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.store import QueryRegistry
from tests.memory.world import NOW, World, works_at


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
