"""Part of a file, read where it lies when sliced: a loaded shard's documents stay in their
file (the page cache holds what is read often), not in the server's memory.

The file stays open while a :class:`Region` of it is held, and is closed with the last one.
A save replaces a shard's file by a rename, so the one open is still the one loaded.
"""

from __future__ import annotations

import os
import weakref

__all__ = ["Opened", "Region"]


class Opened:
    """An open file (its descriptor), closed when nothing refers to it any more."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._close = weakref.finalize(self, os.close, fd)

    def close(self) -> None:
        self._close()


class Region:
    """``length`` bytes of ``opened`` from ``start``; a slice reads them (``os.pread``)."""

    def __init__(self, opened: Opened, start: int, length: int) -> None:
        self._opened, self._start, self._length = opened, start, length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, at: slice, /) -> bytes:
        start, stop, step = at.indices(self._length)
        if step != 1:
            raise ValueError("a region is read in one run")
        if stop <= start:
            return b""
        return os.pread(self._opened.fd, stop - start, self._start + start)

    def part(self, start: int, length: int) -> Region:
        """The ``length`` bytes from ``start`` of this region, as a region."""
        if start < 0 or length < 0 or start + length > self._length:
            raise ValueError("past the region's end")
        return Region(self._opened, self._start + start, length)
