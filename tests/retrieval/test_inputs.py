"""Bad input to memory_search and memory_cite: typed errors, nothing read or leaked."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kgmem.errors import GraphNameError, UnknownMemory
from kgmem.retrieval import InvalidSearch, MemorySearch
from kgmem.store import NodeKind, new_node
from tests.memory.world import World
from tests.retrieval.support import remember, remember_for, write_note

MAY = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "k", "field"),
    [
        ("", 8, "query"),
        ("   \n\t", 8, "query"),
        ("x" * 2001, 8, "query"),
        (None, 8, "query"),
        (42, 8, "query"),
        ("acme", 0, "k"),
        ("acme", 101, "k"),
        ("acme", -3, "k"),
        ("acme", True, "k"),
        ("acme", "8", "k"),
        ("acme", 2.5, "k"),
    ],
)
def test_query_and_k_are_checked(search: MemorySearch, query: Any, k: Any, field: str) -> None:
    with pytest.raises(InvalidSearch) as caught:
        search.memory_search("alice", query, k)
    assert caught.value.field == field
    assert len(str(caught.value)) < 200  # a huge query is not echoed back whole


def test_the_bounds_themselves_are_accepted(world: World, search: MemorySearch) -> None:
    memory = remember(world, "Acme", "I like acme")
    assert [h.id for h in search.memory_search("alice", "acme " + "x" * 1995, 1)] == [str(memory)]
    assert len(search.memory_search("alice", "acme", 100)) == 1


@pytest.mark.parametrize(
    "arguments",
    [
        {"kinds": ["banana"]},
        {"kinds": []},
        {"kinds": [3]},
        {"statuses": ["gone"]},
        {"statuses": []},
        {"statuses": ["ACTIVE"]},
        {"tags": [""]},
        {"tags": ["x" * 65]},
        {"tags": [f"t{i}" for i in range(21)]},
        {"entity": ""},
        {"entity": "x" * 501},
        {"time_range": ("2026-05-01", None)},
        {"time_range": (MAY,)},
    ],
    ids=lambda a: next(iter(a)),
)
def test_unknown_filter_values_are_refused(search: MemorySearch, arguments: Any) -> None:
    with pytest.raises(InvalidSearch) as caught:
        search.memory_search("alice", "acme", **arguments)
    assert caught.value.field == next(iter(arguments))


def test_an_entity_iri_not_of_this_user_finds_nothing(world: World, search: MemorySearch) -> None:
    remember(world, "Acme", "I like acme")
    assert len(search.memory_search("alice", "acme")) == 1
    for other in ("https://w3id.org/kgmem/user/bob/entity/abc", "https://example.org/acme"):
        assert search.memory_search("alice", "acme", entity=other) == []


def test_a_malformed_user_id_is_refused(search: MemorySearch) -> None:
    for uid in ("", "bob:kg", "../alice", "a" * 200):
        with pytest.raises(GraphNameError):
            search.memory_search(uid, "acme")
        with pytest.raises(GraphNameError):
            search.memory_cite(uid, "https://w3id.org/kgmem/user/alice/memory/abc")


def test_a_query_without_searchable_words_finds_nothing(world: World, search: MemorySearch) -> None:
    remember(world, "The plan", "this is the plan")
    assert search.memory_search("alice", "the of and ?!") == []


def test_citing_another_users_memory_is_refused_like_a_missing_one(
    world: World, search: MemorySearch
) -> None:
    theirs = remember_for(world, "bob", "Bob's secret", "the code is 1234")
    missing = new_node("alice", NodeKind.MEMORY)
    refusals = []
    for bad in (str(theirs), str(missing)):
        with pytest.raises(UnknownMemory) as caught:
            search.memory_cite("alice", bad)
        refusals.append(caught.value.reason)
    assert refusals[0] == refusals[1]  # nothing tells whether bob's memory exists
    assert world.memory(theirs) is None  # alice's view
    assert search.memory_search("bob", "secret")[0].id == str(theirs)
    assert "cited" not in " ".join(search.memory_search("bob", "secret")[0].why)


@pytest.mark.parametrize(
    "bad",
    ["", "acme", "https://example.org/x", "https://w3id.org/kgmem/user/alice/memory/", 42, None],
)
def test_citing_a_malformed_id_is_refused(search: MemorySearch, bad: Any) -> None:
    with pytest.raises(UnknownMemory):
        search.memory_cite("alice", bad)


def test_notes_and_entities_cannot_be_cited(world: World, search: MemorySearch) -> None:
    note = write_note(world, "ideas.md", "an idea")
    with pytest.raises(UnknownMemory, match="read-only"):
        search.memory_cite("alice", str(note))
    with pytest.raises(UnknownMemory, match="only memories and pages"):
        search.memory_cite("alice", str(new_node("alice", NodeKind.ENTITY)))
    with pytest.raises(UnknownMemory, match="no such page"):
        search.memory_cite("alice", str(new_node("alice", NodeKind.PAGE)))
