"""One user's BM25 documents in memory: postings, length norms, a timeline, the chats as a
whole (:mod:`kgmem.index.lexical.chats`), names and what each document is about (and its
vector, with the embedding extra).

:class:`~kgmem.index.lexical.LexicalIndex` holds one :class:`Shard` per user and is the only
caller; nothing here reads the store.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime

from kgmem.index.dense import DenseVectors, Embedder, embed_text
from kgmem.index.lexical.arrays import (
    Floats,
    Postings,
    Slots,
    bm25,
    length_norms,
)
from kgmem.index.lexical.chats import Conversations
from kgmem.index.lexical.docs import LexicalDoc, analyze
from kgmem.index.lexical.facts import ANY_FORM, Fact, Form
from kgmem.index.lexical.held import HeldDocs
from kgmem.index.lexical.moments import Dated, Periods, Timeline, micros
from kgmem.index.lexical.scores import Scores

__all__ = ["Shard"]

_DEAD = 1024  # compact a shard's slots once more than this many (and than live ones) are dead
_FIRSTS = 4096  # entities whose first documents are kept
_ACTIVE = ("memory", "active")  # the kind and status of the documents neighbours come through


class Shard:
    """One user's documents: postings (term -> slots and weighted tf, see
    :mod:`kgmem.index.lexical.arrays`), BM25 length norms, and a timeline of the documents
    that have a moment (the rest have a validity period)."""

    def __init__(self, weights: Mapping[str, int], embedder: Embedder | None = None) -> None:
        self.weights = weights
        self.vectors = None if embedder is None else DenseVectors(embedder)
        self.docs = HeldDocs()  # encoded: made into objects when read
        self.slots = Slots()
        self.postings = Postings()
        self.total, self.calibrated = 0, 1.0
        self._norms: tuple[int, float, Floats] | None = None  # (slots, average, norms)
        self.timeline = Timeline()
        self.periods = Periods()
        self.note_paths: dict[str, str] = {}  # note path -> the doc id of its latest revision
        self.labels: dict[str, str] = {}
        self.chats = Conversations()
        # entity -> the docs about it; as loaded a tuple (untracked by the cyclic collector,
        # where a set is walked at every full collection: 2,600 sets a 10k user), a set
        # once changed
        self.by_entity: dict[str, set[str] | tuple[str, ...]] = {}
        self._first: dict[str, dict[int, list[str]]] = {}  # entity -> n -> its first n docs
        self.names: dict[str, set[tuple[str, ...]]] = defaultdict(set)  # entity -> its names
        self.name_index: dict[str, set[str]] = defaultdict(set)  # a name's term -> entities
        self._by_name: _NameTables | None = None  # made from names when first needed
        # entity -> the name and alias texts the documents about it were indexed with
        self.entity_texts: dict[str, frozenset[str]] = {}

    def __getstate__(self) -> dict[str, object]:
        """What a saved shard holds (:mod:`kgmem.index.lexical.saved`): no caches, no vectors
        (they belong to the embedding model loaded now); who is about what as flat lists."""
        about = [(e, sorted(docs)) for e, docs in self.by_entity.items()]
        return {
            **self.__dict__,
            "vectors": None,
            "_norms": None,
            "_first": {},
            "_by_name": None,
            "by_entity": (
                [e for e, _ in about],
                array("q", itertools.accumulate(len(d) for _, d in about)).tobytes(),
                [doc_id for _, docs in about for doc_id in docs],
            ),
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        match state.pop("by_entity", None):
            case (list() as entities, bytes() as ends, list() as docs):
                pass
            case _:
                raise TypeError("not a shard")
        self._by_name = None
        self.__dict__.update(state)
        stops = array("q")
        stops.frombytes(ends)
        if len(stops) != len(entities) or (stops and stops[-1] != len(docs)):
            raise ValueError("a shard's entities do not add up")
        starts = itertools.chain((0,), stops)
        self.by_entity = {
            e: tuple(docs[a:b]) for e, a, b in zip(entities, starts, stops, strict=False)
        }

    def embed_all(self, embedder: Embedder) -> None:
        """Give every document its vector (a saved shard has none)."""
        self.vectors = DenseVectors(embedder)
        for doc in self.docs.values():
            self.vectors.add(doc.id, embed_text(doc.fields))
        self.vectors.embed_pending()

    def add(self, doc: LexicalDoc) -> None:
        self.remove(doc.id)
        counts = doc.terms(self.weights)
        self.docs[doc.id] = doc
        length = sum(counts.values())
        self.postings.add(self.slots.add(doc.id, length, _fact(doc), doc.about), counts)
        self.total += length
        if doc.moment is not None:
            self.timeline.add(micros(doc.moment, 0), doc.id)
        elif doc.valid_from or doc.valid_until:
            self.periods.add(doc.id, doc.valid_from, doc.valid_until)
        if doc.kind == "note" and doc.path is not None:
            self.note_paths[doc.path] = doc.id
        self.chats.add(doc.chats, counts)
        for entity in doc.about:
            self._about(entity).add(doc.id)
            self._first.pop(entity, None)
        if self.vectors is not None:
            self.vectors.add(doc.id, embed_text(doc.fields))

    def remove(self, doc_id: str) -> LexicalDoc | None:
        doc = self.docs.pop(doc_id)
        if doc is None:
            return None
        if self.vectors is not None:
            self.vectors.remove(doc_id)
        counts = doc.terms(self.weights)
        self.chats.remove(doc.chats, counts)
        for entity in doc.about:
            about = self._about(entity)
            about.discard(doc.id)
            self._first.pop(entity, None)
            if not about:
                del self.by_entity[entity]
        slot = self.slots.remove(doc_id)
        self.postings.remove(counts)
        self.total -= int(self.slots.lengths[slot])
        if doc.moment is not None:
            self.timeline.remove(micros(doc.moment, 0), doc_id)
        self.periods.remove(doc_id)
        if doc.path is not None and self.note_paths.get(doc.path) == doc_id:
            del self.note_paths[doc.path]
        if self.slots.dead > max(_DEAD, len(self.docs)):
            self.postings.compact(self.slots.compact())
        return doc

    def _about(self, entity: str) -> set[str]:
        """The docs about ``entity``, as a set to change."""
        found = self.by_entity.get(entity)
        if not isinstance(found, set):
            found = self.by_entity[entity] = set(found or ())
        return found

    def calibrate(self, force: bool = False) -> None:
        """Recompute length norms when the average length drifted by more than 10%."""
        average = self.total / len(self.docs) if self.docs else 1.0
        if force or abs(average - self.calibrated) > 0.1 * self.calibrated:
            self.calibrated = max(average, 1.0)

    def norms(self) -> Floats:
        """BM25's length norm of every slot (a dead slot's is meaningless)."""
        size = len(self.slots.ids)
        if self._norms is None or self._norms[:2] != (size, self.calibrated):
            self._norms = (size, self.calibrated, length_norms(self.slots.lengths, self.calibrated))
        return self._norms[2]

    def score(self, terms: Iterable[str]) -> Scores:
        """BM25 of every doc for the analyzed ``terms`` (see :func:`bm25`)."""
        values = bm25(self.postings, terms, len(self.docs), self.norms(), self.slots.alive())
        return Scores(values, self.slots.ids, self.slots.of, self.slots.facts.view())

    def about(self, entity: str, first: int | None = None) -> list[str]:
        """The documents about ``entity`` by id; ``first``: only the first so many, kept
        until the entity's documents change (a hub is about tens of thousands)."""
        found = self.by_entity.get(entity, ())
        if first is None:
            return sorted(found)
        if entity not in self._first and len(self._first) >= _FIRSTS:
            self._first.clear()
        kept = self._first.setdefault(entity, {})
        if first not in kept:
            kept[first] = heapq.nsmallest(first, found)
        return kept[first]

    def neighbours(self, entity: str, first: int) -> list[str]:
        """The entities that active memories about ``entity`` are also about, by id, the
        first ``first``: the entities one hop from it (a fact's memory is about both its
        ends), as the graph projection links them (the same for 400 entities at 100k
        memories, where Kùzu's read took 2.3 ms, 6-49 cold at 1M). No document is read:
        each one's form is in its slot's facts and its entities beside them. Cost follows
        the documents about ``entity``: the search never asks for a hub's."""
        slots, near = self.slots, set[int]()
        view = slots.facts.view()
        forms, active = view.rows["form"], _active(view.forms)
        for doc_id in self.by_entity.get(entity, ()):
            slot = slots.of.get(doc_id)
            if slot is None:
                continue
            form = int(forms[slot])
            if form in active or (form == ANY_FORM and _is_active(self.docs.get(doc_id))):
                near.update(slots.about.of(slot))
        found = {slots.about.entities[code] for code in near}
        found.discard(entity)
        return heapq.nsmallest(first, found)

    def name(self, entity: str, name: str) -> None:
        """Remember that ``entity`` is called ``name`` (its words, analyzed)."""
        terms = tuple(analyze(name))
        if terms and terms not in self.names[entity]:
            self.names[entity].add(terms)
            for term in terms:
                self.name_index[term].add(entity)
            if self._by_name is not None:
                self._by_name.add(entity, terms)

    def named(self, terms: frozenset[str], most: int | None = None) -> list[str]:
        """The entities with a name all of whose words are among ``terms``, and which some
        document is about (``most``: at most so many documents); the most documents first.

        By name, not by entity: thousands of people share a first name, a few share a
        whole name (at 1M memories, 116k entities have 12k distinct names)."""
        if self._by_name is None:
            self._by_name = _NameTables(self.names)
        about, by_name = self.by_entity, self._by_name
        found = {
            entity
            for name in by_name.within(terms)
            for entity in by_name.entities[name]
            if entity in about and (most is None or len(about[entity]) <= most)
        }
        return sorted(found, key=lambda e: (-len(about[e]), e))

    def during(self, start: datetime, end: datetime, latest: int | None = None) -> list[Dated]:
        """The documents whose moment or validity period meets [start, end), each with its
        moment or start (POSIX microseconds; 0, the epoch, for a period with none), not
        read: those with a moment in order, then the periods. ``latest``: only that many of
        each, the latest."""
        moments, ids = self.timeline.moments, self.timeline.ids
        low = bisect.bisect_left(moments, micros(start, 0))
        high = bisect.bisect_left(moments, micros(end, 0))
        if latest is not None:
            low = max(low, high - latest)
        found = list(zip(moments[low:high], ids[low:high], strict=True))
        return found + self.periods.meeting(start, end, latest)


class _NameTables:
    """The entities by name and the names by word, for :meth:`Shard.named` (made from the
    shard's names at the first lookup and kept up after; not saved)."""

    def __init__(self, names: Mapping[str, Iterable[tuple[str, ...]]]) -> None:
        self.entities: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self._by_word: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        for entity, held in names.items():
            for name in held:
                self.add(entity, name)

    def add(self, entity: str, name: tuple[str, ...]) -> None:
        self.entities[name].add(entity)
        for word in name:
            self._by_word[word].add(name)

    def within(self, terms: frozenset[str]) -> set[tuple[str, ...]]:
        """The names all of whose words are among ``terms``."""
        return {
            name for term in terms for name in self._by_word.get(term, ()) if terms.issuperset(name)
        }


def _active(forms: Iterable[Form]) -> set[int]:
    """The codes of the forms of active memories."""
    return {code for code, (kind, _, status) in enumerate(forms) if (kind, status) == _ACTIVE}


def _is_active(doc: LexicalDoc | None) -> bool:
    return doc is not None and (doc.kind, doc.status) == _ACTIVE


def _fact(doc: LexicalDoc) -> Fact:
    """What ranking and filters need of ``doc`` (:mod:`kgmem.index.lexical.facts`)."""
    decays = doc.memory_kind is not None and doc.status is not None and doc.recorded_at is not None
    return Fact(
        form=(doc.kind, doc.memory_kind, doc.status),
        chats=doc.chats,
        pinned=doc.pinned,
        states=doc.states_time,
        decays=decays,
        period=bool(doc.valid_from or doc.valid_until),
        use=doc.use_count,
        confidence=doc.confidence,
        strength=doc.strength,
        recorded=doc.recorded_at,
        used=doc.last_used_at,
        occurred=doc.occurred_at,
    )
