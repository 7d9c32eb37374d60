"""A user's own SPARQL query: the graphs it may read, and one run bounded in time and size.

A caller-supplied query never chooses what it reads. Its dataset is built here from the
caller's user id alone:

* by default, the default graph is the union of the caller's standing graphs
  (:attr:`~kgmem.store.graphs.UserGraphs.standing`) and every installed catalogue graph, and
  ``GRAPH ?g`` ranges over the same graphs;
* a query's ``FROM`` / ``FROM NAMED`` (or the SPARQL protocol's ``default-graph-uri`` /
  ``named-graph-uri``, which take precedence, as the protocol says) may only *narrow* that:
  naming any other graph (another user's, a proposal, the outbox, shapes, the accounts) is
  :class:`~kgmem.errors.Forbidden`, whether or not it exists;
* the dataset is always passed to the store explicitly, so a ``GRAPH <iri>`` of a graph
  outside it matches nothing, and ``FROM`` clauses this module misreads can only narrow the
  caller's own view, never widen it.

:class:`UserQueries` runs one such query. Updates, ``LOAD`` and ``SERVICE`` are refused on the
query's parse tree before anything runs (:mod:`kgmem.store.sparql_check`). A query that
returns more than ``limit`` rows or triples raises :class:`~kgmem.errors.ResultLimitExceeded`;
one that has not finished after ``timeout`` seconds raises :class:`~kgmem.errors.QueryTimeout`.

On a store on disk each query runs in a worker process on a checkpoint of the store
(:mod:`kgmem.store.isolated`): a timed-out query is stopped by killing its process, so it
frees its CPU at once, and a worker's memory is capped, so a query that grows without bound
ends with :class:`~kgmem.errors.QueryTooLarge` instead of growing the server. On an
in-memory store (tests, ``--in-memory``) there is nothing a process could read: the query
runs on a thread, and a timed-out one is abandoned and ends on its own.

At most ``slots`` queries run at once and one user's queries run one after another, so one
caller cannot take every slot (several callers can: more wait their turn); a query that
waits spends its own time budget waiting.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.errors import Forbidden, GraphNameError, QueryTimeout
from kgmem.store.base import Dataset, QueryResult, TripleStore
from kgmem.store.graphs import GraphKind, UserGraphs, parse_graph
from kgmem.store.isolated import QueryProcesses
from kgmem.store.sparql_check import check_query
from kgmem.vocab import PREFIXES

__all__ = ["DatasetRequest", "UserQueries", "dataset_clause", "readable_by", "user_dataset"]


@dataclass(frozen=True)
class DatasetRequest:
    """The graphs a query names (``FROM`` / ``FROM NAMED``) or a protocol request names
    (``default-graph-uri`` / ``named-graph-uri``); empty when it names none."""

    default: tuple[URIRef, ...] = ()
    named: tuple[URIRef, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.default or self.named)


def readable_by(uid: str, graph: URIRef) -> bool:
    """Whether user ``uid`` may read ``graph``: one of its standing graphs, or a catalogue graph.

    >>> readable_by("alice", URIRef("urn:kgmem:user:alice:kg"))
    True
    >>> readable_by("alice", URIRef("urn:kgmem:user:bob:kg"))
    False
    >>> readable_by("alice", URIRef("urn:kgmem:user:alice:outbox"))
    False
    """
    if graph in UserGraphs(uid).standing:
        return True
    try:
        return parse_graph(graph).kind is GraphKind.CATALOGUE
    except GraphNameError:
        return False


def user_dataset(
    uid: str,
    installed: Iterable[URIRef],
    *,
    requested: DatasetRequest | None = None,
    declared: DatasetRequest | None = None,
) -> Dataset:
    """The dataset of a query by ``uid`` on a store holding the graphs ``installed``.

    ``requested`` (the protocol's graph parameters) wins over ``declared`` (the query's own
    ``FROM`` clauses); both may only name graphs :func:`readable_by` the user.
    """
    requested, declared = requested or DatasetRequest(), declared or DatasetRequest()
    for graph in (*requested.default, *requested.named, *declared.default, *declared.named):
        if not readable_by(uid, graph):
            raise Forbidden(
                f"graph <{graph}> is not readable here: a query reads only your own graphs "
                "and the catalogue"
            )
    chosen = requested or declared
    if chosen:
        return Dataset(default=chosen.default, named=chosen.named)
    catalogue = tuple(g for g in installed if readable_by(uid, g))
    everything = tuple(dict.fromkeys((*UserGraphs(uid).standing, *catalogue)))
    return Dataset(default=everything, named=everything)


def dataset_clause(text: str) -> DatasetRequest:
    """The graphs a query's ``FROM`` and ``FROM NAMED`` clauses name, read from its parse tree.

    Prefixed names resolve with the query's own ``PREFIX`` declarations over kgmem's
    standard prefixes, relative IRIs against its ``BASE``, codepoint escapes as the grammar
    says; a query that may not run at all is :class:`~kgmem.errors.QueryRefused`.

    >>> clause = dataset_clause("PREFIX u: <urn:kgmem:user:a:> SELECT * FROM u:kg "
    ...                         "FROM NAMED <urn:x> WHERE { ?s ?p ?o }")
    >>> [str(g) for g in clause.default], [str(g) for g in clause.named]
    (['urn:kgmem:user:a:kg'], ['urn:x'])
    """
    checked = check_query(text, PREFIXES)
    return DatasetRequest(checked.default, checked.named)


class UserQueries:
    """Run users' own read-only queries, each scoped to its user, capped and timed."""

    def __init__(
        self,
        store: TripleStore,
        *,
        limit: int,
        timeout: float,
        slots: int = 2,
        processes: QueryProcesses | None = None,
    ) -> None:
        self._store, self.limit, self.timeout = store, limit, timeout
        self._slots = threading.BoundedSemaphore(slots)
        self._processes = processes
        self._turns = _Turns()

    def dataset(self, uid: str, text: str, requested: DatasetRequest | None = None) -> Dataset:
        """The dataset ``text`` reads when ``uid`` runs it (see :func:`user_dataset`)."""
        return user_dataset(
            uid, self._store.graphs(), requested=requested, declared=dataset_clause(text)
        )

    def run(self, uid: str, text: str, requested: DatasetRequest | None = None) -> QueryResult:
        """Run ``text`` for ``uid``; blocks for at most :attr:`timeout` seconds."""
        deadline = time.monotonic() + self.timeout
        dataset = self.dataset(uid, text, requested)
        with self._turns.turn(uid, deadline) as ready:
            if not ready or not self._slots.acquire(timeout=_left(deadline)):
                raise QueryTimeout(self.timeout, waited=True)
            if self._processes is not None:
                try:
                    return self._processes.run(
                        check_query(text, PREFIXES).text,
                        dataset,
                        PREFIXES,
                        limit=self.limit,
                        deadline=deadline,
                        timeout=self.timeout,
                    )
                finally:
                    self._slots.release()
            return self._on_thread(text, dataset, deadline)

    def close(self) -> None:
        """Stop the worker processes and remove their store copies."""
        if self._processes is not None:
            self._processes.close()

    def _on_thread(self, text: str, dataset: Dataset, deadline: float) -> QueryResult:
        outcome: Future[QueryResult] = Future()
        worker = threading.Thread(
            target=self._work, args=(text, dataset, outcome), name="kgmem-user-query", daemon=True
        )
        try:
            worker.start()
        except BaseException:
            self._slots.release()
            raise
        try:
            return outcome.result(timeout=_left(deadline))
        except FutureTimeout:
            raise QueryTimeout(self.timeout) from None

    def _work(self, text: str, dataset: Dataset, outcome: Future[QueryResult]) -> None:
        try:
            outcome.set_result(self._store.query_text(text, dataset=dataset, limit=self.limit))
        except BaseException as exc:  # handed to the caller, who may have stopped waiting
            _clear_locals(exc)
            outcome.set_exception(exc)
        finally:
            self._slots.release()


def _clear_locals(exc: BaseException) -> None:
    """Free what the frames of ``exc``'s traceback hold, here on the worker thread.

    A pyoxigraph result iterator must be dropped on the thread that made it; the exception
    travels to the caller's thread with its traceback, which would drop it there.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        traceback.clear_frames(current.__traceback__)
        current = current.__cause__ or current.__context__


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


class _Turns:
    """One running query per user: a user's next query waits for the one before it."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy: set[str] = set()

    @contextmanager
    def turn(self, uid: str, deadline: float) -> Iterator[bool]:
        """Wait until ``uid`` has no query running (yields ``False`` if the deadline came)."""
        with self._changed:
            ready = self._changed.wait_for(lambda: uid not in self._busy, timeout=_left(deadline))
            if ready:
                self._busy.add(uid)
        try:
            yield ready
        finally:
            if ready:
                with self._changed:
                    self._busy.discard(uid)
                    self._changed.notify_all()
