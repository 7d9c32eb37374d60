"""When a shard's documents hold: the timeline of those with a moment, and the validity
periods of those without one (:class:`~kgmem.index.lexical.shard.Shard` keeps both)."""

from __future__ import annotations

import bisect
import contextlib
from array import array
from datetime import UTC, datetime, timedelta

import numpy as np

from kgmem.index.lexical.arrays import Ints, strings

__all__ = ["Dated", "Periods", "Timeline", "micros"]

Dated = tuple[int, str]  # a document's moment or start (POSIX microseconds) and its id

_INSERTS = 256  # timeline changes put in one by one; more: in one pass
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_LOW, _HIGH = -(2**62), 2**62  # an open end of a validity period


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
        self._spans[doc_id] = (micros(start, _LOW), micros(end, _HIGH))
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
        hits = np.flatnonzero((starts < micros(end, _HIGH)) & (ends > micros(start, _LOW)))
        if latest is not None and hits.size > latest:
            keys = np.where(starts[hits] == _LOW, 0, starts[hits])  # no start: the epoch
            cut = np.partition(keys, hits.size - latest)[hits.size - latest]
            hits = hits[keys >= cut]
        keys = np.where(starts[hits] == _LOW, 0, starts[hits]).tolist()
        return [(key, ids[i]) for key, i in zip(keys, hits.tolist(), strict=True)]


def micros(at: datetime | None, default: int) -> int:
    """``at`` as POSIX microseconds (``default`` for None)."""
    return default if at is None else (at - _EPOCH) // _MICROSECOND
