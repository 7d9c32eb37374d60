"""The graph projection on Kùzu (embedded, a directory on disk).

One read-write process per directory, like the store: the server owns it, the command line
opens it only when no server runs. Every call holds a lock, so a refresh reads the store
and writes the projection with no other change of this projection in between.

The database also keeps each user's stamp it is level with (:mod:`kgmem.index.feed_outbox`):
set after a rebuild or a reconciliation (the stamp read before the store was) and whenever
the change feed drained the user (:meth:`KuzuProjection.level`). Start-up compares only the
users whose stamp differs from the store's (:meth:`KuzuProjection.unlevel`).
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import combinations
from pathlib import Path
from types import TracebackType

from rdflib import URIRef

from kgmem.index.base import Links, Neighbour, OpenReport, ReconcileReport
from kgmem.index.digests import CaughtUp, Digests
from kgmem.index.feed_outbox import Outbox
from kgmem.index.kuzu.graph import KuzuGraph
from kgmem.index.kuzu.opening import mark_closed, open_database
from kgmem.index.kuzu.params import closed
from kgmem.index.kuzu.paths import ABOUT_COUNTS, OUTLINE
from kgmem.index.reader import NodeSet, StoreReader
from kgmem.index.rows import Fingerprint, FingerprintSum, UserRows, differing, fingerprint_of
from kgmem.index.slices import Ungrouped, UserSlices
from kgmem.progress import Progress
from kgmem.store import QueryRegistry, TripleStore, Unreadable, check_id

log = logging.getLogger("kgmem.index")

__all__ = ["KuzuProjection"]

MAX_HOPS = 3
_UNREAD = Fingerprint(())  # a repair from the digests reads no rows to compare
# A user with more rows (~30k memories) is compared a slice at a time, and rewritten whole
# when it differs: comparing row by row holds both sides' rows, ~20 KB a memory.
_PARTIAL_ROWS = 200_000


class KuzuProjection:
    """A :class:`~kgmem.index.base.GraphProjection` in a Kùzu database under ``directory``.

    Opening never fails on a damaged database: it is moved aside, a new one is created and
    every user is loaded from the store; :attr:`opened` says what happened.
    """

    def __init__(
        self,
        directory: Path,
        store: TripleStore,
        queries: QueryRegistry,
        digests: Digests | None = None,
        buffer_megabytes: int = 0,
    ) -> None:
        """``buffer_megabytes``: the most Kùzu's buffer pool holds (0: Kùzu's default)."""
        self._lock = threading.RLock()
        self._buffer = buffer_megabytes
        self._digests = digests  # what changed after a drift, when they know
        # found unlevel and not reconciled yet -> whether their rows were whole then (the
        # counts held): level() keeps their stamp (it only records the counts of the rows)
        self._behind: dict[str, bool] = {}
        self._versions: dict[str, int] = {}  # uid -> bumped by every write of its rows
        self._reader = StoreReader(store, queries)
        self._outbox = Outbox(store, queries)
        opened = open_database(directory, buffer_megabytes)
        self._graph = KuzuGraph(opened.database, buffer_megabytes)
        rebuilt: tuple[str, ...] = ()
        if opened.created:
            rebuilt = tuple(sorted(self._reader.users()))
            for uid in rebuilt:
                self.rebuild(uid)
        self._opened = OpenReport(
            directory, opened.created, opened.reason, opened.moved_to, rebuilt
        )

    @property
    def opened(self) -> OpenReport:
        return self._opened

    def __enter__(self) -> KuzuProjection:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._graph.close()
            mark_closed(self._opened.path)

    # -- writes ------------------------------------------------------------------------

    def rebuild(self, uid: str, progress: Progress | None = None) -> Fingerprint:
        """Write ``uid``'s rows again from the store, a slice at a time (see
        :mod:`kgmem.index.slices`): what the rebuild holds does not grow with the user."""
        check_id(uid, "user id")
        with self._lock:
            stamp = self._outbox.stamp(uid)  # first: the rows read next hold every write to it
            try:
                fingerprint = self._from_store(uid, self._graph.replace_user, progress)
            finally:
                self._bump(uid)
            self._behind.pop(uid, None)
            self._graph.set_stamp(uid, stamp)
        return fingerprint

    def _from_store(
        self, uid: str, use: Callable[[str, Iterable[UserRows]], None], progress: Progress | None
    ) -> Fingerprint:
        """``use(uid, slices)`` with ``uid``'s rows read from the store a slice at a time,
        or whole when the store's rows do not come grouped by node; their fingerprint."""
        total = FingerprintSum()

        def summed(slices: Iterable[UserRows]) -> Iterator[UserRows]:
            for rows in slices:
                total.add(rows)
                yield rows

        try:
            use(uid, summed(UserSlices(self._reader, uid, progress=progress)))
        except Ungrouped as exc:
            log.warning("graph projection of %s read whole: %s", uid, exc)
            total = FingerprintSum()
            use(uid, summed([closed(self._reader.user(uid, progress))]))
        return total.fingerprint()

    def level(self, uid: str, stamp: int | None) -> None:
        """The change feed drained every write of ``uid`` up to ``stamp`` into the rows
        (not recorded for a user :meth:`unlevel` found behind until :meth:`reconcile`: a
        write drained before the repair must not make a drifted user look level)."""
        check_id(uid, "user id")
        with self._lock:
            if uid not in self._behind:
                self._graph.set_stamp(uid, stamp)
            elif (recorded := self._graph.stamps().get(uid)) is not None:
                self._graph.set_stamp(uid, recorded.stamp)

    def unlevel(self) -> list[str]:
        """The users (of the store or the projection) that may differ from the store: their
        recorded stamp is not the store's, or the projection holds another number of their
        rows than when it was recorded (rows lost or damaged behind its back). A change to
        the store behind kgmem's back moves no stamp: :meth:`reconcile_all` compares all."""
        with self._lock:
            recorded, counts = self._graph.stamps(), self._graph.counts()
            for uid in self._reader.users() | set(counts):
                held = recorded.get(uid)
                whole = held is not None and held.holds(counts.get(uid, {}))
                if held is None or not whole or held.stamp != self._outbox.stamp(uid):
                    self._behind[uid] = whole
            return sorted(self._behind)

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> None:
        """Re-read ``nodes`` from the store and replace them and every edge at them.

        Any IRI may be given: a memory, entity, page or source is re-read (deleted when the
        store no longer has it); a claim or evidence item stands for its memory; a memory
        also refreshes the entities it touches, in the store and in the projection, since
        their facts and shared-memory links depend on its status.

        With ``links`` (what the change feed's entries say), an entity whose own data did not
        change (``links.only``: say the user's own entity when a fact about them was written)
        keeps its node and its other edges: only the facts and shared-memory counts between
        it and the entities the change links it to, or that a changed memory touches, are
        read again. A hub's refresh then costs what the change touched, not its thousands
        of edges.
        """
        check_id(uid, "user id")
        wanted = {URIRef(str(n)) for n in nodes}
        if not wanted:
            return
        with self._lock:
            try:
                self._refresh(uid, wanted, links)
            finally:
                self._bump(uid)

    def version(self, uid: str) -> int:
        """A number that changes whenever ``uid``'s rows may have (never waits for a write
        under way: a reader caching what it read keys it by this)."""
        return self._versions.get(uid, 0)

    def _bump(self, uid: str) -> None:
        self._versions[uid] = self._versions.get(uid, 0) + 1

    def _refresh(self, uid: str, wanted: set[URIRef], links: Links | None) -> None:
        stored = self._reader.classify(uid, wanted)
        held = self._graph.holding(uid, wanted)
        memories = stored.memories | held.memories
        if links is None:
            touched = self._reader.memory_entities(uid, memories)
            linked = self._graph.linked_entities(uid, memories)
            affected = stored | held | NodeSet(entities=frozenset(touched | linked))
            self._graph.replace_nodes(uid, affected, self._reader.around(uid, affected))
            return
        ends = {e for pair in links.pairs for e in pair} - wanted
        entities = stored.entities | held.entities | self._entities(uid, ends)
        own = frozenset((stored.entities | held.entities) - links.only)
        groups = [set(pair) for pair in links.pairs if entities.issuperset(pair)]
        groups += self._reader.memory_entity_sets(uid, memories).values()
        groups += self._graph.memory_entity_sets(uid, memories).values()
        pairs = {
            (str(a), str(b))
            for group in groups
            for a, b in combinations(sorted(group, key=str), 2)
            if a not in own and b not in own
        }
        affected = NodeSet(own, memories, stored.pages | held.pages, stored.sources | held.sources)
        rows = self._reader.around(uid, affected)
        rows |= self._reader.between(uid, [(URIRef(a), URIRef(b)) for a, b in pairs])
        self._graph.replace_nodes(uid, affected, rows, pairs)

    def _entities(self, uid: str, iris: set[URIRef]) -> frozenset[URIRef]:
        """Which of ``iris`` are entities, in the store or in the projection."""
        return self._reader.classify(uid, iris).entities | self._graph.holding(uid, iris).entities

    # -- reads -------------------------------------------------------------------------

    def neighbourhood(
        self, uid: str, entity: URIRef, hops: int = 1, limit: int = 50
    ) -> list[Neighbour]:
        check_id(uid, "user id")
        if not 1 <= hops <= MAX_HOPS:
            raise ValueError(f"hops must be 1..{MAX_HOPS}, not {hops}")
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        with self._lock:
            return self._graph.neighbourhood(uid, str(entity), hops, limit)

    def rows(self, uid: str) -> UserRows:
        check_id(uid, "user id")
        with self._lock:
            return self._graph.rows(uid)

    def outline(self, uid: str) -> tuple[UserRows, dict[str, int]]:
        """What the memory browser draws of the user: entities, facts, pages' entities and
        entities sharing memories; and how many memories are about each entity."""
        check_id(uid, "user id")
        with self._lock:
            rows = self._graph.rows(uid, OUTLINE)
            counts = self._graph.run(ABOUT_COUNTS, {"uid": uid})
        return rows, {str(entity): int(n) for entity, n in counts}

    def users(self) -> list[str]:
        with self._lock:
            return sorted(self._graph.users())

    def fingerprint(self, uid: str) -> Fingerprint:
        check_id(uid, "user id")
        with self._lock:
            return self._graph.fingerprint(uid)

    def store_fingerprint(self, uid: str) -> Fingerprint:
        check_id(uid, "user id")
        return self._from_store(uid, _read, None)

    def unreadable(self, uid: str) -> list[Unreadable]:
        """The values and records of ``uid`` that reading the store met and could not read
        (they are projected as absent, or left out); a rebuild or
        :meth:`store_fingerprint` reads every one."""
        check_id(uid, "user id")
        return self._reader.unreadable(uid)

    # -- checks ------------------------------------------------------------------------

    def reconcile(self, uid: str) -> ReconcileReport:
        check_id(uid, "user id")
        caught = self._caught_up(uid)
        if caught is not None:
            with self._lock:
                if caught.nodes:
                    try:
                        self._refresh(uid, set(caught.nodes), None)
                    finally:
                        self._bump(uid)
                self._behind.pop(uid, None)
                self._graph.set_stamp(uid, caught.stamp)
            return ReconcileReport(uid, _UNREAD, _UNREAD, bool(caught.nodes), len(caught.nodes))
        with self._lock:
            stamp = self._outbox.stamp(uid)
            found = self._graph.fingerprint(uid)
            expected = self._from_store(uid, _read, None)
            if found != expected:
                try:
                    if found.total > _PARTIAL_ROWS or expected.total > _PARTIAL_ROWS:
                        self._from_store(uid, self._graph.replace_user, None)
                    else:
                        self._repair(uid, closed(self._reader.user(uid)), self._graph.rows(uid))
                finally:
                    self._bump(uid)
            self._behind.pop(uid, None)
            self._graph.set_stamp(uid, stamp)
            return ReconcileReport(uid, found, expected, repaired=found != expected)

    def _caught_up(self, uid: str) -> CaughtUp | None:
        """What changed in ``uid``'s nodes since the stamp the projection recorded, when the
        digests know (a drift: the store moved by writes no outbox entry lists) and the
        projection still holds the rows it recorded; None otherwise (compare in full).
        Asked outside the lock: reading the digests takes seconds, and searches go on."""
        if self._digests is None or not self._behind.get(uid, True):
            return None  # rows lost or damaged: only the whole compare finds which
        with self._lock:
            recorded = self._graph.stamps().get(uid)
            if recorded is None or not recorded.holds(self._graph.user_counts(uid)):
                return None
        if recorded.stamp == self._outbox.stamp(uid):
            return None
        return self._digests.since(uid, recorded.stamp)

    def _repair(self, uid: str, rows: UserRows, held: UserRows) -> None:
        """Make ``uid``'s rows ``rows`` (the store's) where they are ``held``: only the nodes
        whose rows differ are written again, as a refresh writes them, unless most do.
        Measured: Kùzu segfaulted deleting a 100k-memory user's every row in place (twice
        on one database; kuzudb/kuzu#4221), where a drift touches a few nodes."""
        changed = {URIRef(n) for n in differing(rows, held)}
        nodes = sum(len(t) for t in (rows.entities, rows.memories, rows.pages, rows.sources))
        if len(changed) * 2 > max(nodes, 1):
            self._graph.replace_user(uid, [rows])
            return
        self._refresh(uid, changed, None)
        if fingerprint_of(self._graph.rows(uid)) != fingerprint_of(rows):
            log.warning("graph projection of %s still differs after a partial repair", uid)
            self._graph.replace_user(uid, [rows])

    def reconcile_all(
        self, *, fresh: bool = False, skip: Collection[str] = ()
    ) -> list[ReconcileReport]:
        """:meth:`reconcile` every user but ``skip``; ``fresh``: compare them all first, and
        on any drift write the whole projection (``skip`` too) into a new database instead.

        Kùzu reads some damaged pages as rows that are not there, without an error, and
        crashes the process when it deletes from them; start-up therefore repairs drift
        into a new database, which nothing damaged can be under."""
        with self._lock:
            users = sorted((self._reader.users() | self._graph.users()) - set(skip))
            if not fresh:
                return [self.reconcile(uid) for uid in users]
            reports, stamps = [], {}
            for uid in users:
                stamps[uid] = self._outbox.stamp(uid)
                expected = self._from_store(uid, _read, None)
                found = self._graph.fingerprint(uid)
                reports.append(ReconcileReport(uid, found, expected, repaired=found != expected))
            if any(r.repaired for r in reports):
                self._renew()
            else:
                for uid, stamp in stamps.items():
                    self._graph.set_stamp(uid, stamp)
            return reports

    def _renew(self) -> None:
        """Replace the database with a new one holding every user of the store."""
        self._graph.close()
        shutil.rmtree(self._opened.path, ignore_errors=True)
        opened = open_database(self._opened.path, self._buffer)
        self._graph = KuzuGraph(opened.database, self._buffer)
        for uid in sorted(self._reader.users()):
            self.rebuild(uid)


def _read(uid: str, slices: Iterable[UserRows]) -> None:
    """Read ``slices`` to the end (their fingerprint is summed on the way)."""
    for _ in slices:
        pass
