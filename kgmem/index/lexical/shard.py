"""One user's BM25 documents in memory: postings, length norms, a timeline, the chats as a
whole (:mod:`kgmem.index.lexical.chats`), names and what each document is about (and its
vector, with the embedding extra).

:class:`~kgmem.index.lexical.LexicalIndex` holds one :class:`Shard` per user and is the only
caller; nothing here reads the store.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
import itertools
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

import numpy as np

from kgmem.index.dense import DenseVectors, Embedder, embed_text
from kgmem.index.lexical.arrays import (
    Floats,
    Ints,
    Postings,
    Slots,
    bm25,
    length_norms,
    strings,
)
from kgmem.index.lexical.chats import Conversations
from kgmem.index.lexical.docs import LexicalDoc, analyze
from kgmem.index.lexical.facts import Fact
from kgmem.index.lexical.held import HeldDocs
from kgmem.index.lexical.scores import Scores

__all__ = ["Dated", "Periods", "Shard", "Timeline"]

Dated = tuple[int, str]  # a document's moment or start (POSIX microseconds) and its id

_INSERTS = 256  # timeline additions put in one by one; more: merged by a sort
_DEAD = 1024  # compact a shard's slots once more than this many (and than live ones) are dead
_FIRSTS = 4096  # entities whose first documents are kept
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_LOW, _HIGH = -(2**62), 2**62  # an open end of a validity period


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
        self.postings.add(self.slots.add(doc.id, length, _fact(doc)), counts)
        self.total += length
        if doc.moment is not None:
            self.timeline.add(_micros(doc.moment, 0), doc.id)
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
            self.timeline.remove(_micros(doc.moment, 0), doc_id)
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
        low = bisect.bisect_left(moments, _micros(start, 0))
        high = bisect.bisect_left(moments, _micros(end, 0))
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


class Timeline:
    """The documents with a moment, by moment (microseconds) then id: two lists in step,
    not a pair per document (thousands of objects made at each load). Changes wait until
    the timeline is next read, then go in together: a rebuild adds a million documents in
    no order of time, and inserting each into the middle of the lists moved half of them
    (quadratic: minutes of a 1M-memory rebuild). A refresh removes and adds back each
    document it reads, mostly at the same moment: the pairs cancel and the lists are not
    touched (a removal from the middle of a million moves 8 MB: 0.5 ms, inside the commit)."""

    def __init__(self) -> None:
        self._moments: list[int] = []
        self._ids: list[str] = []
        self._added: list[Dated] = []
        self._removed: set[Dated] = set()

    def __getstate__(self) -> dict[str, object]:
        return {"moments": array("q", self.moments).tobytes(), "ids": self.ids}

    def __setstate__(self, state: dict[str, object]) -> None:
        match state:
            case {"moments": bytes() as moments, "ids": list() as ids}:
                pass
            case _:
                raise TypeError("not a shard's timeline")
        at = array("q")
        at.frombytes(moments)
        if len(at) != len(ids) or not strings(ids):
            raise ValueError("a shard's timeline does not add up")
        self._moments, self._ids, self._added, self._removed = at.tolist(), ids, [], set()

    @property
    def moments(self) -> list[int]:
        self._settle()
        return self._moments

    @property
    def ids(self) -> list[str]:
        self._settle()
        return self._ids

    def add(self, moment: int, doc_id: str) -> None:
        if (moment, doc_id) in self._removed:
            self._removed.discard((moment, doc_id))  # removed and added back: still there
        else:
            self._added.append((moment, doc_id))

    def remove(self, moment: int, doc_id: str) -> None:
        at = self._at(moment, doc_id)
        if at < len(self._ids) and self._ids[at] == doc_id and self._moments[at] == moment:
            self._removed.add((moment, doc_id))  # stored: taken out at the next read
        else:
            with contextlib.suppress(ValueError):
                self._added.remove((moment, doc_id))  # still waiting (a rebuild removes few)

    def _at(self, moment: int, doc_id: str) -> int:
        low = bisect.bisect_left(self._moments, moment)
        high = bisect.bisect_right(self._moments, moment, low)
        return bisect.bisect_left(self._ids, doc_id, low, high)

    def _settle(self) -> None:
        """Put the waiting changes in place: removals (of stored documents) then additions,
        a few one by one, many by one pass (a sort of two runs already in order, which
        Python's sort merges in linear time)."""
        added, self._added, removed, self._removed = self._added, [], self._removed, set()
        if len(removed) > _INSERTS:
            kept = [
                (moment, doc_id)
                for moment, doc_id in zip(self._moments, self._ids, strict=True)
                if (moment, doc_id) not in removed
            ]
            self._moments = [moment for moment, _ in kept]
            self._ids = [doc_id for _, doc_id in kept]
        else:
            for moment, doc_id in removed:
                at = self._at(moment, doc_id)
                del self._moments[at], self._ids[at]
        if len(added) <= _INSERTS:
            for moment, doc_id in added:
                at = self._at(moment, doc_id)
                self._moments.insert(at, moment)
                self._ids.insert(at, doc_id)
        else:
            added.sort()
            merged = sorted([*zip(self._moments, self._ids, strict=True), *added])
            self._moments = [moment for moment, _ in merged]
            self._ids = [doc_id for _, doc_id in merged]


class Periods:
    """The documents with a validity period and no moment: which meet a range, vectorized
    (a user may have thousands of them)."""

    def __init__(self) -> None:
        self._spans: dict[str, tuple[int, int]] = {}  # doc id -> [from, until) in microseconds
        self._arrays: tuple[list[str], Ints, Ints] | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_arrays": None}

    def add(self, doc_id: str, start: datetime | None, end: datetime | None) -> None:
        self._spans[doc_id] = (_micros(start, _LOW), _micros(end, _HIGH))
        self._arrays = None

    def remove(self, doc_id: str) -> None:
        if self._spans.pop(doc_id, None) is not None:
            self._arrays = None

    def meeting(self, start: datetime, end: datetime, latest: int | None = None) -> list[Dated]:
        """The periods meeting [start, end), each with its start (a period with none: the
        epoch, 0); ``latest``: at most about so many, those starting latest."""
        if self._arrays is None:
            ids = list(self._spans)
            spans = np.array([self._spans[i] for i in ids], dtype=np.int64).reshape(-1, 2)
            self._arrays = (ids, spans[:, 0].copy(), spans[:, 1].copy())
        ids, starts, ends = self._arrays
        hits = np.flatnonzero((starts < _micros(end, _HIGH)) & (ends > _micros(start, _LOW)))
        if latest is not None and hits.size > latest:
            keys = np.where(starts[hits] == _LOW, 0, starts[hits])  # no start: the epoch
            cut = np.partition(keys, hits.size - latest)[hits.size - latest]
            hits = hits[keys >= cut]
        keys = np.where(starts[hits] == _LOW, 0, starts[hits]).tolist()
        return [(key, ids[i]) for key, i in zip(keys, hits.tolist(), strict=True)]


def _fact(doc: LexicalDoc) -> Fact:
    """What ranking and filters need of ``doc`` (:mod:`kgmem.index.lexical.facts`)."""
    decays = doc.memory_kind is not None and doc.status is not None and doc.recorded_at is not None
    return Fact(
        form=(doc.kind, doc.memory_kind, doc.status),
        chats=doc.chats,
        pinned=doc.pinned,
        states=doc.states_time,
        decays=decays,
        use=doc.use_count,
        confidence=doc.confidence,
        strength=doc.strength,
        recorded=doc.recorded_at,
        used=doc.last_used_at,
        occurred=doc.occurred_at,
    )


def _micros(at: datetime | None, default: int) -> int:
    return default if at is None else (at - _EPOCH) // _MICROSECOND
