"""A user's lexical shard on disk, so a start-up loads it instead of reading the store.

One file per user (``<directory>/<uid>.shard``): a header (magic, format, the user's stamp the
shard is level with, the field weights, the payload's length and CRC-32, the tail's length),
the payload: the shard as a pickle (protocol 5) with its large arrays out of band after it,
so a load makes them views of the bytes read instead of copies; and the tail: the documents'
block (:class:`~kgmem.index.lexical.held.Block`), which a load leaves in the file and reads
a document at a time, each checked by its own CRC-32 (in the payload). A file is used only
when all of it checks: the format is this code's (a digest of the modules that decide what a
shard holds, so a change to tokenizing, stemming or the documents makes every file stale by
itself), the weights are the index's, the payload's digest matches, the file's length is
the header's and the stamp is the store's now (:mod:`kgmem.index.feed_outbox`). Anything
else, a truncated or foreign file included, is a miss: the shard is rebuilt from the store,
which is always right. A document damaged in the tail is found when it is read: the shard
is rebuilt then (:class:`~kgmem.index.lexical.held.HeldDocs`).

The pickle is read by an unpickler that makes only the shard's own classes and the few
standard types they hold, so a file put in the directory cannot run code. Files are written
whole to a temporary name, flushed and renamed, so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import pickle
import struct
import threading
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rdflib import URIRef

from kgmem.bulk import no_collections
from kgmem.index.digests import Digests
from kgmem.index.feed_outbox import Outbox
from kgmem.index.lexical import (
    about,
    arrays,
    chats,
    docs,
    facts,
    held,
    moments,
    read,
    region,
    shard,
)
from kgmem.index.lexical.held import Block
from kgmem.index.lexical.region import Opened, Region
from kgmem.index.lexical.shard import Shard
from kgmem.store import check_id

__all__ = ["Dumped", "SavedShard", "Saver", "ShardFiles"]

log = logging.getLogger("kgmem.index")

_MAGIC = b"KGMLEX\x04\n"  # 4: documents in a tail; 3: buffers out of band; 2: CRC-32
_HEAD = struct.Struct("<I")  # the header's length; the header is JSON
_COUNT = struct.Struct("<I")  # the payload's out-of-band buffers
_MOST_BUFFERS = 64
_ALLOWED = {
    ("kgmem.index.lexical.shard", "Shard"),
    ("kgmem.index.lexical.moments", "Periods"),
    ("kgmem.index.lexical.moments", "Timeline"),
    ("kgmem.index.lexical.chats", "Conversations"),
    ("kgmem.index.lexical.arrays", "Slots"),
    ("kgmem.index.lexical.arrays", "Postings"),
    ("kgmem.index.lexical.facts", "Facts"),
    ("kgmem.index.lexical.about", "Abouts"),
    ("kgmem.index.lexical.held", "HeldDocs"),
    ("datetime", "datetime"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    ("collections", "defaultdict"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "int"),
    ("array", "array"),
    ("array", "_array_reconstructor"),
}


def _checksum(payload: bytes) -> str:
    """What finds a damaged payload (a torn write, flipped bits): CRC-32, 3 ms for a 10k
    user's 12 MB where BLAKE2b took 13 ms of a ~45 ms load. It is no defence against a file
    written on purpose: the unpickler, which makes only a shard's own classes, is."""
    return f"crc32:{zlib.crc32(payload):08x}"


def _format() -> str:
    """A digest of the modules whose code decides what a saved shard holds."""
    digest = hashlib.blake2b(digest_size=16)
    for module in (about, arrays, chats, docs, facts, held, moments, read, region, shard):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.hexdigest()


_FORMAT = _format()


class _Pickler(pickle.Pickler):
    """Puts each :class:`Block` in the tail, as ("tail", where, length) in the pickle."""

    def __init__(self, file: io.BytesIO, buffers: list[pickle.PickleBuffer]) -> None:
        super().__init__(file, protocol=5, buffer_callback=buffers.append)
        self.tail: list[bytes] = []
        self._at = 0

    def persistent_id(self, obj: object) -> tuple[str, int, int] | None:
        if type(obj) is not Block:
            return None
        self.tail.append(obj)
        self._at += len(obj)
        return ("tail", self._at - len(obj), len(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, buffers: list[memoryview], tail: bytes | Region) -> None:
        super().__init__(file, buffers=buffers)
        self._tail = tail

    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a saved shard")
        return super().find_class(module, name)

    def persistent_load(self, pid: object) -> object:
        match pid:
            case ("tail", int() as at, int() as length) if min(
                at, length
            ) >= 0 and at + length <= len(self._tail):
                tail = self._tail
                return tail.part(at, length) if isinstance(tail, Region) else tail[at : at + length]
        raise pickle.UnpicklingError("not a part of the file's tail")


class Dumped(NamedTuple):
    """A shard as :meth:`ShardFiles.dump` makes it: the payload, and the tail after it."""

    payload: bytes
    tail: bytes = b""


@dataclass(frozen=True)
class SavedShard:
    """What a file's header says: the stamp its shard is level with, how many documents it
    holds, and its payload's size and digest."""

    stamp: int | None
    documents: int
    size: int
    digest: str
    tail: int


class ShardFiles:
    """The saved shards under ``directory`` (created on the first save)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, uid: str) -> Path:
        return self.directory / f"{check_id(uid, 'user id')}.shard"

    @staticmethod
    def dump(held: Shard) -> Dumped:
        """``held`` as a payload (the caller keeps it from changing meanwhile): the number
        of out-of-band buffers, their lengths and the pickle's, the pickle, the buffers;
        and the tail: the documents' block."""
        buffers: list[pickle.PickleBuffer] = []
        out = io.BytesIO()
        pickler = _Pickler(out, buffers)
        pickler.dump(held)
        data = out.getvalue()
        raws = [buffer.raw() for buffer in buffers]
        lengths = [raw.nbytes for raw in raws] + [len(data)]
        head = _COUNT.pack(len(raws)) + struct.pack(f"<{len(lengths)}Q", *lengths)
        return Dumped(b"".join([head, data, *raws]), b"".join(pickler.tail))

    @staticmethod
    def undump(payload: bytes, tail: bytes | Region = b"") -> Shard:
        """The shard :meth:`dump` made ``payload`` and ``tail`` of; its large arrays are
        views of ``payload`` (no copy), its documents are read from ``tail``."""
        (count,) = _COUNT.unpack_from(payload)
        if count > _MOST_BUFFERS:
            raise ValueError(f"{count} buffers")
        lengths = struct.unpack_from(f"<{count + 1}Q", payload, _COUNT.size)
        start = _COUNT.size + 8 * (count + 1)
        if start + sum(lengths) != len(payload):
            raise ValueError("the buffers do not add up")
        view = memoryview(payload)
        data = view[start : start + lengths[-1]]
        buffers, at = [], start + lengths[-1]
        for length in lengths[:-1]:
            buffers.append(view[at : at + length])
            at += length
        with no_collections():
            loaded = _Unpickler(io.BytesIO(data), buffers, tail).load()
        if not isinstance(loaded, Shard):
            raise TypeError(f"a {type(loaded).__name__}, not a shard")
        return loaded

    def write(
        self,
        uid: str,
        dumped: Dumped,
        stamp: int | None,
        weights: Mapping[str, int],
        documents: int,
    ) -> int:
        """Write ``dumped`` (:meth:`dump`) as ``uid``'s shard, level with ``stamp``;
        returns the bytes written."""
        payload, tail = dumped
        header = json.dumps(
            {
                "format": _FORMAT,
                "stamp": stamp,
                "weights": dict(sorted(weights.items())),
                "documents": documents,
                "size": len(payload),
                "digest": _checksum(payload),
                "tail": len(tail),
            }
        ).encode()
        target = self.path(uid)
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with temporary.open("wb") as fh:
                fh.write(_MAGIC + _HEAD.pack(len(header)) + header)
                fh.write(payload)
                fh.write(tail)
                fh.flush()
                os.fsync(fh.fileno())
            temporary.replace(target)
        finally:
            temporary.unlink(missing_ok=True)
        return len(payload) + len(tail)

    def header(self, uid: str, weights: Mapping[str, int]) -> SavedShard | None:
        """The header of ``uid``'s file, if there is one this code can use."""
        try:
            with self.path(uid).open("rb") as fh:
                return self._head(fh, weights)
        except OSError:
            return None

    def load(self, uid: str, stamp: int | None, weights: Mapping[str, int]) -> Shard | None:
        """``uid``'s saved shard if it is level with ``stamp`` and whole, else None; its
        documents are read from the file (kept open) when a search first needs them."""
        path = self.path(uid)
        try:
            with path.open("rb") as fh:
                head = self._head(fh, weights)
                if head is None or head.stamp != stamp:
                    return None
                payload = fh.read(head.size)
                start = fh.tell()
                whole = os.fstat(fh.fileno()).st_size == start + head.tail
                opened = Opened(os.dup(fh.fileno()))
        except OSError:
            return None
        if not whole or len(payload) != head.size or _checksum(payload) != head.digest:
            log.warning("the saved search index of %s is damaged: it is rebuilt", uid)
            return None
        try:
            loaded = self.undump(payload, Region(opened, start, head.tail))
        except Exception as exc:  # a file this code did not write: rebuilt, never trusted
            log.warning("the saved search index of %s is unreadable (%s): rebuilt", uid, exc)
            return None
        return loaded

    def caught_up(
        self,
        uid: str,
        stamp: int | None,
        weights: Mapping[str, int],
        outbox: Outbox,
        *,
        stale: bool = False,
        digests: Digests | None = None,
    ) -> tuple[Shard, set[URIRef] | None, int | None] | None:
        """``uid``'s saved shard for the store at ``stamp``, the nodes the writes since the
        file's stamp touched (to read again) and the file's stamp; None when the file cannot
        be used or the outbox no longer holds every write since it (nor do the ``digests``
        know what changed). ``stale``: in that last case the shard as saved, with None for
        the nodes (the digests are asked later, in the background: they take seconds)."""
        header = self.header(uid, weights)
        if header is None:
            return None
        behind: set[URIRef] | None = set()
        if header.stamp != stamp:
            missed = outbox.since(uid, header.stamp)
            caught = None
            if missed is None and not stale and digests is not None:
                caught = digests.since(uid, header.stamp)
            if missed is not None:
                behind = outbox.with_owners(uid, missed.nodes)
            elif caught is not None:
                behind = set(caught.nodes)
            else:
                log.warning(
                    "the saved search index of %s is behind the store (stamp %s, the store's "
                    "%s) by writes the outbox no longer holds: %s",
                    uid,
                    header.stamp,
                    stamp,
                    "searched as saved while it is caught up (or rebuilt) behind"
                    if stale
                    else "it is rebuilt",
                )
                if not stale:
                    return None
                behind = None
        shard = self.load(uid, header.stamp, weights)
        return None if shard is None else (shard, behind, header.stamp)

    def drop(self, uid: str) -> None:
        self.path(uid).unlink(missing_ok=True)

    @staticmethod
    def _head(fh: io.BufferedReader, weights: Mapping[str, int]) -> SavedShard | None:
        if fh.read(len(_MAGIC)) != _MAGIC:
            return None
        raw = fh.read(_HEAD.size)
        if len(raw) != _HEAD.size:
            return None
        (length,) = _HEAD.unpack(raw)
        if length > 1 << 20:
            return None
        try:
            head = json.loads(fh.read(length))
        except ValueError:
            return None
        if not isinstance(head, dict) or head.get("format") != _FORMAT:
            return None
        if head.get("weights") != dict(sorted(weights.items())):
            return None
        stamp, size, documents = head.get("stamp"), head.get("size"), head.get("documents")
        digest, tail = head.get("digest"), head.get("tail")
        if not (stamp is None or isinstance(stamp, int)) or not isinstance(size, int):
            return None
        if not isinstance(documents, int) or not isinstance(digest, str):
            return None
        if not isinstance(tail, int) or size < 0 or tail < 0:
            return None
        return SavedShard(stamp, documents, size, digest, tail)


class Saver:
    """Runs ``save(uid)`` for the users asked, in a thread of its own (started when there is
    work, gone after a minute without): a save of 100k documents takes seconds."""

    def __init__(self, save: Callable[[str], None]) -> None:
        self._save = save
        self._wake = threading.Condition()
        self._due: set[str] = set()
        self._thread: threading.Thread | None = None

    def later(self, uid: str) -> None:
        with self._wake:
            self._due.add(uid)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="kgmem-search-save", daemon=True
                )
                self._thread.start()
            self._wake.notify_all()

    def clear(self) -> None:
        """Forget the saves asked (the caller saves now itself)."""
        with self._wake:
            self._due.clear()

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._due:
                    self._wake.wait(timeout=60.0)
                if not self._due:
                    self._thread = None
                    return
                uid = self._due.pop()
            try:
                self._save(uid)
            except Exception:  # that user is saved at the next level, or at shutdown
                log.exception("saving the search index of %s failed", uid)
