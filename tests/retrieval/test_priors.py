"""The ranking prior, worked out once per document version, against the documented formula
computed straight from a memory record and the strength policy."""

from __future__ import annotations

import gc
import math
import weakref
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from kgmem.index.lexical import LexicalDoc
from kgmem.index.lexical.docs import FIELD_WEIGHTS, pack
from kgmem.index.lexical.shard import Shard
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.memory.strength import StrengthPolicy
from kgmem.retrieval.ranking import (
    Priors,
    QueryContext,
    RankWeights,
    context,
    prior_reasons,
    temporal,
    temporal_bounds,
)
from kgmem.retrieval.temporal import TimeCue

NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)
POLICY, WEIGHTS = StrengthPolicy(), RankWeights()


def memory(**extra: object) -> LexicalDoc:
    fields: dict[str, object] = {
        "memory_kind": "semantic",
        "status": "active",
        "confidence": 0.9,
        "strength": 1.0,
        "recorded_at": NOW - timedelta(days=40),
    }
    fields.update(extra)
    return LexicalDoc("urn:m", "memory", "t", "urn:g", pack((("title", "t"),)), **fields)  # type: ignore[arg-type]


def expected(doc: LexicalDoc, now: datetime) -> float:
    """The module docstring's prior, with strength from a real record and the policy."""
    times = [t for t in (doc.recorded_at, doc.last_used_at, doc.occurred_at) if t and t <= now]
    age = (now - max(times)).total_seconds() / 86400 if times else math.inf
    recency = 0.5 ** (age / WEIGHTS.recency_half_life_days)
    strength = 1.0
    if doc.memory_kind is not None and doc.recorded_at is not None:
        record = MemoryRecord(
            URIRef("urn:m"),
            MemoryKind(doc.memory_kind),
            MemoryStatus(doc.status or "active"),
            "t",
            0.0,
            doc.recorded_at,
            strength=1.0 if doc.strength is None else doc.strength,
            pinned=doc.pinned,
            last_used_at=doc.last_used_at,
        )
        strength = POLICY.current(record, now)
    confidence = WEIGHTS.fresh_confidence if doc.confidence is None else doc.confidence
    # a memory the gate has not accepted weighs less, whatever else it holds
    unaccepted = doc.status in ("proposed", "pending", "quarantined")
    standing = 1 - WEIGHTS.unaccepted if unaccepted else 1.0
    return standing * (
        1
        + (
            WEIGHTS.recency * recency
            + WEIGHTS.strength * min(strength / 2, 1.0)
            + WEIGHTS.usage * min(math.log1p(doc.use_count) / math.log(11), 1.0)
            + WEIGHTS.confidence * (confidence - 0.5)
            + WEIGHTS.pinned * doc.pinned
        )
    )


@pytest.mark.parametrize(
    "doc",
    [
        memory(),
        memory(pinned=True, strength=0.4),
        memory(strength=3.5, last_used_at=NOW - timedelta(days=2), use_count=12),
        memory(occurred_at=NOW + timedelta(days=3)),  # a future moment does not count as recent
        memory(occurred_at=NOW - timedelta(hours=5), confidence=0.3),
        memory(recorded_at=NOW + timedelta(days=1)),  # nothing in the past: no recency
        memory(status="pending", use_count=3),  # an agent's prose awaiting review
        memory(status="quarantined", pinned=True),
        memory(status="archived"),  # accepted once: not weighed down
        LexicalDoc("urn:p", "page", "p", "urn:g", "", recorded_at=NOW - timedelta(days=3)),
    ],
)
def test_prior_is_the_documented_formula(doc: LexicalDoc) -> None:
    priors = Priors(POLICY, WEIGHTS)
    for now in (NOW, NOW + timedelta(days=45)):  # the same document, later: it decays
        assert priors(doc, now) == pytest.approx(expected(doc, now), rel=1e-12)


def test_a_refreshed_document_is_worked_out_again() -> None:
    priors = Priors(POLICY, WEIGHTS)
    doc = memory()
    before = priors(doc, NOW)
    cited = replace(doc, use_count=5, last_used_at=NOW - timedelta(hours=1), strength=1.1)
    after = priors(cited, NOW)
    assert after > before and after == pytest.approx(expected(cited, NOW), rel=1e-12)
    assert prior_reasons(cited, NOW) == ["recently used", "cited 5 times"]


def test_the_memo_is_bounded_and_keeps_no_document() -> None:
    priors = Priors(POLICY, WEIGHTS, capacity=10)
    docs = [replace(memory(), id=f"urn:m{n}", title=f"secret {n}") for n in range(25)]
    for doc in docs:
        assert priors(doc, NOW) == pytest.approx(expected(doc, NOW), rel=1e-12)
    assert len(priors._kept) <= 10
    gone = weakref.ref(docs[-1])
    del docs, doc
    gc.collect()
    assert gone() is None  # the memo held no reference: a forgotten memory is not kept alive
    assert "secret" not in repr(priors._kept) and "urn:m" not in repr(priors._kept)


def _rows(docs: list[LexicalDoc]) -> tuple[Any, list[str], Any]:
    """The index's facts rows of ``docs`` (as a shard holds them), its chats and forms."""
    shard = Shard(FIELD_WEIGHTS)
    for n, doc in enumerate(docs):
        shard.add(replace(doc, id=f"urn:m{n}"))
    view = shard.slots.facts.view()
    return view.rows, view.chats, view.forms


_times = st.one_of(
    st.none(),
    st.integers(-400 * 86400, 30 * 86400).map(lambda s: NOW + timedelta(seconds=s)),
)


@st.composite
def _docs(draw: st.DrawFn) -> LexicalDoc:
    page = draw(st.booleans())
    return LexicalDoc(
        "urn:m",
        "page" if page else "memory",
        "t",
        "urn:g",
        "",
        memory_kind=None if page else draw(st.sampled_from(["semantic", "episodic"])),
        status=None
        if page
        else draw(st.sampled_from(["active", "pending", "quarantined", "archived", None])),
        confidence=draw(st.one_of(st.none(), st.floats(0, 1))),
        strength=draw(st.one_of(st.none(), st.floats(0, 4))),
        pinned=draw(st.booleans()),
        use_count=draw(st.integers(0, 500)),
        recorded_at=draw(_times),
        last_used_at=draw(_times),
        occurred_at=draw(_times),
        valid_from=draw(st.one_of(st.none(), _times)),
        valid_until=draw(st.one_of(st.none(), _times)),
        chats=tuple(draw(st.lists(st.sampled_from(["c1", "c2", "c3"]), max_size=2, unique=True))),
        states_time=draw(st.booleans()),
        names=frozenset(draw(st.lists(st.sampled_from(["acm", "globex"]), max_size=2))),
        about=tuple(draw(st.lists(st.sampled_from(["urn:e1", "urn:e2"]), max_size=2))),
        asks=draw(st.booleans()),
    )


@settings(max_examples=200, deadline=None)
@given(
    docs=st.lists(_docs(), min_size=1, max_size=8),
    later=st.integers(0, 90),
    chats=st.dictionaries(st.sampled_from(["c1", "c2", "c3"]), st.floats(0.01, 1.0)),
    asks_when=st.booleans(),
    question=st.booleans(),
    names=st.booleans(),
    related=st.booleans(),
    cue=st.one_of(st.none(), st.tuples(st.integers(-400, 30), st.integers(1, 60))),
)
def test_the_bounds_from_the_index_facts_are_never_below_the_factors(
    docs: list[LexicalDoc],
    later: int,
    chats: dict[str, float],
    asks_when: bool,
    question: bool,
    names: bool,
    related: bool,
    cue: tuple[int, int] | None,
) -> None:
    """A search passes over unread a candidate whose bound cannot reach the k-th best: the
    bound must be at least the document's prior x context x temporal factor whatever it
    holds; the prior's bound is the prior itself but for the hair added for rounding, and
    the temporal one is the factor itself where the row tells the document's moment (the
    cue widened by a millisecond)."""
    period = None
    if cue is not None:  # days from NOW, in days
        start = NOW.replace(hour=0) + timedelta(days=cue[0])
        period = TimeCue(start, start + timedelta(days=cue[1]), "then", (0, 4))
    now = NOW + timedelta(days=later)
    query = QueryContext(
        frozenset({"acm"} if names else ()),
        chats,
        asks_when,
        question,
        frozenset({"urn:e2"} if related else ()),
        names,
    )
    priors = Priors(POLICY, WEIGHTS)
    rows, table, forms = _rows(docs)
    prior = priors.bounds(rows, now, forms)
    both = prior * query.bounds(rows, table, WEIGHTS)
    timed = temporal_bounds(rows, period, WEIGHTS)
    for n, doc in enumerate(docs):
        exact = priors(doc, now)
        assert exact <= prior[n] <= exact * (1 + 1e-8)
        assert exact * context(doc, query, WEIGHTS) <= both[n]
        factor = temporal(doc, period, WEIGHTS)[0]
        assert factor <= timed[n]
        told = doc.occurred_at or (not (doc.valid_from or doc.valid_until) and doc.recorded_at)
        if told and period is not None:
            edge = min(abs((told - at).total_seconds()) for at in (period.start, period.end))
            assert factor == timed[n] or edge < 1  # the cue is widened by a millisecond
