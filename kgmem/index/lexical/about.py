"""Who each slot's document is about, as entity codes beside the slot, so a search can walk
from an entity to the entities its active memories are also about without reading one
document: a saved shard's documents stay in the file until read, and the first read of each
is a read of the file (300 entities of a 1M-memory user: p95 13.4 ms the first time, 0.3 ms
the second).

One flat array of 32-bit entity codes and each slot's end in it, appended to as slots are
(a changed document takes a new slot) and kept with the live slots at a compaction; the
codes name entities in a table that a compaction also prunes. Both arrays are pickled out of
band (:mod:`kgmem.index.lexical.saved`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from pickle import PickleBuffer
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Abouts"]


class Abouts:
    """The entities each slot's document is about (see the module)."""

    def __init__(self) -> None:
        self.entities: list[str] = []  # code -> entity
        self._codes: dict[str, int] = {}
        self._ends = array("q")  # slot -> the end of its codes in _flat
        self._flat = array("i")

    def __len__(self) -> int:
        return len(self._ends)

    def __getstate__(self) -> dict[str, object]:
        return {
            "entities": self.entities,
            "ends": PickleBuffer(self._ends),
            "flat": PickleBuffer(self._flat),
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        entities, ends, flat = (state.get(k) for k in ("entities", "ends", "flat"))
        if not (
            isinstance(entities, list)
            and set(map(type, entities)) <= {str}
            and isinstance(ends, bytes | bytearray | memoryview)
            and isinstance(flat, bytes | bytearray | memoryview)
            and memoryview(ends).nbytes % 8 == 0
            and memoryview(flat).nbytes % 4 == 0
        ):
            raise TypeError("not a shard's abouts")
        self._ends, self._flat = array("q"), array("i")
        self._ends.frombytes(memoryview(ends).cast("B"))
        self._flat.frombytes(memoryview(flat).cast("B"))
        stops, codes = _ints(self._ends, np.int64), _ints(self._flat, np.int32)
        if (int(stops[-1]) if len(stops) else 0) != len(codes) or (
            len(stops) and bool(np.any(np.diff(stops, prepend=0) < 0))
        ):
            raise ValueError("a shard's abouts do not add up")
        if len(codes) and (int(codes.min()) < 0 or int(codes.max()) >= len(entities)):
            raise ValueError("a shard's abouts do not add up")
        self.entities = entities
        self._codes = {e: n for n, e in enumerate(entities)}

    def append(self, about: Iterable[str]) -> None:
        """The next slot's document is about ``about``."""
        for entity in about:
            code = self._codes.get(entity)
            if code is None:
                code = self._codes[entity] = len(self.entities)
                self.entities.append(entity)
            self._flat.append(code)
        self._ends.append(len(self._flat))

    def of(self, slot: int) -> array[int]:
        """The codes of the entities ``slot``'s document is about."""
        return self._flat[self._ends[slot - 1] if slot else 0 : self._ends[slot]]

    def keep(self, alive: NDArray[np.bool_]) -> None:
        """Keep the ``alive`` slots only (the slots were renumbered), and the entities they
        are about only."""
        stops = _ints(self._ends, np.int64)
        counts = np.diff(stops, prepend=0)
        codes = _ints(self._flat, np.int32)[np.repeat(alive, counts)]
        used, flat = np.unique(codes, return_inverse=True)
        self.entities = [self.entities[int(c)] for c in used]
        self._codes = {e: n for n, e in enumerate(self.entities)}
        self._flat = array("i", flat.astype(np.int32).tobytes())
        self._ends = array("q", np.cumsum(counts[alive], dtype=np.int64).tobytes())


def _ints(values: array[int], dtype: type[np.signedinteger[Any]]) -> NDArray[Any]:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)
