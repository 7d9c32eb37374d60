"""A shard's documents, saved as compact bytes and made into objects when read.

A saved shard holds each :class:`~kgmem.index.lexical.docs.LexicalDoc` as one short pickle
of its fields (times as microseconds, no class references: nothing in it can name code to
run; ~0.7 KB against ~1.2 KB as an object), all of them in one block of bytes with each
one's end, so loading a user makes a few objects instead of ten thousand (measured on a
10k-document user: making the documents took 131 of the 150 ms a load took; ten thousand
bytes objects, 8 ms of ~25). The documents read most recently (a search ranks a few
hundred, and a user's next searches mostly the same ones) are kept as objects, up to
``READ`` per user: a user searched for months holds no more than one just loaded.

A saved shard keeps the block in its file, after the rest (:mod:`kgmem.index.lexical.saved`),
and a load leaves it there: a document is read from the file when it is first made (one
``pread``; the page cache, not the server, holds the rest). Each document's CRC-32 is saved
with the shard and checked when it is read: a document whose bytes changed is left out, and
the shard says it is ``damaged`` (its user is rebuilt from the store).
"""

from __future__ import annotations

import io
import itertools
import logging
import pickle
import zlib
from array import array
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from typing import Protocol

import numpy as np

from kgmem.index.lexical.arrays import strings
from kgmem.index.lexical.docs import LexicalDoc
from kgmem.index.lexical.region import Region

__all__ = ["READ", "Block", "HeldDocs", "Sliced", "decode", "encode"]

log = logging.getLogger("kgmem.index")

_NAMES = tuple(f.name for f in fields(LexicalDoc))
_TIMES = tuple(
    i
    for i, name in enumerate(_NAMES)
    if name in ("recorded_at", "last_used_at", "occurred_at", "valid_from", "valid_until")
)
# each field's slot setter: a frozen dataclass refuses setattr, its slots do not
_SETTERS = tuple(getattr(LexicalDoc, name).__set__ for name in _NAMES)
# a set is always tracked by the cyclic collector: a name set per document read (40 users,
# 3,000 read each) was 120k of the 394k objects a full collection walked (158 ms)
_NAMES_AT = _NAMES.index("names")
_SHARED: dict[frozenset[str], frozenset[str]] = {}
_MOST_SHARED = 100_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
READ = 1024  # loaded documents kept as objects once read, per user (~1.2 KB each)


class Sliced(Protocol):
    """Bytes read by slice: in memory, or where they lie in a file."""

    def __len__(self) -> int: ...

    def __getitem__(self, at: slice, /) -> bytes | memoryview: ...


class Block(bytes):
    """A shard's documents as saved: a plain pickle makes bytes of it again; a saved
    shard's file puts it after the rest (:mod:`kgmem.index.lexical.saved`)."""

    def __reduce__(self) -> tuple[type[bytes], tuple[bytes]]:
        return bytes, (bytes(self),)


class _Plain(pickle.Unpickler):
    """Reads pickles of plain values only: a document's bytes never name a class."""

    def find_class(self, module: str, name: str) -> object:
        raise pickle.UnpicklingError(f"a held document names {module}.{name}")


def encode(doc: LexicalDoc) -> bytes:
    values = [getattr(doc, name) for name in _NAMES]
    for i in _TIMES:
        if (when := values[i]) is not None:
            values[i] = (when - _EPOCH) // _MICROSECOND
    return pickle.dumps(tuple(values), protocol=pickle.HIGHEST_PROTOCOL)


def decode(data: bytes | memoryview) -> LexicalDoc:
    """The document :func:`encode` made ``data`` of (~5 us; a document read is held only
    while it is among the ``READ`` read last, so of the values documents share only the
    name set is looked up)."""
    values = _Plain(io.BytesIO(data)).load()
    doc = object.__new__(LexicalDoc)
    for setter, value in zip(_SETTERS, values, strict=True):
        setter(doc, value)
    for i in _TIMES:
        if (micros := values[i]) is not None:
            _SETTERS[i](doc, _EPOCH + micros * _MICROSECOND)
    if names := values[_NAMES_AT]:  # one set for the documents about the same entities
        if len(_SHARED) >= _MOST_SHARED:
            _SHARED.clear()
        _SETTERS[_NAMES_AT](doc, _SHARED.setdefault(names, names))
    return doc


class HeldDocs:
    """Document id -> document. A document written here is held as the object; those loaded
    from a saved shard stay in one block of bytes (each document's end in ``_ends``, its
    CRC-32 in ``_crcs``), and the ``READ`` most recently read of them are kept as objects
    (see the module). ``damaged``: a loaded document's bytes did not match its CRC."""

    def __init__(self) -> None:
        self._written: dict[str, LexicalDoc] = {}  # since the load
        self._at: dict[str, int] = {}  # loaded: id -> its number in the block
        self._block: Sliced = b""  # where the file lies, or bytes
        self._ends = array("q")
        self._crcs = array("I")
        self._read: dict[str, LexicalDoc] = {}  # loaded ones made into objects, oldest first
        self.damaged = False

    def __getstate__(self) -> dict[str, object]:
        ids = [*self._at, *self._written]
        whole = self._block[0 : len(self._block)]  # one read, not one per document
        ends = self._ends
        parts = [whole[ends[n - 1] if n else 0 : ends[n]] for n in self._at.values()]
        crcs = array("I", (self._crcs[n] for n in self._at.values()))  # damage stays seen
        written = [encode(doc) for doc in self._written.values()]
        crcs.extend(zlib.crc32(part) for part in written)
        parts += written
        return {
            "ids": ids,
            "block": Block(b"".join(parts)),
            "ends": array("q", itertools.accumulate(len(p) for p in parts)).tobytes(),
            "crcs": crcs.tobytes(),
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        ids, block, ends, crcs = (state.get(k) for k in ("ids", "block", "ends", "crcs"))
        if not (
            isinstance(ids, list)
            and strings(ids)
            and isinstance(block, bytes | memoryview | Region)
            and isinstance(ends, bytes)
            and isinstance(crcs, bytes)
        ):
            raise pickle.UnpicklingError("not a shard's documents")
        self._written, self._read, self.damaged = {}, {}, False
        self._ends, self._crcs = array("q"), array("I")
        self._ends.frombytes(ends)
        self._crcs.frombytes(crcs)
        self._at = dict(zip(ids, range(len(ids)), strict=True))
        stops = np.frombuffer(ends, dtype=np.int64)
        if not (
            len(self._at) == len(ids) == len(stops) == len(self._crcs)
            and (not len(stops) or stops[-1] == len(block))
            and bool(np.all(np.diff(stops, prepend=0) >= 0))
        ):
            raise ValueError("a shard's documents do not add up")
        self._block = block

    def _bytes(self, n: int) -> bytes | memoryview:
        return self._block[self._ends[n - 1] if n else 0 : self._ends[n]]

    def __len__(self) -> int:
        return len(self._at) + len(self._written)

    def __bool__(self) -> bool:
        return bool(self._at or self._written)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._written or doc_id in self._at

    def __getitem__(self, doc_id: str) -> LexicalDoc:
        found = self.get(doc_id)
        if found is None:
            raise KeyError(doc_id)
        return found

    def __setitem__(self, doc_id: str, doc: LexicalDoc) -> None:
        if self._at.pop(doc_id, None) is not None:
            self._read.pop(doc_id, None)
        self._written[doc_id] = doc

    def get(self, doc_id: str) -> LexicalDoc | None:
        found = self._written.get(doc_id)
        if found is not None:
            return found
        found = self._read.pop(doc_id, None)
        if found is None:
            n = self._at.get(doc_id)
            if n is None:
                return None
            found = self._made(doc_id, n)
            if found is None:
                del self._at[doc_id]
                return None
            if len(self._read) >= READ:
                del self._read[next(iter(self._read))]
        self._read[doc_id] = found  # the most recently read last
        return found

    def _made(self, doc_id: str, n: int) -> LexicalDoc | None:
        """Loaded document ``n`` made into an object; None (and said) if its bytes changed
        since the save, or the file cannot be read (``damaged``), or are not a document
        this code wrote (a saved shard's digests catch damage, so that is a file written
        by someone else)."""
        try:
            data = self._bytes(n)
        except OSError as exc:  # the disk failed under the file: that search goes on
            log.error("a saved search document (%s) cannot be read: %s", doc_id, exc)
            self.damaged = True
            return None
        if zlib.crc32(data) != self._crcs[n]:
            log.error("a saved search document (%s) is damaged", doc_id)
            self.damaged = True
            return None
        try:
            return decode(data)
        except (pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
            log.error("a saved search document (%s) is not one kgmem wrote: %s", doc_id, exc)
            return None

    def pop(self, doc_id: str) -> LexicalDoc | None:
        found = self._written.pop(doc_id, None)
        if found is None and doc_id in self._at:
            found = self.get(doc_id)
            self._at.pop(doc_id, None)
            self._read.pop(doc_id, None)
        return found

    def ids(self) -> Iterator[str]:
        return itertools.chain(self._at, self._written)

    def values(self) -> Iterator[LexicalDoc]:
        for doc_id in list(self.ids()):
            found = self.get(doc_id)
            if found is not None:
                yield found
