"""One user's BM25 documents in memory: postings, length norms, a timeline, the chats as a
whole, names and what each document is about (and its vector, with the embedding extra).

:class:`~kgmem.index.lexical.LexicalIndex` holds one :class:`Shard` per user and is the only
caller; nothing here reads the store.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime

from kgmem.index.dense import DenseVectors, Embedder, embed_text
from kgmem.index.lexical_docs import LexicalDoc, analyze

__all__ = ["Conversations", "Shard"]

_K1, _B = 1.2, 0.75  # BM25
_COMMON = 500  # a term in more docs than this and in over half of them only re-scores


class Shard:
    """One user's documents: postings (term -> {doc id: weighted tf}), BM25 length norms, and
    a timeline of the documents that have a moment (the rest have a validity period)."""

    def __init__(self, weights: Mapping[str, int], embedder: Embedder | None = None) -> None:
        self.weights = weights
        self.vectors = None if embedder is None else DenseVectors(embedder)
        self.docs: dict[str, LexicalDoc] = {}
        self.postings: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = {}
        self.norms: dict[str, float] = {}
        self.total, self.calibrated = 0, 1.0
        self.timeline: list[tuple[datetime, str]] = []
        self.periods: set[str] = set()
        self.note_paths: dict[str, str] = {}  # note path -> the doc id of its latest revision
        self.labels: dict[str, str] = {}
        self.chats = Conversations()
        self.by_entity: dict[str, set[str]] = defaultdict(set)  # entity -> docs about it
        self.names: dict[str, set[tuple[str, ...]]] = defaultdict(set)  # entity -> its names
        self.name_index: dict[str, set[str]] = defaultdict(set)  # a name's term -> entities

    def add(self, doc: LexicalDoc) -> None:
        self.remove(doc.id)
        counts = doc.terms(self.weights)
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[doc.id] = tf
        self.docs[doc.id] = doc
        self.lengths[doc.id] = length = sum(counts.values())
        self.total += length
        self.norms[doc.id] = _K1 * (1 - _B + _B * length / self.calibrated)
        if doc.moment is not None:
            bisect.insort(self.timeline, (doc.moment, doc.id))
        elif doc.valid_from or doc.valid_until:
            self.periods.add(doc.id)
        if doc.kind == "note" and doc.path is not None:
            self.note_paths[doc.path] = doc.id
        self.chats.add(doc.chats, counts)
        for entity in doc.about:
            self.by_entity[entity].add(doc.id)
        if self.vectors is not None:
            self.vectors.add(doc.id, embed_text(doc.fields))

    def remove(self, doc_id: str) -> LexicalDoc | None:
        doc = self.docs.pop(doc_id, None)
        if doc is None:
            return None
        if self.vectors is not None:
            self.vectors.remove(doc_id)
        counts = doc.terms(self.weights)
        self.chats.remove(doc.chats, counts)
        for entity in doc.about:
            self.by_entity[entity].discard(doc.id)
            if not self.by_entity[entity]:
                del self.by_entity[entity]
        for term in counts:
            posting = self.postings[term]
            del posting[doc_id]
            if not posting:
                del self.postings[term]
        self.total -= self.lengths.pop(doc_id)
        del self.norms[doc_id]
        if doc.moment is not None:
            del self.timeline[bisect.bisect_left(self.timeline, (doc.moment, doc_id))]
        self.periods.discard(doc_id)
        if doc.path is not None and self.note_paths.get(doc.path) == doc_id:
            del self.note_paths[doc.path]
        return doc

    def calibrate(self, force: bool = False) -> None:
        """Recompute length norms when the average length drifted by more than 10%."""
        average = self.total / len(self.docs) if self.docs else 1.0
        if force or abs(average - self.calibrated) > 0.1 * self.calibrated:
            self.calibrated = max(average, 1.0)
            for doc_id, length in self.lengths.items():
                self.norms[doc_id] = _K1 * (1 - _B + _B * length / self.calibrated)

    def score(self, terms: Iterable[str]) -> dict[str, float]:
        """BM25 of every doc matching any term. A term in most docs of a large index only
        re-scores the docs rarer terms found (its weight is small and its postings long)."""
        n, postings, norms = len(self.docs), self.postings, self.norms
        present = sorted({t for t in terms if t in postings}, key=lambda t: len(postings[t]))
        acc: dict[str, float] = {}
        for i, term in enumerate(present):
            posting = postings[term]
            df = len(posting)
            weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (_K1 + 1)
            if i > 0 and acc and df > _COMMON and 2 * df > n:
                for doc_id in acc:
                    if tf := posting.get(doc_id, 0):
                        acc[doc_id] += weight * tf / (tf + norms[doc_id])
                continue
            get = acc.get
            for doc_id, tf in posting.items():
                acc[doc_id] = get(doc_id, 0.0) + weight * tf / (tf + norms[doc_id])
        return acc

    def name(self, entity: str, name: str) -> None:
        """Remember that ``entity`` is called ``name`` (its words, analyzed)."""
        terms = tuple(analyze(name))
        if terms and terms not in self.names[entity]:
            self.names[entity].add(terms)
            for term in terms:
                self.name_index[term].add(entity)

    def named(self, terms: frozenset[str]) -> list[str]:
        """The entities with a name all of whose words are among ``terms``, and which some
        document is about; the most documents first."""
        found = {
            entity
            for term in terms
            for entity in self.name_index.get(term, ())
            if entity in self.by_entity and any(set(n) <= terms for n in self.names[entity])
        }
        return sorted(found, key=lambda e: (-len(self.by_entity[e]), e))

    def during(self, start: datetime, end: datetime, latest: int | None = None) -> list[LexicalDoc]:
        low = bisect.bisect_left(self.timeline, (start, ""))
        high = bisect.bisect_left(self.timeline, (end, ""))
        if latest is not None:
            low = max(low, high - latest)
        found = [self.docs[doc_id] for _, doc_id in self.timeline[low:high]]
        return found + [d for i in self.periods if (d := self.docs[i]).overlaps(start, end)]


class Conversations:
    """BM25 over whole chats: each chat is the sum of the memories quoting its messages, so
    a query can tell which conversation it is about even when no single memory holds all
    its words. Kept incrementally (a chat may have thousands of memories)."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}
        self.lengths: dict[str, int] = defaultdict(int)
        self.members: dict[str, int] = defaultdict(int)

    def add(self, chats: Iterable[str], counts: Mapping[str, int]) -> None:
        for chat in chats:
            self.members[chat] += 1
            for term, tf in counts.items():
                posting = self.postings.setdefault(term, {})
                posting[chat] = posting.get(chat, 0) + tf
                self.lengths[chat] += tf

    def remove(self, chats: Iterable[str], counts: Mapping[str, int]) -> None:
        for chat in chats:
            for term, tf in counts.items():
                posting = self.postings[term]
                posting[chat] -= tf
                if not posting[chat]:
                    del posting[chat]
                    if not posting:
                        del self.postings[term]
                self.lengths[chat] -= tf
            self.members[chat] -= 1
            if not self.members[chat]:
                del self.members[chat], self.lengths[chat]

    def score(self, terms: Iterable[str]) -> dict[str, float]:
        """BM25 of every chat matching any of ``terms``, divided by the best (0..1]."""
        n = len(self.lengths)
        if not n:
            return {}
        average = sum(self.lengths.values()) / n
        acc: dict[str, float] = defaultdict(float)
        for term in set(terms):
            posting = self.postings.get(term, {})
            weight = math.log(1 + (n - len(posting) + 0.5) / (len(posting) + 0.5)) * (_K1 + 1)
            for chat, tf in posting.items():
                norm = _K1 * (1 - _B + _B * self.lengths[chat] / max(average, 1.0))
                acc[chat] += weight * tf / (tf + norm)
        best = max(acc.values(), default=0.0)
        return {chat: value / best for chat, value in acc.items()} if best else {}
