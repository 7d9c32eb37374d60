"""A shard's documents, saved as compact bytes and made into objects when first read.

A saved shard holds each :class:`~kgmem.index.lexical.docs.LexicalDoc` as one short pickle
of its fields (times as microseconds, no class references: nothing in it can name code to
run; ~0.7 KB against ~1.2 KB as an object), so loading a user reads bytes instead of making
ten thousand objects (measured on a 10k-document user: 131 of the 150 ms a load took).
A document read once is kept as the object (a search ranks a few hundred, and a user's
next searches mostly the same ones), so a user searched often holds what it held before,
and one loaded and rarely searched holds less.
"""

from __future__ import annotations

import io
import logging
import pickle
import sys
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime, timedelta

from kgmem.index.lexical.docs import LexicalDoc

__all__ = ["HeldDocs", "decode", "encode"]

log = logging.getLogger("kgmem.index")

_NAMES = tuple(f.name for f in fields(LexicalDoc))
_TIMES = frozenset(
    i
    for i, name in enumerate(_NAMES)
    if name in ("recorded_at", "last_used_at", "occurred_at", "valid_from", "valid_until")
)
_SHARED = tuple(
    i
    for i, name in enumerate(_NAMES)
    if name in ("kind", "graph", "memory_kind", "status", "tags", "about", "chats", "names")
)
_VALUES: dict[object, object] = {}  # the tuples and name sets documents share
_MOST_VALUES = 200_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


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


def decode(data: bytes) -> LexicalDoc:
    values = list(_Plain(io.BytesIO(data)).load())
    for i in _TIMES:
        if (micros := values[i]) is not None:
            values[i] = _EPOCH + micros * _MICROSECOND
    for i in _SHARED:  # held once however many documents name them, as when indexed
        if isinstance(value := values[i], str):
            values[i] = sys.intern(value)
        elif value:  # a tuple or a frozenset: documents about the same things share one
            if len(_VALUES) >= _MOST_VALUES:
                _VALUES.clear()
            values[i] = _VALUES.setdefault(value, value)
    doc = object.__new__(LexicalDoc)
    for name, value in zip(_NAMES, values, strict=True):
        object.__setattr__(doc, name, value)
    return doc


def _made(doc_id: str, data: bytes) -> LexicalDoc | None:
    """The document ``data`` holds; None (and said) if it is not one this code wrote: a
    saved shard's digest catches damage, so that is a file written by someone else."""
    try:
        return decode(data)
    except (pickle.UnpicklingError, ValueError, TypeError, EOFError) as exc:
        log.error("a saved search document (%s) is not one kgmem wrote: %s", doc_id, exc)
        return None


class HeldDocs:
    """Document id -> document: a document written or read here is held as the object; one
    loaded from a saved shard stays bytes until it is first read (see the module)."""

    def __init__(self) -> None:
        self._held: dict[str, LexicalDoc | bytes] = {}

    def __getstate__(self) -> dict[str, object]:
        held = self._held
        return {"_held": {i: d if isinstance(d, bytes) else encode(d) for i, d in held.items()}}

    def __setstate__(self, state: dict[str, object]) -> None:
        held = state.get("_held")
        if not isinstance(held, dict) or not all(isinstance(d, bytes) for d in held.values()):
            raise pickle.UnpicklingError("not a shard's documents")
        self._held = held

    def __len__(self) -> int:
        return len(self._held)

    def __bool__(self) -> bool:
        return bool(self._held)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._held

    def __getitem__(self, doc_id: str) -> LexicalDoc:
        found = self.get(doc_id)
        if found is None:
            raise KeyError(doc_id)
        return found

    def __setitem__(self, doc_id: str, doc: LexicalDoc) -> None:
        self._held[doc_id] = doc

    def get(self, doc_id: str) -> LexicalDoc | None:
        found = self._held.get(doc_id)
        if isinstance(found, bytes):
            found = _made(doc_id, found)
            if found is None:
                del self._held[doc_id]
            else:
                self._held[doc_id] = found
        return found

    def pop(self, doc_id: str) -> LexicalDoc | None:
        found = self._held.pop(doc_id, None)
        return _made(doc_id, found) if isinstance(found, bytes) else found

    def ids(self) -> Iterator[str]:
        return iter(self._held)

    def values(self) -> Iterator[LexicalDoc]:
        for doc_id in list(self._held):
            found = self.get(doc_id)
            if found is not None:
                yield found
