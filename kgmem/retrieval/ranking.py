"""How search fuses BM25 with what kgmem knows about each document, and says why.

    score = relevance x prior x temporal

- relevance: BM25 divided by the best BM25 among the candidates (0..1], so it keeps the order
  of clearly different matches and a document that does not match never appears; with the
  embedding extra, the 50 documents nearest the query in meaning (cosine >= 0.3) are
  candidates too, with w_meaning x cosine x the best BM25 added before dividing;
- prior = (1 + w_recency*recency + w_strength*strength + w_usage*usage
  + w_confidence*(confidence - 0.5) + w_pinned*pinned) x standing, each signal in 0..1:
  recency halves every 30 days since the latest of recorded, last used and occurred; strength
  is the memory's current (decayed) strength over 2; usage is log(1 + uses) / log(11), capped
  at 1. Pages and notes take a fresh memory's values (strength 1, confidence 0.8) so they are
  not penalized. standing is (1 - w_unaccepted) for a memory the gate has not accepted
  (proposed, pending review, quarantined: what only a caller asking for those statuses sees),
  else 1: between a checked memory and an unchecked one that match alike, the checked one
  comes first (an agent's own prose, pending, restates what the user said at length);
- temporal: 1.5 when the query names a period the document falls in, else 1;
- context = (1 + w_named*named) x (1 + w_conversation*conversation) x (1 + w_when*when):
  named when the query names an entity the memory is about (by a word of its name or
  alias), conversation the BM25 of the query against the whole chat the memory quotes,
  relative to the best chat (0..1: "which conversation is this about"), when 1 if the query
  asks when and the memory's own text says when ("yesterday", "last Friday", "2023");
  a memory not about a named entity but about one linked to it in the graph (one hop:
  a relation or a shared memory) takes (1 + w_related) in place of the named factor;
- interrogative: (1 - w_question) for a memory that is itself a question ("Did you make
  it?") when the query is one: a question rarely answers another.

The prior of an accepted memory spans about 0.9..2.0: it reorders near-equal matches by how
useful the memory has been, but a pinned, much-cited memory that barely matches cannot bury one
that matches well.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kgmem.index.lexical import LexicalDoc, analyze
from kgmem.index.lexical.facts import ANY_FORM, CHATS, Form
from kgmem.memory.model import MemoryStatus
from kgmem.memory.strength import StrengthPolicy
from kgmem.retrieval.temporal import TimeCue

__all__ = [
    "Priors",
    "QueryContext",
    "RankWeights",
    "context",
    "context_reasons",
    "explain_match",
    "prior_reasons",
    "temporal",
    "temporal_bounds",
]

_DAY = 86400.0
_UNACCEPTED = frozenset(
    s.value for s in (MemoryStatus.PROPOSED, MemoryStatus.PENDING, MemoryStatus.QUARANTINED)
)
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class RankWeights:
    recency: float = 0.20
    strength: float = 0.20
    usage: float = 0.25
    confidence: float = 0.20
    pinned: float = 0.25
    temporal: float = 1.5
    named: float = 0.35
    conversation: float = 1.0
    when: float = 0.5
    question: float = 0.2
    related: float = 0.25
    unaccepted: float = 0.4  # a memory not accepted (yet) weighs 1 - this
    meaning: float = 0.25  # dense vectors, with the embedding extra only
    recency_half_life_days: float = 30.0
    fresh_confidence: float = 0.8  # what pages and notes count as

    @property
    def ceiling(self) -> float:
        """The largest prior any document can have (an accepted one's)."""
        top = self.recency + self.strength + self.usage + self.pinned
        return 1 + top + self.confidence * 0.5


@dataclass(frozen=True)
class QueryContext:
    """What the ranking knows of the query beyond its words' BM25."""

    terms: frozenset[str]  # the query's index terms
    chats: Mapping[str, float]  # chat -> how well the whole chat matches (0..1]
    asks_when: bool
    is_question: bool = False
    related: frozenset[str] = frozenset()  # entities linked to those the query names
    names: bool = False  # a query term is a word of the name of an entity of the user

    def ceiling(self, weights: RankWeights) -> float:
        """The largest context factor any document can have for this query: the search
        stops walking candidates once none can reach the k-th best score."""
        entity = max(weights.named if self.names else 0.0, weights.related if self.related else 0.0)
        chats = weights.conversation if self.chats else 0.0
        return (1 + entity) * (1 + chats) * (1 + (weights.when if self.asks_when else 0.0))

    def bounds(self, rows: NDArray[Any], chats: Sequence[str], weights: RankWeights) -> Floats:
        """An upper bound of the context factor of the documents of these facts ``rows``
        (:mod:`kgmem.index.lexical.facts`; ``chats``: their chat codes' table): the chat
        and "says when" factors as :func:`context` has them, the entity factor at its most."""
        entity = max(weights.named if self.names else 0.0, weights.related if self.related else 0.0)
        most = 1.0 if self.chats else 0.0  # a document quoting several chats: at most 1
        found = self.chats.get
        matched = [
            found(chats[c], 0.0) if c >= 0 else most if c == CHATS else 0.0
            for c in rows["chat"].tolist()
        ]
        chat = 1 + weights.conversation * np.array(matched, dtype=np.float64)
        when = np.where(rows["states"].astype(bool) & self.asks_when, 1 + weights.when, 1.0)
        return np.asarray((1 + entity) * chat * when, dtype=np.float64)


class Priors:
    """The prior of each document (see the module docstring), with what does not depend on
    the time of the query worked out once per document version: a search walks hundreds of
    candidates and the same documents come back query after query. Only numbers are kept,
    under the document object's identity (checked through a weak reference), so the memo
    holds no memory's content or id: a forgotten memory leaves nothing here."""

    def __init__(
        self, policy: StrengthPolicy, weights: RankWeights, *, capacity: int = 50_000
    ) -> None:
        self._policy, self._weights, self._capacity = policy, weights, capacity
        self._kept: dict[int, tuple[weakref.ref[LexicalDoc], _Constants]] = {}

    def __call__(self, doc: LexicalDoc, now: datetime) -> float:
        """The multiplier of ``doc``'s relevance at ``now``."""
        found = self._kept.get(id(doc))
        if found is None or found[0]() is not doc:  # a refreshed document is a new object
            if len(self._kept) >= self._capacity:
                self._kept.clear()
            found = self._kept[id(doc)] = (weakref.ref(doc), self._constants(doc))
        fixed, times, strength, pinned, idle_from, standing = found[1]
        weights, at = self._weights, now.timestamp()
        latest = max((t for t in times if t <= at), default=None)
        recency = (
            0.0
            if latest is None
            else 0.5 ** ((at - latest) / _DAY / weights.recency_half_life_days)
        )
        current = (
            1.0 if idle_from is None else self._policy.decayed(strength, pinned, at - idle_from)
        )
        prior = fixed + weights.recency * recency + weights.strength * min(current / 2.0, 1.0)
        return prior * standing

    def standing(self, status: str | None) -> float:
        """What a document of ``status`` weighs (see the module docstring)."""
        return 1 - self._weights.unaccepted if status in _UNACCEPTED else 1.0

    def bounds(self, rows: NDArray[Any], now: datetime, forms: Sequence[Form] = ()) -> Floats:
        """The prior at ``now`` of the documents of these facts ``rows``
        (:mod:`kgmem.index.lexical.facts`; ``forms``: their forms' table, for the status),
        as :meth:`__call__` gives it, over columns; a hair above it (1e-9), so that float
        rounding never makes it a lower bound. A row whose form is not in ``forms`` counts
        as accepted: the most it can weigh."""
        weights, at = self._weights, now.timestamp()
        pinned = rows["pinned"].astype(bool)
        usage = np.minimum(np.log1p(rows["use"]) / math.log(11), 1.0)
        confidence = np.where(
            np.isnan(rows["confidence"]), weights.fresh_confidence, rows["confidence"]
        )
        fixed = 1 + weights.usage * usage + weights.confidence * (confidence - 0.5)
        fixed = fixed + weights.pinned * pinned
        times = np.stack([rows["recorded"], rows["used"], rows["occurred"]])
        latest = np.where(times <= at, times, -np.inf).max(axis=0)  # NaN (none) is not <= at
        with np.errstate(over="ignore", invalid="ignore"):
            recency = np.where(
                np.isfinite(latest),
                0.5 ** ((at - latest) / _DAY / weights.recency_half_life_days),
                0.0,
            )
            stored = np.where(np.isnan(rows["strength"]), 1.0, rows["strength"])
            since = np.where(np.isnan(rows["used"]), rows["recorded"], rows["used"])
            idle = np.maximum((at - since) / 86400, 0.0)
            decayed = np.where(
                pinned,
                np.maximum(stored, 1.0),
                stored * 0.5 ** (idle / self._policy.half_life_days),
            )
        current = np.where(rows["decays"].astype(bool), decayed, 1.0)
        prior = fixed + weights.recency * recency + weights.strength * np.minimum(current / 2, 1.0)
        table = np.array([self.standing(form[2]) for form in forms] + [1.0], dtype=np.float64)
        codes = rows["form"].astype(np.int64)
        standing = table[np.where((codes == ANY_FORM) | (codes >= len(forms)), len(forms), codes)]
        return np.asarray(prior * standing * (1 + 1e-9), dtype=np.float64)

    def _constants(self, doc: LexicalDoc) -> _Constants:
        weights = self._weights
        usage = min(math.log1p(doc.use_count) / math.log(11), 1.0)
        confidence = doc.confidence if doc.confidence is not None else weights.fresh_confidence
        fixed = 1 + (
            weights.usage * usage
            + weights.confidence * (confidence - 0.5)
            + weights.pinned * doc.pinned
        )
        times = tuple(
            t.timestamp() for t in (doc.recorded_at, doc.last_used_at, doc.occurred_at) if t
        )
        standing = self.standing(doc.status)
        if doc.memory_kind is None or doc.status is None or doc.recorded_at is None:
            return fixed, times, 1.0, False, None, standing  # pages and notes: a fresh memory
        since = doc.last_used_at or doc.recorded_at
        strength = 1.0 if doc.strength is None else doc.strength
        return fixed, times, strength, doc.pinned, since.timestamp(), standing


# (usage, confidence and pinned terms + 1; recorded/used/occurred times; stored strength;
# pinned; when idleness started, None for pages and notes; standing)
_Constants = tuple[float, tuple[float, ...], float, bool, float | None, float]


def prior_reasons(doc: LexicalDoc, now: datetime) -> list[str]:
    """The signals of ``doc``'s prior worth telling the caller."""
    why: list[str] = []
    if doc.pinned:
        why.append("pinned")
    if doc.last_used_at is not None and (now - doc.last_used_at).total_seconds() < 7 * _DAY:
        why.append("recently used")
    if doc.use_count:
        why.append(f"cited {doc.use_count} time{'s' if doc.use_count != 1 else ''}")
    if doc.confidence is not None and doc.confidence < 0.5:
        why.append(f"low confidence ({doc.confidence:.2f})")
    return why


def temporal(doc: LexicalDoc, cue: TimeCue | None, weights: RankWeights) -> tuple[float, str]:
    """The temporal factor of ``doc`` for the query's cue, and the reason when it applies."""
    if cue is None or not doc.overlaps(cue.start, cue.end):
        return 1.0, ""
    verb = "happened" if doc.occurred_at else "held" if doc.valid_from else "recorded"
    return weights.temporal, f"{verb} {cue.text}"


def temporal_bounds(rows: NDArray[Any], cue: TimeCue | None, weights: RankWeights) -> Floats:
    """An upper bound of :func:`temporal` of the documents of these facts ``rows``: exact
    where the row tells the document's moment (it happened at a time, or was recorded and
    has no validity period), the factor at its most where it does not (a period, which the
    row does not hold, or no time at all, which meets every cue). The cue is widened by a
    millisecond: times in the rows are float seconds, and rounding must never exclude."""
    most = max(weights.temporal, 1.0) if cue is not None else 1.0
    if cue is None or most == 1.0:
        return np.full(len(rows), most)
    occurred, recorded = rows["occurred"], rows["recorded"]
    happened = ~np.isnan(occurred)
    moment = np.where(happened, occurred, recorded)
    known = happened | (~rows["period"].astype(bool) & ~np.isnan(recorded))
    start, end = cue.start.timestamp() - 1e-3, cue.end.timestamp() + 1e-3
    inside = (moment >= start) & (moment < end)
    return np.where(known & ~inside, min(weights.temporal, 1.0), most)


def context(doc: LexicalDoc, query: QueryContext, weights: RankWeights) -> float:
    """The context factor of ``doc`` for ``query`` (see the module docstring)."""
    factor = 1.0
    if doc.names and not doc.names.isdisjoint(query.terms):
        factor *= 1 + weights.named
    elif query.related and not query.related.isdisjoint(doc.about):
        factor *= 1 + weights.related
    if doc.chats:
        chat = max(query.chats.get(c, 0.0) for c in doc.chats)
        factor *= 1 + weights.conversation * chat
    if query.asks_when and doc.states_time:
        factor *= 1 + weights.when
    if query.is_question and doc.asks:
        factor *= 1 - weights.question
    return factor


def context_reasons(doc: LexicalDoc, query: QueryContext) -> list[str]:
    """Why :func:`context` raised ``doc`` ("matched ... in context" says the chat already)."""
    why: list[str] = []
    if doc.names and not doc.names.isdisjoint(query.terms):
        why.append("about what the query names")
    elif query.related and not query.related.isdisjoint(doc.about):
        why.append("about something linked to what the query names")
    if query.asks_when and doc.states_time:
        why.append("says when")
    return why


def explain_match(doc: LexicalDoc, words: dict[str, str], limit: int = 4) -> list[str]:
    """``matched 'acme' in title``: which query words (by their stems) each field holds."""
    out: list[str] = []
    for name, text in doc.fields:
        found = dict.fromkeys(words[t] for t in analyze(text[:20000]) if t in words)
        if found and len(out) < limit:
            out.append(f"matched {', '.join(repr(w) for w in found)} in {name}")
    return out
