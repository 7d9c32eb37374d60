"""Short memory: time-decayed ranking of short notes, threshold, cap, injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.memory.short_memory import ShortMemoryPolicy, decay_score
from kgmem.memory.sources import SourceStore
from kgmem.store import OxigraphStore, QueryRegistry

START = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


def make(
    store: OxigraphStore,
    queries: QueryRegistry,
    clock: FixedClock,
    *,
    half_life_days: float = 14.0,
    threshold: float = 0.1,
    cap: int = 20,
) -> SourceStore:
    policy = ShortMemoryPolicy(half_life_days, threshold, cap)
    return SourceStore(store, queries, clock, policy=policy)


def write(sources: SourceStore, clock: FixedClock, *ages_days: float) -> None:
    """One note per age, written so that at START + 100 days it is that old."""
    for age in ages_days:
        clock.current = START + timedelta(days=100 - age)
        sources.remember("alice", f"note aged {age:g} days")
    clock.current = START + timedelta(days=100)


def test_decay_halves_every_half_life() -> None:
    now = START + timedelta(days=28)
    assert decay_score(START + timedelta(days=28), now, 14) == 1.0
    assert decay_score(START + timedelta(days=14), now, 14) == pytest.approx(0.5)
    assert decay_score(START, now, 14) == pytest.approx(0.25)
    assert decay_score(now + timedelta(days=3), now, 14) == 1.0  # the future counts as new


def test_short_memory_ranks_by_decay(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock, half_life_days=14, threshold=0.1, cap=20)
    write(sources, clock, 14, 0, 28, 7)
    items = sources.short_memory("alice")
    assert [i.text for i in items] == [
        "note aged 0 days",
        "note aged 7 days",
        "note aged 14 days",
        "note aged 28 days",
    ]
    assert [round(i.score, 4) for i in items] == [1.0, round(2**-0.5, 4), 0.5, 0.25]


def test_short_memory_threshold_drops_old_notes(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock, half_life_days=14, threshold=0.3, cap=20)
    write(sources, clock, 1, 20, 24, 30, 200)  # 0.5**(24/14) = 0.305, 0.5**(30/14) = 0.226
    assert [i.text for i in sources.short_memory("alice")] == [
        "note aged 1 days",
        "note aged 20 days",
        "note aged 24 days",
    ]
    assert len(sources.short_memory("alice", threshold=0.01)) == 4  # 200 days: 5e-5
    assert len(sources.short_memory("alice", threshold=1e-5)) == 5
    with pytest.raises(ValueError, match="threshold"):
        sources.short_memory("alice", threshold=0)


def test_short_memory_cap_and_limit(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock, half_life_days=14, threshold=0.1, cap=3)
    write(sources, clock, 5, 4, 3, 2, 1)
    assert [i.text for i in sources.short_memory("alice")] == [
        "note aged 1 days",
        "note aged 2 days",
        "note aged 3 days",
    ]
    assert len(sources.short_memory("alice", limit=5)) == 5
    assert sources.short_memory("alice", limit=0) == []


def test_short_memory_moves_with_the_clock_and_now(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock, half_life_days=1, threshold=0.5, cap=20)
    sources.remember("alice", "fresh")
    assert [i.score for i in sources.short_memory("alice")] == [1.0]
    clock.advance(timedelta(hours=23))
    assert len(sources.short_memory("alice")) == 1
    clock.advance(timedelta(hours=2))
    assert sources.short_memory("alice") == []
    # An explicit `now` replays the past; notes written after it are not visible yet.
    assert len(sources.short_memory("alice", now=START + timedelta(hours=1))) == 1
    assert sources.short_memory("alice", now=START - timedelta(hours=1)) == []


def test_short_memory_ties_are_newest_first_and_per_user(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock)
    first = sources.remember("alice", "same instant A")
    second = sources.remember("alice", "same instant B")
    sources.remember("bob", "bob's note")
    clock.advance(timedelta(seconds=1))
    newest = sources.remember("alice", "a second later")
    items = sources.short_memory("alice")
    assert items[0].iri == newest.iri
    assert {i.iri for i in items[1:]} == {first.iri, second.iri}
    assert items[1].score == items[2].score
    assert all("bob" not in i.text for i in items)


def test_short_memory_only_returns_short_notes(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    from kgmem.memory.source_inputs import MessageIn

    sources = make(store, queries, clock)
    sources.ingest_message("alice", MessageIn(chat="c", turn=0, role="user", text="hello"))
    assert sources.short_memory("alice") == []
    note = sources.remember("alice", "remember me", chat="c")
    assert [(i.iri, i.chat) for i in sources.short_memory("alice")] == [(note.iri, "c")]


def test_remember_validates_text(
    store: OxigraphStore, queries: QueryRegistry, clock: FixedClock
) -> None:
    sources = make(store, queries, clock)
    with pytest.raises(ValidationError) as raised:
        sources.remember("alice", "   ")
    assert raised.value.errors()[0]["loc"] == ("text",)
    assert store.count() == 0


def test_policy_from_settings(home: Path) -> None:
    settings = load_settings(
        env={
            "KGMEM_HOME": str(home),
            "KGMEM_SHORT_MEMORY_THRESHOLD": "0.2",
            "KGMEM_SHORT_MEMORY_CAP": "5",
            "KGMEM_SHORT_MEMORY_HALF_LIFE_DAYS": "7",
        }
    )
    assert ShortMemoryPolicy.from_settings(settings) == ShortMemoryPolicy(7.0, 0.2, 5)
    defaults = ShortMemoryPolicy.from_settings(load_settings(env={"KGMEM_HOME": str(home)}))
    assert defaults == ShortMemoryPolicy(14.0, 0.1, 20)
    with pytest.raises(ValueError, match="threshold"):
        ShortMemoryPolicy(threshold=1.5)
