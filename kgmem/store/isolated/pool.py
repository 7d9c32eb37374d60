"""Worker processes for users' queries, and the read-only store copies they read.

:class:`QueryProcesses` runs each query in a process of its own (:mod:`.child`) on a
checkpoint of the store, so a query that runs too long is *stopped*, by killing its process,
and one that grows too large ends its process, not the server. A checkpoint is made only
when the store has been written since the last one (RocksDB hard-links its files: tens of
milliseconds, plus flushing what is still in memory), so a query always reads every write
acknowledged before it started.
"""

from __future__ import annotations

import itertools
import logging
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from kgmem.errors import (
    QueryRefused,
    QueryTimeout,
    QueryTooLarge,
    ResultLimitExceeded,
    StoreOperationFailed,
)
from kgmem.store.base import AskResult, Dataset, GraphResult, QueryResult, SelectResult
from kgmem.store.isolated import child
from kgmem.store.ox_terms import dataset_to_ox, from_ox, triple_from_ox

__all__ = ["QueryProcesses", "Snapshottable"]

log = logging.getLogger(__name__)


class Snapshottable(Protocol):
    """A store that can copy itself for reading elsewhere."""

    @property
    def generation(self) -> int:
        """A number that changes whenever the store is written."""
        ...

    def snapshot(self, target: Path) -> None:
        """Write a read-only copy of the store into the new directory ``target``."""
        ...


@dataclass
class _Snapshot:
    path: Path
    generation: int
    readers: int = 0
    superseded: bool = False


class _Snapshots:
    """The newest checkpoint, shared by every query that starts before the next write."""

    def __init__(self, store: Snapshottable, root: Path) -> None:
        self._store, self._root = store, root
        self._lock = threading.Lock()
        self._latest: _Snapshot | None = None
        self._names = itertools.count()
        shutil.rmtree(root, ignore_errors=True)  # left by a process that did not close

    def take(self) -> _Snapshot:
        with self._lock:
            generation = self._store.generation  # read first: the copy holds at least this
            latest = self._latest
            if latest is None or latest.generation != generation:
                self._root.mkdir(parents=True, exist_ok=True)
                path = self._root / f"{generation}-{next(self._names)}"
                self._store.snapshot(path)
                if latest is not None:
                    latest.superseded = True
                    self._forget(latest)
                latest = self._latest = _Snapshot(path, generation)
            latest.readers += 1
            return latest

    def give_back(self, snapshot: _Snapshot) -> None:
        with self._lock:
            snapshot.readers -= 1
            self._forget(snapshot)

    def _forget(self, snapshot: _Snapshot) -> None:
        if snapshot.superseded and snapshot.readers == 0:
            shutil.rmtree(snapshot.path, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._latest = None
            shutil.rmtree(self._root, ignore_errors=True)


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    requests: IO[bytes] = field(init=False)
    replies: IO[bytes] = field(init=False)

    def __post_init__(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests, self.replies = self.process.stdin, self.process.stdout

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.requests.close()
        self.replies.close()


class QueryProcesses:
    """Run queries in worker processes, each bounded in time and memory."""

    def __init__(self, store: Snapshottable, snapshots: Path, *, memory_bytes: int) -> None:
        self.memory_bytes = memory_bytes
        self._snapshots = _Snapshots(store, snapshots)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self.offline: bool | None = None  # whether the last worker started left the network

    def run(
        self,
        text: str,
        dataset: Dataset,
        prefixes: dict[str, str],
        *,
        limit: int | None,
        deadline: float,
        timeout: float,
    ) -> QueryResult:
        """Answer ``text`` before the monotonic ``deadline`` or raise :class:`QueryTimeout`."""
        snapshot = self._snapshots.take()
        try:
            worker = self._worker()
            union, default, named = dataset_to_ox(dataset)
            request = {
                "snapshot": str(snapshot.path),
                "text": text,
                "prefixes": prefixes,
                "union": union,
                "default": default,
                "named": named,
                "limit": limit,
            }
            try:
                child.write_frame(worker.requests, request)
                reply = _read_before(worker, deadline, self.memory_bytes)
            except TimeoutError:
                worker.kill()
                raise QueryTimeout(timeout) from None
            except _Outgrown:
                worker.kill()
                raise QueryTooLarge(self.memory_bytes) from None
            except (EOFError, OSError):
                code = worker.process.poll()
                worker.kill()
                log.warning("a query's worker process ended with %s", code)
                raise StoreOperationFailed("query", f"the worker process ended ({code})") from None
            if reply[:2] == ("error", "memory"):
                worker.kill()
            else:
                self._give_back(worker)
        finally:
            self._snapshots.give_back(snapshot)
        return _result(reply, self.memory_bytes)

    def _worker(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise StoreOperationFailed("query", "the query workers are closed")
            if self._idle:
                return self._idle.pop()
        process = subprocess.Popen(
            [sys.executable, "-I", child.__file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # nothing of the server's environment; two malloc arenas, so a worker's memory is
            # what its query holds, not per-thread reservations
            env={"MALLOC_ARENA_MAX": "2"},
        )
        worker = _Worker(process)
        try:
            ready = _read_before(worker, time.monotonic() + 30, None)
        except (TimeoutError, EOFError, OSError) as exc:
            worker.kill()
            raise StoreOperationFailed("query", f"a query worker did not start: {exc}") from exc
        assert ready[0] == "ready"
        if not ready[1] and self.offline is not False:
            log.warning(
                "query workers keep the network: this kernel refuses them a network namespace "
                "(the SPARQL parse-tree check still refuses SERVICE)"
            )
        self.offline = bool(ready[1])
        return worker

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if not self._closed:
                self._idle.append(worker)
                return
        worker.kill()

    def close(self) -> None:
        """Stop every idle worker and remove the checkpoints; running ones end with their
        query (and are killed when this process exits)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()
        self._snapshots.close()


class _Outgrown(Exception):
    """The worker's resident memory grew past its budget."""


_WATCH = 0.02  # seconds between two looks at a working worker's memory
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _resident(pid: int) -> int:
    """Bytes of ``pid`` in memory (0 once it is gone)."""
    try:
        with Path(f"/proc/{pid}/statm").open(encoding="ascii") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _read_before(worker: _Worker, deadline: float, budget: int | None) -> Any:
    """The worker's next frame; :class:`TimeoutError` at ``deadline``, :class:`_Outgrown` if
    its resident memory grows more than ``budget`` bytes over what it held when asked."""
    fd, pid = worker.replies.fileno(), worker.process.pid
    ceiling = None if budget is None else _resident(pid) + budget
    remaining = deadline - time.monotonic()
    while remaining > 0:
        readable, _, _ = select.select([fd], [], [], min(remaining, _WATCH))
        if readable:
            return child.read_frame(worker.replies)
        if ceiling is not None and _resident(pid) > ceiling:
            raise _Outgrown()
        remaining = deadline - time.monotonic()
    raise TimeoutError("no answer before the deadline")


def _result(reply: tuple[Any, ...], memory_bytes: int) -> QueryResult:
    kind = reply[0]
    if kind == "ask":
        return AskResult(reply[1])
    if kind == "select":
        names: list[str] = reply[1]
        rows = tuple(
            {n: from_ox(v) for n, v in zip(names, values, strict=True) if v is not None}
            for values in reply[2]
        )
        return SelectResult(tuple(names), rows)
    if kind == "graph":
        return GraphResult(tuple(triple_from_ox(t) for t in reply[1]))
    _, why, message = reply
    if why == "limit":
        raise ResultLimitExceeded(int(message))
    if why == "syntax":
        raise QueryRefused(f"not a SPARQL query: {message}")
    if why == "evaluation":
        raise QueryRefused(f"the query cannot be evaluated: {message}")
    if why == "memory":
        raise QueryTooLarge(memory_bytes)
    raise StoreOperationFailed("query", message)
