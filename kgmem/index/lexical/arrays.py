"""BM25 postings and one query's scores as arrays, so a search over 100k documents scores in
a few milliseconds instead of walking dictionaries in Python.

Each document of a shard has a *slot*, a dense integer. A term's postings are two appendable
arrays (slots, weighted term frequencies); a removed document's slot is dead and its entries
stay until the term has no live document or the shard compacts (renumbers every live slot
once as many slots are dead as are live). Scoring accumulates ``w x tf / (tf + norm)`` per
term into one array over the slots, in the same order and arithmetic as the per-document
formula, so scores are exactly the ones a dictionary walk gives. What a query gets back is
a :class:`~kgmem.index.lexical.scores.Scores`.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pickle import PickleBuffer
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kgmem.index.lexical.about import Abouts
from kgmem.index.lexical.facts import Fact, Facts

__all__ = [
    "Counted",
    "Floats",
    "Ints",
    "Packed",
    "Postings",
    "Slots",
    "Slotted",
    "bm25",
    "length_norms",
    "strings",
    "unpacked",
]

_K1, _B = 1.2, 0.75
_COMMON = 500  # a term in more docs than this and in over half of them only re-scores

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Slotted = NDArray[np.integer[Any]]  # a term's slots: int64 as built, int32 as loaded
Counted = NDArray[
    np.integer[Any] | np.floating[Any]
]  # and its weighted term frequencies (whole numbers)


def strings(values: Iterable[object]) -> bool:
    """Whether every one of ``values`` is a string (in C: a genexpr of ``isinstance`` over
    a loaded user's 10k ids took a millisecond)."""
    return set(map(type, values)) <= {str}


class Slots:
    """Document ids to dense slots, with each slot's length, whether it is live, and what
    ranking and filters need of its document (:mod:`kgmem.index.lexical.facts`): a filter
    on kind or status is applied to a query's scores before the walk (:meth:`Scores.keep`),
    and a candidate whose score cannot reach the top is passed over unread; and who its
    document is about (:mod:`kgmem.index.lexical.about`)."""

    def __init__(self) -> None:
        self.of: dict[str, int] = {}
        self.ids: list[str | None] = []
        self.lengths = array("d")
        self.facts = Facts()
        self.about = Abouts()
        self._alive = bytearray()
        self._version = 0
        self._cached: tuple[int, NDArray[np.bool_]] | None = None

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "_cached": None}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if not len(self.ids) == len(self.lengths) == len(self.facts) == len(self.about):
            raise ValueError("a shard's slots do not add up")

    def add(self, doc_id: str, length: int, fact: Fact, about: Iterable[str]) -> int:
        slot = self.of[doc_id] = len(self.ids)
        self.ids.append(doc_id)
        self.lengths.append(float(length))
        self.facts.append(fact)
        self.about.append(about)
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
        self.facts.keep(alive)
        self.about.keep(alive)
        self._alive = bytearray(b"\x01" * len(self.ids))
        self._version += 1
        return remap


class Packed:
    """Terms' postings as a saved shard holds them: every term's slots and frequencies in
    two arrays, with each term's end; a term's are read as views of them. One dictionary of
    term numbers and three buffers, where a dictionary of arrays (or of pairs) made
    thousands of objects at each load. The two arrays are pickled out of band (protocol 5:
    :mod:`kgmem.index.lexical.saved`), so a load reads them where the file was read. Both
    are 32-bit integers (a weighted term frequency is a whole number; BM25 reads it as a
    float exactly): half the bytes to read, check and hold of 64-bit ones."""

    def __init__(
        self,
        terms: list[str] | None = None,
        ends: bytes = b"",
        slots: bytes | memoryview = b"",
        tfs: bytes | memoryview = b"",
    ) -> None:
        terms = terms or []
        self._at = dict(zip(terms, range(len(terms)), strict=True))
        self._ends = array("q")
        self._ends.frombytes(ends)
        self.slots: Slotted = np.frombuffer(slots, dtype=np.int32)
        self.tfs: Counted = np.frombuffer(tfs, dtype=np.int32)
        stops = np.frombuffer(ends, dtype=np.int64)
        if not (
            len(self._at) == len(terms) == len(stops)
            and (not len(stops) or stops[-1] == len(self.slots) == len(self.tfs))
            and bool(np.all(np.diff(stops, prepend=0) >= 0))
        ):
            raise ValueError("a shard's postings do not add up")

    @staticmethod
    def pack(terms: list[str], postings: list[tuple[Slotted, Counted]]) -> dict[str, object]:
        """What :class:`Packed` is made of again (``Packed(**state)``)."""
        slots = np.concatenate([s for s, _ in postings] or [np.zeros(0, np.int32)])
        tfs = np.concatenate([t for _, t in postings] or [np.zeros(0, np.int32)])
        return {
            "terms": terms,
            "ends": array("q", itertools.accumulate(len(s) for s, _ in postings)).tobytes(),
            "slots": PickleBuffer(_whole(slots, "slot")),
            "tfs": PickleBuffer(_whole(tfs, "term frequency")),
        }

    def __contains__(self, term: object) -> bool:
        return term in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    def get(self, term: str) -> tuple[Slotted, Counted] | None:
        n = self._at.get(term)
        if n is None:
            return None
        start, end = self._ends[n - 1] if n else 0, self._ends[n]
        return self.slots[start:end], self.tfs[start:end]

    def pop(self, term: str) -> tuple[Slotted, Counted] | None:
        found = self.get(term)
        self._at.pop(term, None)
        return found


def _whole(values: NDArray[Any], what: str) -> bytes:
    """``values`` as 32-bit integers, refused if one is not a whole number that fits."""
    packed = values.astype(np.int32)
    if not np.array_equal(packed, values):
        raise ValueError(f"a {what} is not a 32-bit whole number")
    return packed.tobytes()


def unpacked(state: dict[str, object], *names: str) -> tuple[Packed, list[object]]:
    """A :meth:`Packed.pack` state with ``names`` beside it: the packed terms, and those."""
    terms, ends, slots, tfs = (state.get(k) for k in ("terms", "ends", "slots", "tfs"))
    if not (
        isinstance(terms, list)
        and strings(terms)
        and isinstance(ends, bytes)
        and isinstance(slots, bytes | memoryview)
        and isinstance(tfs, bytes | memoryview)
    ):
        raise TypeError("not a shard's postings")
    return Packed(terms, ends, slots, tfs), [state.get(name) for name in names]


class Postings:
    """term -> the slots holding it and their weighted term frequencies, appended to in
    place; ``df`` counts the live documents of each term.

    Saved packed (:class:`Packed`; 7,600 small arrays made a 10k-document user's load
    4.6 ms): a loaded shard reads its terms' postings as views of the packed arrays, and
    copies one out (``_own``) only when a document is added to it."""

    def __init__(self) -> None:
        self.df: dict[str, int] = {}
        self._slots: dict[str, array[int]] = {}
        self._tfs: dict[str, array[float]] = {}
        self._cache: dict[str, tuple[Slotted, Counted]] = {}
        self._packed = Packed()  # as loaded

    def __getstate__(self) -> dict[str, object]:
        terms = list(self.df)
        postings = [self.arrays(t) for t in terms]
        self._cache.clear()  # views taken for the dump: an append must not meet them
        counts = array("q", (self.df[t] for t in terms)).tobytes()
        return {**Packed.pack(terms, postings), "df": counts}

    def __setstate__(self, state: dict[str, object]) -> None:
        self._packed, (df,) = unpacked(state, "df")
        if not isinstance(df, bytes):
            raise TypeError("not a shard's postings")
        counts = np.frombuffer(df, dtype=np.int64)
        if len(counts) != len(self._packed):
            raise ValueError("a shard's postings do not add up")
        self.df = dict(zip(self._packed, counts.tolist(), strict=True))
        self._slots, self._tfs, self._cache = {}, {}, {}

    def __contains__(self, term: object) -> bool:
        return term in self.df

    def _own(self, term: str) -> None:
        """Copy ``term``'s loaded postings (if it is a loaded term) out of the packed
        arrays, to append to them."""
        if (packed := self._packed.pop(term)) is not None:
            self._slots[term] = array("q", packed[0].astype(np.int64).tobytes())
            self._tfs[term] = array("d", packed[1].astype(np.float64).tobytes())

    def add(self, slot: int, counts: Mapping[str, int]) -> None:
        df, slots, tfs, cache = self.df, self._slots, self._tfs, self._cache
        for term, tf in counts.items():
            if term in df:
                df[term] += 1
                cache.pop(term, None)  # first: its views of the arrays below go with it
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
                self._packed.pop(term)
                self._cache.pop(term, None)

    def arrays(self, term: str) -> tuple[Slotted, Counted]:
        """``term``'s slots and term frequencies as numpy arrays: views of the postings, no
        copy (copies kept per term grew a server by the whole postings' size over time),
        read under the index lock; :meth:`add` drops them before it appends."""
        found = self._cache.get(term)
        if found is None:
            found = self._packed.get(term)
            if found is None:
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
        self._packed = Packed()
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
