"""The change feed: every commit to a user's projected graphs reaches every projection.

Whoever writes (the gate, the lifecycle, sources, a consolidation pass, the author stage), the
store runs :class:`ChangeFeed` as a commit hook: the commit carries a durable outbox entry
listing the nodes it touched and how (:mod:`kgmem.index.feed_outbox`). Draining reads a
user's entries oldest first in bounded batches, refreshes every target (the Kùzu projection,
the lexical index) with each batch's nodes (and which of them changed only by their links to
other nodes: the projection then re-reads just those links), and deletes the batch; a target
that fails leaves the batch in place for a later retry (with backoff), so nothing is lost and
nothing is skipped.

When it drains:

- in a background thread, shortly after commits (``debounce`` seconds after the first of a
  burst, so a burst is read in a few batches, not one refresh per commit);
- at once, in the committing thread, when a commit removed a node outright (a forget): when
  ``Lifecycle.forget`` returns, neither the outbox nor any projection still names it;
- for the *eager* targets (the lexical index), in the committing thread, as soon as the
  commit is written: a client's write is in the search index before it is acknowledged, so
  a search reads every write acknowledged before it without doing any write's work itself.
  The graph projection, whose commit can take seconds at scale, is not made to wait: the
  entries stay in the outbox until every target has them, and the drain skips a target
  that already read an entry (a refresh re-reads the store, so reading ahead loses nothing);
- on demand (:meth:`ChangeFeed.drain`), e.g. before a packet that must see its own writes;
- at start-up (:meth:`ChangeFeed.drain_all`): the entries a stopped or crashed process left.

A drain that empties a user's outbox tells every target that keeps a stamp
(:class:`StampedTarget`) the user's stamp as it read it before listing the entries: every
commit up to that stamp is in the target now, so a copy of it on disk with that stamp is level
with the store (:mod:`kgmem.index.feed_outbox`).

Never call :meth:`ChangeFeed.drain` while holding a store transaction: the background drain
may be waiting for that transaction to end.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.index.base import FeedTarget, Links, StampedTarget
from kgmem.index.feed_outbox import (
    Changes,
    Outbox,
    entry_users,
    projected_user,
    purged_users,
    touched_nodes,
    user_changes,
)
from kgmem.store import Changeset, QueryRegistry, TripleStore, UserGraphs

__all__ = ["ChangeFeed", "DrainReport", "FeedTarget", "StampedTarget"]

log = logging.getLogger("kgmem.index.feed")

_STAMP_ROUNDS = 3


@dataclass(frozen=True)
class DrainReport:
    """What one drain of one user did: entries read and deleted, in how many batches, and
    the targets that failed (their batch and every later entry are still in the outbox)."""

    uid: str
    drained: int = 0
    batches: int = 0
    failed: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failed


@dataclass
class _Eager:
    """One commit waiting to be refreshed into an eager target."""

    uid: str
    changes: Changes
    entry: URIRef | None
    done: bool = False


def _name(target: FeedTarget) -> str:
    return type(target).__name__


class ChangeFeed:
    """The commit hook that writes the outbox, and the drainer that empties it.

    ``batch`` bounds the entries and ``max_nodes`` the nodes one refresh call gets;
    ``retry`` is the first delay after a failed drain, doubled up to ``max_retry``.
    """

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        targets: Sequence[FeedTarget],
        *,
        debounce: float = 0.05,
        batch: int = 64,
        max_nodes: int = 2000,
        retry: float = 1.0,
        max_retry: float = 60.0,
        eager: Sequence[FeedTarget] = (),
    ) -> None:
        """``eager``: targets (among ``targets``) the committing thread catches up itself
        before the commit returns, so they hold every write acknowledged to a client."""
        if batch < 1 or max_nodes < 1:
            raise ValueError("batch and max_nodes must be at least 1")
        self._store, self._queries = store, queries
        self._targets = tuple(targets)
        self._eager = tuple(eager)
        if any(all(t is not e for t in self._targets) for e in self._eager):
            raise ValueError("an eager target must be one of the targets")
        self._outbox = Outbox(store, queries)
        self._debounce, self._batch, self._max_nodes = debounce, batch, max_nodes
        self._retry, self._max_retry = retry, max_retry
        self._drain_lock = threading.RLock()  # one drain at a time, whoever asks
        self._refreshing = [threading.Lock() for _ in self._targets]  # one refresh a target
        # per target: uid -> outbox entries it has read ahead of the drain (eager targets)
        self._ahead: list[dict[str, set[URIRef]]] = [{} for _ in self._targets]
        self._wake = threading.Condition()
        self._due: dict[str, float] = {}  # uid -> monotonic time to drain it at
        self._backoff: dict[str, float] = {}  # uid -> the delay of its last retry
        self._retry_at: dict[str, float] = {}  # uid -> no background drain before this
        self._attached = self._stopping = False
        self._local = threading.local()  # a commit's outbox entries, from before to after it
        self._queued = threading.Lock()  # guards _queue
        self._queue: list[list[_Eager]] = [[] for _ in self._targets]  # commits to refresh
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------

    def attach(self) -> None:
        """Start writing outbox entries with every commit (idempotent)."""
        if not self._attached:
            self._store.add_hook(self)
            self._attached = True

    def start(self) -> None:
        """Attach, and drain in the background from now on."""
        self.attach()
        with self._wake:
            if self._thread is not None:
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="kgmem-feed", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop draining in the background (a drain under way finishes first). While attached,
        entries are still written and purges still drained at once; whatever is left waits
        for :meth:`drain`, :meth:`start` or the next start-up."""
        with self._wake:
            self._stopping = True
            thread, self._thread = self._thread, None
            self._wake.notify_all()
        if thread is not None:
            thread.join()

    def detach(self) -> None:
        self.stop()
        if self._attached:
            self._store.remove_hook(self)
            self._attached = False

    @property
    def running(self) -> bool:
        return self._thread is not None

    # -- the commit hook -----------------------------------------------------------------

    def before_commit(self, changes: Changeset) -> Changeset:
        entries = self._outbox.entries_for(changes)
        if self._eager:  # after_commit (same thread) refreshes the eager targets with them
            written = getattr(self._local, "written", {})
            written[id(changes)] = entry_users(entries)
            self._local.written = written
        return entries

    def after_commit(self, changes: Changeset) -> None:
        """A purge drains now, in the committing thread (even with the background stopped:
        a forget must not wait for a restart); any other change is scheduled."""
        users = set(touched_nodes((*changes.add, *changes.remove)))
        users |= {u for g in changes.drop_graphs if (u := projected_user(g)) is not None}
        purged = purged_users(changes)
        if not getattr(self._local, "draining", 0):  # else the drain under way lists them next
            for uid in sorted(purged):
                self.drain(uid)
        written = getattr(self._local, "written", {}).pop(id(changes), {})
        if self._eager and users - purged:
            changed = user_changes((*changes.add, *changes.remove))
            for uid in sorted(users - purged):
                for target in self._eager:
                    self._refresh_now(target, uid, changed.get(uid, Changes()), written.get(uid))
        self._schedule(u for u in users if u not in purged)

    def _refresh_now(
        self, target: FeedTarget, uid: str, changed: Changes, entry: URIRef | None
    ) -> None:
        """Refresh an eager target with one commit's changes, in the committing thread; its
        entry is then marked done for that target (the drain skips it there).

        Commits that wait for the target meanwhile are refreshed together by the first of
        them to get it (a group commit): under load one refresh serves many writes."""
        at = next(i for i, t in enumerate(self._targets) if t is target)
        mine = _Eager(uid, changed, entry)
        with self._queued:
            self._queue[at].append(mine)
        with self._refreshing[at]:
            if mine.done:
                return
            with self._queued:
                batch, self._queue[at] = self._queue[at], []
            for user, group in itertools.groupby(
                sorted(batch, key=lambda e: e.uid), key=lambda e: e.uid
            ):
                self._refresh_group(at, user, list(group))
            for item in batch:
                item.done = True

    def _refresh_group(self, at: int, uid: str, group: list[_Eager]) -> None:
        """One refresh of target ``at`` with several commits of ``uid`` (lock held)."""
        changed = Changes()
        for item in group:
            changed.add(item.changes)
        try:
            nodes = self._outbox.with_owners(uid, changed.nodes)
        except Exception:  # the store failed: the drain refreshes the target later
            log.exception("reading the owners of %d nodes of %s failed", len(changed.nodes), uid)
            return
        if not self._refresh(self._targets[at], uid, nodes, changed.links()):
            return
        for entry in (item.entry for item in group if item.entry is not None):
            if self._outbox.holds(uid, entry):  # else a drain did it meanwhile
                self._ahead[at].setdefault(uid, set()).add(entry)

    # -- draining ------------------------------------------------------------------------

    def pending(self, uid: str) -> int:
        """How many entries of ``uid`` wait in the outbox."""
        return len(self._outbox.entries(uid))

    def stamp(self, uid: str) -> int | None:
        """``uid``'s stamp in the store (see :mod:`kgmem.index.feed_outbox`)."""
        return self._outbox.stamp(uid)

    def waiting(self) -> list[str]:
        """Users with outbox entries waiting."""
        return sorted(self._outbox.users())

    def drain_all(self) -> list[DrainReport]:
        """Drain every user with entries waiting."""
        return [self.drain(uid) for uid in self._outbox.users()]

    def drain(self, uid: str) -> DrainReport:
        """Drain ``uid``'s outbox now, oldest entries first; returns once it is empty (or a
        target failed: then a retry is scheduled)."""
        UserGraphs(uid)
        with self._drain_lock:
            with self._wake:
                self._due.pop(uid, None)
            # a target that commits (the pages) must not start a drain inside this one
            self._local.draining = getattr(self._local, "draining", 0) + 1
            try:
                report = self._drain(uid)
            except Exception:  # the store itself failed: nothing was deleted
                log.exception("draining the outbox of %s failed", uid)
                report = DrainReport(uid, failed=("store",))
            finally:
                self._local.draining -= 1
        if report.ok:
            with self._wake:
                self._backoff.pop(uid, None)
                self._retry_at.pop(uid, None)
        else:
            self._schedule_retry(uid)
        return report

    def _drain(self, uid: str) -> DrainReport:
        drained = batches = 0
        done: set[URIRef] = set()
        # A target may itself commit while it refreshes (the pages follow their entities):
        # its entries are drained in the same pass, and the stamp read again, so the stamp
        # the targets are told covers them (a few rounds at most; else the older stamp,
        # which only costs a comparison at the next start).
        stamp = self._outbox.stamp(uid)  # read first: every entry up to it is listed below
        for round_ in range(_STAMP_ROUNDS):
            while entries := self._outbox.entries(uid):
                if done.issuperset(entries):  # deleted but still listed: never spin on it
                    log.error("outbox entries of %s survive their deletion: %s", uid, entries[:3])
                    return DrainReport(uid, drained, batches, ("store",))
                for batch, nodes, links in self._batches(uid, entries):
                    failed = tuple(
                        _name(self._targets[at])
                        for at in range(len(self._targets))
                        if not self._apply(at, uid, batch, nodes, links)
                    )
                    if failed:
                        return DrainReport(uid, drained, batches, failed)
                    self._outbox.delete(uid, batch)
                    self._behind(uid, batch)
                    done.update(batch)
                    drained, batches = drained + len(batch), batches + 1
            now = self._outbox.stamp(uid)
            if now == stamp or round_ == _STAMP_ROUNDS - 1:
                break
            stamp = now  # read before listing again, as above
        for target in self._targets:
            if isinstance(target, StampedTarget):
                try:
                    target.level(uid, stamp)
                except Exception:  # the next start-up compares that user instead of trusting it
                    log.exception("%s failed to record the stamp of %s", _name(target), uid)
        return DrainReport(uid, drained, batches)

    def _apply(
        self, at: int, uid: str, batch: list[URIRef], nodes: set[URIRef], links: Links
    ) -> bool:
        """Refresh target ``at`` with a batch of the drain, unless it read the whole batch
        ahead (an eager target)."""
        with self._refreshing[at]:
            ahead = self._ahead[at].get(uid)
            if ahead is not None and ahead.issuperset(batch):
                return True
            return self._refresh(self._targets[at], uid, nodes, links)

    def _behind(self, uid: str, batch: list[URIRef]) -> None:
        """The drain deleted ``batch``: no target is ahead on it any more."""
        for at, lock in enumerate(self._refreshing):
            with lock:
                ahead = self._ahead[at].get(uid)
                if ahead is not None:
                    ahead.difference_update(batch)
                    if not ahead:
                        del self._ahead[at][uid]

    def _batches(
        self, uid: str, entries: list[URIRef]
    ) -> Iterator[tuple[list[URIRef], set[URIRef], Links]]:
        batch: list[URIRef] = []
        changes = Changes()
        for entry in entries:
            batch.append(entry)
            changes.add(self._outbox.changes(uid, entry))
            if len(batch) >= self._batch or len(changes.nodes) >= self._max_nodes:
                yield batch, self._outbox.with_owners(uid, changes.nodes), changes.links()
                batch, changes = [], Changes()
        if batch:
            yield batch, self._outbox.with_owners(uid, changes.nodes), changes.links()

    def _refresh(self, target: FeedTarget, uid: str, nodes: set[URIRef], links: Links) -> bool:
        try:
            target.refresh(uid, sorted(nodes), links)
        except Exception:
            log.exception("%s failed to refresh %d nodes of %s", _name(target), len(nodes), uid)
            return False
        return True

    # -- the background thread -----------------------------------------------------------

    def _schedule(self, users: Iterable[str]) -> None:
        """Drain ``users`` after the debounce delay (a user whose last drain failed: not
        before its retry is due, however often it commits)."""
        soon = time.monotonic() + self._debounce
        with self._wake:
            for uid in users:
                at = max(soon, self._retry_at.get(uid, soon))
                self._due[uid] = min(self._due.get(uid, at), at)
            self._wake.notify_all()

    def _schedule_retry(self, uid: str) -> None:
        with self._wake:
            delay = min(self._max_retry, self._backoff.get(uid, self._retry / 2) * 2)
            self._backoff[uid] = delay
            self._retry_at[uid] = at = time.monotonic() + delay
            self._due[uid] = at
            self._wake.notify_all()

    def _take_due(self) -> list[str] | None:
        """The users due now, waiting until one is; None once stopping."""
        with self._wake:
            while not self._stopping:
                now = time.monotonic()
                due = sorted(uid for uid, at in self._due.items() if at <= now)
                if due:
                    for uid in due:
                        del self._due[uid]
                    return due
                timeout = min(self._due.values()) - now if self._due else None
                self._wake.wait(timeout)
            return None

    def _run(self) -> None:
        while (due := self._take_due()) is not None:
            for uid in due:
                with self._wake:
                    if self._stopping:
                        return
                self.drain(uid)
