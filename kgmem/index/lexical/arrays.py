"""BM25 postings and one query's scores as arrays, so a search over 100k documents scores in
a few milliseconds instead of walking dictionaries in Python.

Each document of a shard has a *slot*, a dense integer. A term's postings are two appendable
arrays (slots, weighted term frequencies); a removed document's slot is dead and its entries
stay until the term has no live document or the shard compacts (renumbers every live slot
once as many slots are dead as are live). Scoring accumulates ``w x tf / (tf + norm)`` per
term into one array over the slots, in the same order and arithmetic as the per-document
formula, so scores are exactly the ones a dictionary walk gives.

:class:`Scores` is what a query gets back: the array with the slot map it was computed
against. The shard may change afterwards; a document added later has no score, one removed
later is skipped.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["Floats", "Ints", "Postings", "Scores", "Slots", "bm25", "length_norms"]

_K1, _B = 1.2, 0.75
_COMMON = 500  # a term in more docs than this and in over half of them only re-scores
_CHUNK = 512  # candidates sorted at a time when walking scores in descending order

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


class Slots:
    """Document ids to dense slots, with each slot's length and whether it is live."""

    def __init__(self) -> None:
        self.of: dict[str, int] = {}
        self.ids: list[str | None] = []
        self.lengths = array("d")
        self._alive = bytearray()
        self._version = 0
        self._cached: tuple[int, NDArray[np.bool_]] | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_cached": None}

    def add(self, doc_id: str, length: int) -> int:
        slot = self.of[doc_id] = len(self.ids)
        self.ids.append(doc_id)
        self.lengths.append(float(length))
        self._alive.append(1)
        self._version += 1
        return slot

    def remove(self, doc_id: str) -> int:
        slot = self.of.pop(doc_id)
        self.ids[slot] = None
        self._alive[slot] = 0
        self._version += 1
        return slot

    @property
    def dead(self) -> int:
        return len(self.ids) - len(self.of)

    def alive(self) -> NDArray[np.bool_]:
        if self._cached is None or self._cached[0] != self._version:
            self._cached = (self._version, np.frombuffer(bytes(self._alive), dtype=np.bool_))
        return self._cached[1]

    def compact(self) -> Ints:
        """Renumber the live slots from 0 in their order; returns old slot -> new (-1: dead)."""
        alive = self.alive()
        remap = np.full(len(self.ids), -1, dtype=np.int64)
        remap[alive] = np.arange(int(alive.sum()))
        live = [doc_id for doc_id in self.ids if doc_id is not None]
        self.of = {doc_id: slot for slot, doc_id in enumerate(live)}
        self.ids = list[str | None](live)
        self.lengths = array("d", np.frombuffer(self.lengths, dtype=np.float64)[alive].tobytes())
        self._alive = bytearray(b"\x01" * len(self.ids))
        self._version += 1
        return remap


class Postings:
    """term -> the slots holding it and their weighted term frequencies, appended to in
    place; ``df`` counts the live documents of each term.

    Saved as one array of every term's slots and one of their frequencies, with each term's
    end (7,600 small arrays made a 10k-document user's load 4.6 ms): a loaded shard reads
    its terms' postings as views of those two arrays, and copies one out (``_own``) only
    when a document is added to it."""

    def __init__(self) -> None:
        self.df: dict[str, int] = {}
        self._slots: dict[str, array[int]] = {}
        self._tfs: dict[str, array[float]] = {}
        self._cache: dict[str, tuple[Ints, Floats]] = {}
        # as loaded: term -> (start, end) in the two arrays below
        self._packed: dict[str, tuple[int, int]] = {}
        self._packed_slots: Ints = np.zeros(0, dtype=np.int64)
        self._packed_tfs: Floats = np.zeros(0, dtype=np.float64)

    def __getstate__(self) -> dict[str, object]:
        terms = list(self.df)
        slots = [self.arrays(t)[0] for t in terms]
        tfs = [self.arrays(t)[1] for t in terms]
        self._cache.clear()  # views taken for the dump: an append must not meet them
        ends = np.cumsum([len(a) for a in slots], dtype=np.int64)
        return {
            "terms": terms,
            "df": array("q", (self.df[t] for t in terms)).tobytes(),
            "ends": ends.tobytes(),
            "slots": np.concatenate(slots).astype(np.int64).tobytes() if slots else b"",
            "tfs": np.concatenate(tfs).astype(np.float64).tobytes() if tfs else b"",
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        terms, df, ends, slots, tfs = (
            state.get(k) for k in ("terms", "df", "ends", "slots", "tfs")
        )
        if not (
            isinstance(terms, list)
            and all(isinstance(t, str) for t in terms)
            and isinstance(df, bytes)
            and isinstance(ends, bytes)
            and isinstance(slots, bytes)
            and isinstance(tfs, bytes)
        ):
            raise TypeError("not a shard's postings")
        counts = np.frombuffer(df, dtype=np.int64)
        stops = np.frombuffer(ends, dtype=np.int64)
        self._packed_slots = np.frombuffer(slots, dtype=np.int64)
        self._packed_tfs = np.frombuffer(tfs, dtype=np.float64)
        if not len(terms) == len(counts) == len(stops) or (
            len(stops) and not stops[-1] == len(self._packed_slots) == len(self._packed_tfs)
        ):
            raise ValueError("a shard's postings do not add up")
        starts = [0, *stops[:-1].tolist()] if len(stops) else []
        self._packed = dict(zip(terms, zip(starts, stops.tolist(), strict=True), strict=True))
        self.df = dict(zip(terms, counts.tolist(), strict=True))
        self._slots, self._tfs, self._cache = {}, {}, {}

    def __contains__(self, term: object) -> bool:
        return term in self.df

    def _own(self, term: str) -> None:
        """Copy ``term``'s loaded postings out of the packed arrays, to append to them."""
        start, end = self._packed.pop(term)
        self._slots[term] = array("q", self._packed_slots[start:end].tobytes())
        self._tfs[term] = array("d", self._packed_tfs[start:end].tobytes())

    def add(self, slot: int, counts: Mapping[str, int]) -> None:
        df, slots, tfs, cache = self.df, self._slots, self._tfs, self._cache
        for term, tf in counts.items():
            if term in df:
                df[term] += 1
                cache.pop(term, None)  # first: its views of the arrays below go with it
                if term in self._packed:
                    self._own(term)
                try:
                    slots[term].append(slot)
                    tfs[term].append(tf)
                except BufferError:  # a view outlived the search that took it: copy
                    slots[term], tfs[term] = array("q", slots[term]), array("d", tfs[term])
                    slots[term].append(slot)
                    tfs[term].append(tf)
            else:
                df[term] = 1
                slots[term] = array("q", (slot,))
                tfs[term] = array("d", (tf,))

    def remove(self, terms: Iterable[str]) -> None:
        """A document holding ``terms`` left (its slot is dead already)."""
        for term in terms:
            self.df[term] -= 1
            if not self.df[term]:
                del self.df[term]
                self._slots.pop(term, None)
                self._tfs.pop(term, None)
                self._packed.pop(term, None)
                self._cache.pop(term, None)

    def arrays(self, term: str) -> tuple[Ints, Floats]:
        """``term``'s slots and term frequencies as numpy arrays: views of the postings, no
        copy (copies kept per term grew a server by the whole postings' size over time),
        read under the index lock; :meth:`add` drops them before it appends."""
        found = self._cache.get(term)
        if found is None:
            packed = self._packed.get(term)
            if packed is not None:
                start, end = packed
                found = (self._packed_slots[start:end], self._packed_tfs[start:end])
            else:
                slots = np.frombuffer(self._slots[term], dtype=np.int64)
                tfs = np.frombuffer(self._tfs[term], dtype=np.float64)
                found = (slots, tfs)
            self._cache[term] = found
        return found

    def compact(self, remap: Ints) -> None:
        """Apply :meth:`Slots.compact`'s renumbering and drop the dead entries."""
        self._cache.clear()
        for term in list(self._packed):
            self._own(term)
        self._packed_slots = np.zeros(0, dtype=np.int64)
        self._packed_tfs = np.zeros(0, dtype=np.float64)
        for term, old in self._slots.items():
            slots = remap[np.frombuffer(old, dtype=np.int64)]
            keep = slots >= 0
            self._slots[term] = array("q", slots[keep].tobytes())
            tfs = np.frombuffer(self._tfs[term], dtype=np.float64)[keep]
            self._tfs[term] = array("d", tfs.tobytes())


def bm25(
    postings: Postings, terms: Iterable[str], n: int, norms: Floats, alive: NDArray[np.bool_]
) -> Floats:
    """BM25 of every slot for ``terms`` (0 where none matches or the slot is dead). A term in
    most documents of a large index only re-scores what rarer terms found (its weight is
    small and its postings long)."""
    acc = np.zeros(len(norms), dtype=np.float64)
    present = sorted({t for t in terms if t in postings}, key=lambda t: postings.df[t])
    for i, term in enumerate(present):
        slots, tfs = postings.arrays(term)
        df = postings.df[term]
        weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * (_K1 + 1)
        gain = weight * tfs / (tfs + norms[slots])
        if i > 0 and df > _COMMON and 2 * df > n:
            found = acc[slots] > 0
            acc[slots[found]] += gain[found]
        else:
            acc[slots] += gain
    acc[~alive] = 0.0
    return acc


def length_norms(lengths: array[float], average: float) -> Floats:
    """BM25's per-document length normalization for documents of these ``lengths``."""
    return _K1 * (1 - _B + _B * np.frombuffer(lengths, dtype=np.float64) / average)


class Scores:
    """One query's relevance of each document of a shard (0: no match)."""

    def __init__(self, values: Floats, ids: Sequence[str | None], of: Mapping[str, int]) -> None:
        self._values, self._ids, self._of = values, ids, of

    def __len__(self) -> int:
        return int(np.count_nonzero(self._values))

    def best(self) -> float:
        return float(self._values.max()) if len(self._values) else 0.0

    def get(self, doc_id: str) -> float:
        slot = self._of.get(doc_id)
        return float(self._values[slot]) if slot is not None and slot < len(self._values) else 0.0

    def add(self, doc_id: str, value: float) -> None:
        """Raise ``doc_id``'s score by ``value`` (a document newer than the query: ignored)."""
        slot = self._of.get(doc_id)
        if slot is not None and slot < len(self._values):
            self._values[slot] += value

    def setdefault(self, doc_id: str, value: float) -> None:
        """Give ``doc_id`` the score ``value`` if nothing matched it."""
        slot = self._of.get(doc_id)
        if slot is not None and slot < len(self._values) and not self._values[slot]:
            self._values[slot] = value

    def items(self) -> list[tuple[str, float]]:
        slots = np.flatnonzero(self._values)
        pairs = zip(slots.tolist(), self._values[slots].tolist(), strict=True)
        return [(doc_id, v) for s, v in pairs if (doc_id := self._ids[s]) is not None]

    def descending(self) -> Iterator[tuple[float, str]]:
        """(score, doc id) of every scored document, best first and equal scores by id,
        sorting only a chunk of the best at a time."""
        values, ids = self._values, self._ids
        rest = np.flatnonzero(values)
        while rest.size:
            if rest.size > _CHUNK:
                scores = values[rest]
                cut = np.partition(scores, rest.size - _CHUNK)[rest.size - _CHUNK]
                top, rest = rest[scores >= cut], rest[scores < cut]
            else:
                top, rest = rest, rest[:0]
            chunk = [
                (-v, doc_id)
                for s, v in zip(top.tolist(), values[top].tolist(), strict=True)
                if (doc_id := ids[s]) is not None
            ]
            chunk.sort()
            for negative, doc_id in chunk:
                yield -negative, doc_id
