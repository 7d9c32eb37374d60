"""memory_search: one user's memories, pages and external notes for a query, ranked and explained.

Candidates are every document the lexical index matches (plus, when the query names a time,
the documents of that period), filtered on what the index carries, and ranked by
:mod:`kgmem.retrieval.ranking` in BM25 order until no further one can reach the top k. Before
a hit is returned its status is checked against the store, so a projection that missed a
change can never show an archived memory: the stale document is refreshed and the search
runs again.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.index.lexical import STOPWORDS, LexicalDoc, LexicalIndex, Scores, stem, words
from kgmem.index.lexical.facts import FactsView
from kgmem.memory.entities import name_key
from kgmem.memory.lifecycle import Lifecycle
from kgmem.memory.model import MemoryStatus
from kgmem.memory.notes import is_short_note, taken_notes
from kgmem.memory.strength import StrengthPolicy
from kgmem.retrieval.cite import Citation, cite
from kgmem.retrieval.errors import InvalidSearch
from kgmem.retrieval.filters import SearchFilters, TimeRange, check_entity
from kgmem.retrieval.ranking import (
    Priors,
    QueryContext,
    RankWeights,
    context,
    context_reasons,
    explain_match,
    prior_reasons,
    temporal,
    temporal_bounds,
)
from kgmem.retrieval.temporal import TimeCue, asks_when, find_time_cue, is_question
from kgmem.store import QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF

__all__ = ["MemorySearch", "SearchHit"]

_FILL = 0.25  # the relevance of an unmatched document that falls in the query's period
_PERIOD = 200  # at most so many of them
_SPARE = 4  # ranked past k, for hits the store shows to be stale
_MEANING, _MIN_COSINE = 50, 0.3  # dense candidates per query, and the least cosine kept
# graph expansion: entities the query names expanded from, neighbours (and docs) each. One
# entity: LoCoMo and LongMemEval recall the same with one (0.7603 and 0.944/0.873) as with
# three (0.7600, 0.944/0.873) when each was a Kùzu read; from the index, 0.7600 and
# 0.944/0.873 (the same neighbours for all 20 LoCoMo entities)
_NAMED, _NEAR = 1, 50
# an entity more documents are about than this is not expanded from: its neighbours (20k for a
# city at a million memories) say nothing of the query, and reading them took 30-40 ms
_HUB = 1000


@dataclass(frozen=True)
class SearchHit:
    """One result: what it is, where it is (``path`` for pages and notes), why it ranked."""

    id: str
    kind: str  # "memory" | "page" | "note"
    title: str
    excerpt: str
    score: float
    why: tuple[str, ...]
    path: str | None = None
    memory_kind: str | None = None
    status: str | None = None
    consolidated: bool | None = None  # a short note: whether a consolidation pass took it


class MemorySearch:
    """The agent tools ``memory_search`` and ``memory_cite`` over a :class:`LexicalIndex`."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        index: LexicalIndex,
        clock: Clock,
        lifecycle: Lifecycle,
        *,
        strength: StrengthPolicy | None = None,
        weights: RankWeights | None = None,
        max_query_chars: int = 2000,
        max_k: int = 100,
        before_read: Callable[[str], object] | None = None,
        expand: bool = False,
        max_candidates: int = 500,
        files: Callable[[str, str, str], str] | None = None,
    ) -> None:
        """``before_read(uid)`` runs before each search and citation (a benchmark drains the
        change feed there). The server passes none: each commit brings the lexical index up
        to date before it is acknowledged (the feed's eager target), so a search reads every
        write acknowledged before it without waiting for a write under way. ``expand``:
        rank what the entities a query names are linked to (graph expansion, the server's
        search; off for an ablation). ``files(uid, kind, path)``: where the file of a page
        or note hit is (its absolute path in the user's vault)."""
        self._store, self._queries, self._index = store, queries, index
        self._clock, self._lifecycle = clock, lifecycle
        self._strength = strength or StrengthPolicy()
        self._weights = weights or RankWeights()
        self._priors = Priors(self._strength, self._weights)
        self._max_chars, self._max_k = max_query_chars, max_k
        self._before_read = before_read
        self._expand = expand
        self._walk = max_candidates
        self._files = files

    def memory_search(
        self,
        uid: str,
        query: str,
        k: int = 8,
        *,
        kinds: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        entity: str | None = None,
        time_range: TimeRange | None = None,
        statuses: Iterable[str] | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best memories, pages and notes of ``uid`` for ``query``, best first.

        Only active memories (and pages and notes) unless ``statuses`` names others; ``kinds``
        takes memory kinds and ``memory``/``page``/``note``; every given tag must be present;
        ``entity`` is an entity IRI or name the memory is about; ``time_range`` is [start, end)
        (empty, so nothing is found, when end is not after start).
        """
        UserGraphs(uid)  # a malformed uid is a GraphNameError before anything is read
        text, k = self._check_query(query), self._check_k(k)
        if self._before_read is not None:
            self._before_read(uid)
        filters = SearchFilters.of(kinds, tags, time_range, statuses)
        if entity is not None:
            filters = replace(filters, entities=self._entities(uid, check_entity(entity)))
        if filters.empty:
            return []
        now = self._clock.now()  # one instant for the whole search
        cue = find_time_cue(text, now)
        lexical = text if cue is None else text[: cue.span[0]] + " " + text[cue.span[1] :]
        stems = _stems(lexical)
        asked = QueryContext(
            frozenset(stems),
            self._index.chat_scores(uid, stems),
            asks_when(text),
            is_question(text),
            self._related(uid, frozenset(stems)),
            self._index.names_any(uid, stems),
        )
        for _ in range(2):  # once more if the store showed the index a stale document
            hits, stale = self._search(uid, lexical, stems, asked, filters, cue, k, now)
            if stale:
                self._index.refresh(uid, stale)
            else:
                break
        return self._mark_notes(uid, hits)

    def memory_cite(self, uid: str, id: str) -> Citation:
        """The agent used memory or page ``id``: its use count (and a memory's strength and
        last use) go up in the store, and the index follows, so ranking changes."""
        if self._before_read is not None:
            self._before_read(UserGraphs(uid).uid)
        return cite(self._store, self._index, self._lifecycle, uid, id)

    def _mark_notes(self, uid: str, hits: list[SearchHit]) -> list[SearchHit]:
        """Say of each short note whether consolidation has taken it: one not taken is only
        what the agent wrote, not yet checked into memories."""
        notes = [h.id for h in hits if h.kind == "note" and is_short_note(uid, h.id)]
        if not notes:
            return hits
        taken = taken_notes(self._store, uid, notes)
        return [
            h
            if h.id not in notes
            else replace(
                h,
                consolidated=h.id in taken,
                why=h.why if h.id in taken else (*h.why, "a short note, not yet consolidated"),
            )
            for h in hits
        ]

    # -- arguments -----------------------------------------------------------------------

    def _check_query(self, query: object) -> str:
        if not isinstance(query, str):
            raise InvalidSearch("query", type(query).__name__, "the query is a string")
        if len(query) > self._max_chars:
            raise InvalidSearch("query", query, f"at most {self._max_chars} characters")
        if not query.strip():
            raise InvalidSearch("query", query, "the query is empty")
        return query.strip()

    def _check_k(self, k: object) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self._max_k:
            raise InvalidSearch("k", k, f"k is a whole number from 1 to {self._max_k}")
        return k

    def _entities(self, uid: str, entity: str) -> frozenset[str]:
        """The entities ``entity`` (an IRI or a name) denotes; an IRI that is none of this
        user's denotes nothing, as a name no entity has does (so nothing is found, and
        nothing tells whether it is someone else's)."""
        graphs = UserGraphs(uid)
        if "://" in entity or entity.startswith("urn:"):
            return frozenset({entity}) if entity.startswith(graphs.node_base) else frozenset()
        query = self._queries["memory/entities_by_key"]
        rows = self._store.select(query, {"graph": graphs.kg, "key": Literal(name_key(entity))})
        return frozenset(str(row["entity"]) for row in rows)

    def _related(self, uid: str, terms: frozenset[str]) -> frozenset[str]:
        """Graph expansion: the entities one hop from those the query names (at most
        ``_NAMED`` of them, the best documented first, none a hub), read from the search
        index, which every acknowledged write has reached (the graph projection follows a
        drain behind, and its cold reads cost a first search 6-49 ms at 1M memories)."""
        if not self._expand or not terms:
            return frozenset()
        named = self._index.named_entities(uid, terms, most=_HUB)[:_NAMED]
        near = {n for entity in named for n in self._index.neighbours(uid, entity, _NEAR)}
        return frozenset(near - set(named))

    # -- ranking -------------------------------------------------------------------------

    def _search(
        self,
        uid: str,
        text: str,
        stems: dict[str, str],
        query: QueryContext,
        filters: SearchFilters,
        cue: TimeCue | None,
        k: int,
        now: datetime,
    ) -> tuple[list[SearchHit], list[str]]:
        scores = self._index.scores(uid, stems)
        floor = _FILL * (scores.best() or 1.0 / _FILL)
        meaning = self._meaning(uid, text, scores)
        if cue is not None:  # the cue's period, at a low relevance where no word matched
            # the latest of a busy period
            scores.fill(self._index.latest(uid, cue.start, cue.end, _PERIOD), floor)
        for entity in sorted(query.related):  # what the query's entities are linked to
            scores.fill(self._index.about(uid, entity, first=_NEAR), floor)
        # the walk reads only documents it can accept: of the entity, the kinds, the statuses
        if filters.entities is not None:
            scores.only(d for e in filters.entities for d in self._index.about(uid, e))
        scores.keep(filters.admits)
        hits: list[SearchHit] = []
        stale: list[str] = []
        for score, doc in self._rank(uid, scores, query, filters, cue, k, now):
            if len(hits) == k:
                break
            if self._live(uid, doc):
                near = [f"similar meaning ({meaning[doc.id]:.2f})"] if doc.id in meaning else []
                held = temporal(doc, cue, self._weights)[1]
                why = [*([held] if held else []), *context_reasons(doc, query)]
                why += prior_reasons(doc, now)
                path = doc.path
                if path is not None and self._files is not None:
                    path = self._files(uid, doc.kind, path)
                why = [*explain_match(doc, stems), *near, *why]
                hits.append(_hit(doc, score, tuple(why), path))
            else:
                stale.append(doc.id)
        return hits, stale

    def _meaning(self, uid: str, text: str, scores: Scores) -> dict[str, float]:
        """Dense vectors (the optional extra): the documents nearest the query in meaning
        join the candidates, with w_meaning x cosine x the best BM25 added to their score."""
        if not self._index.dense or self._weights.meaning <= 0 or not text.strip():
            return {}
        found = self._index.meaning(uid, text, _MEANING)
        near = {doc_id: cos for doc_id, cos in found.items() if cos >= _MIN_COSINE}
        top = scores.best() or 1.0
        for doc_id, cos in near.items():
            scores.add(doc_id, self._weights.meaning * cos * top)
        return near

    def _rank(
        self,
        uid: str,
        scores: Scores,
        query: QueryContext,
        filters: SearchFilters,
        cue: TimeCue | None,
        k: int,
        now: datetime,
    ) -> list[tuple[float, LexicalDoc]]:
        """Documents by final score, walking them in BM25 order and stopping once no further
        one can reach the k-th best score (the prior and temporal factors are bounded), or
        after ``max_candidates`` of them (a query of common words matches most documents)."""
        weights = self._weights
        most = max(weights.temporal, 1.0) if cue is not None else 1.0  # the temporal factor
        ceiling = weights.ceiling * most * query.ceiling(weights)
        # a candidate whose score's bound (from the index's facts) cannot reach the k-th
        # best is passed over unread; only where every candidate walked would be accepted
        # (no tag or time filter), so the walk's length counts the same documents
        facts = scores.facts
        bounded = not filters.tags and filters.start is None and filters.end is None
        best, kept = 0.0, [0.0] * (k + _SPARE)
        ranked: list[tuple[float, LexicalDoc]] = []
        walked = 0
        for chunk in scores.chunks():
            bounds: list[float] | None = None
            for n, (relevance, doc_id, _) in enumerate(chunk):
                if walked >= self._walk or (best and relevance / best * ceiling < kept[0]):
                    ranked.sort(key=lambda r: (-r[0], r[1].id))
                    return ranked
                if best and bounded and facts is not None:
                    bounds = bounds or self._bounds(chunk, facts, query, now, cue)
                    if relevance / best * bounds[n] < kept[0]:
                        walked += 1
                        continue
                doc = self._index.doc(uid, doc_id)
                if doc is None or not filters.accepts(doc):
                    continue
                best = best or relevance
                factor = temporal(doc, cue, weights)[0] if cue is not None else 1.0
                score = (
                    relevance
                    / best
                    * self._priors(doc, now)
                    * factor
                    * context(doc, query, weights)
                )
                heapq.heappushpop(kept, score)
                ranked.append((score, doc))
                walked += 1
        ranked.sort(key=lambda r: (-r[0], r[1].id))
        return ranked

    def _bounds(
        self,
        chunk: list[tuple[float, str, int]],
        facts: FactsView,
        query: QueryContext,
        now: datetime,
        cue: TimeCue | None,
    ) -> list[float]:
        """An upper bound of the factor each of ``chunk``'s documents multiplies its
        relevance by (prior x temporal x context), from the index's facts."""
        rows = facts.rows[np.array([slot for _, _, slot in chunk], dtype=np.int64)]
        prior = self._priors.bounds(rows, now, facts.forms)
        prior = prior * temporal_bounds(rows, cue, self._weights)
        return list((prior * query.bounds(rows, facts.chats, self._weights)).tolist())

    def _live(self, uid: str, doc: LexicalDoc) -> bool:
        """Whether the store still holds ``doc`` as indexed (a memory: with the same status)."""
        graphs, graph, node = UserGraphs(uid), URIRef(doc.graph), URIRef(doc.id)
        if not graphs.owns(graph) or not doc.id.startswith(graphs.node_base):
            return False
        if doc.kind == "memory" and doc.status is not None:
            wanted = MemoryStatus(doc.status).iri
            return any(q.object == wanted for q in self._store.quads(graph, node, KGM.status))
        return next(iter(self._store.quads(graph, node, RDF.type)), None) is not None


def _stems(text: str) -> dict[str, str]:
    """The query's index terms, each with the first word of the query it came from."""
    out: dict[str, str] = {}
    for word in words(text):
        if word not in STOPWORDS:
            out.setdefault(stem(word), word)
    return out


def _hit(doc: LexicalDoc, score: float, why: tuple[str, ...], path: str | None) -> SearchHit:
    if doc.kind == "memory" and doc.status != MemoryStatus.ACTIVE.value:
        why = (*why, f"status {doc.status}")
    return SearchHit(
        doc.id,
        doc.kind,
        doc.title,
        doc.excerpt,
        round(score, 6),
        why,
        path,
        doc.memory_kind,
        doc.status,
    )
