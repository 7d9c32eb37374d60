"""Which users' search shards are in memory, and how each got there (the lifecycle half of
:class:`~kgmem.index.lexical.index.LexicalIndex`, which adds what is asked of them).

A saved shard (:mod:`kgmem.index.lexical.saved`) is loaded when its stamp is the store's
(every write moves its user's stamp: :mod:`kgmem.index.feed_outbox`), or caught up when the
outbox still holds every write since (those nodes are read again; a write to a user not in
memory loads them so); else it is rebuilt and saved. Saves: after a rebuild, ``save_every``
seconds after a change, at eviction and at :meth:`ResidentShards.flush`. A file that cannot
be caught up, or whose shard lost a document, is deleted at once: a forgotten text never
waits on disk for the next save. ``resident`` bounds the documents held: past it, the least
recently used shards are saved and let go.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path

from rdflib import URIRef

from kgmem.index.dense import Embedder
from kgmem.index.digests import Digests
from kgmem.index.feed_outbox import Outbox
from kgmem.index.lexical.docs import FIELD_WEIGHTS
from kgmem.index.lexical.read import LexicalReader, Update
from kgmem.index.lexical.saved import Saver, ShardFiles
from kgmem.index.lexical.shard import Shard
from kgmem.store import (
    Damage,
    QueryRegistry,
    TripleStore,
    UserGraphs,
)

__all__ = ["ResidentShards"]

log = logging.getLogger("kgmem.index")
_GONE = -1  # the stamp of a deleted file (a stamp is a time in nanoseconds)


class ResidentShards:
    """Each user's shard: held in memory, loaded, caught up, rebuilt, saved and let go (see
    the module); thread-safe."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        *,
        field_weights: Mapping[str, int] | None = None,
        embedder: Embedder | None = None,
        directory: Path | None = None,
        resident: int | None = None,
        save_every: float = 600.0,
        background: bool = False,
        digests: Digests | None = None,
    ) -> None:
        """``field_weights`` overrides the weight of a field's words (see ``FIELD_WEIGHTS``;
        0 leaves the field out): the recall benchmarks use it to measure what a field adds.
        ``embedder`` (the optional extra) adds a vector per document: :meth:`meaning`.
        ``directory``: where shards are saved (None: memory only); ``resident``: the most
        documents held in memory (None: no bound); ``save_every``: seconds between saves of
        a changing shard (see the module); ``background``: a saved shard behind the store
        by writes the outbox no longer holds (a backup put back) is searched as saved while
        it is rebuilt in a thread of its own (a search checks each hit with the store), where
        without it the first search waits for the rebuild. ``digests``: what changed in
        such a case, when they know: only those documents are read again."""
        self._store, self._queries = store, queries
        self._embedder = embedder
        self._weights = {**FIELD_WEIGHTS, **(field_weights or {})}
        self._files = None if directory is None else ShardFiles(directory)
        self._resident, self._save_every = resident, save_every
        self._background, self._digests = background, digests
        self._renewing: set[str] = set()  # users searched in a stale shard while rebuilt
        self._outbox = Outbox(store, queries)
        self._versions: dict[str, int] = {}  # bumped by every refresh and rebuild
        self._shards: OrderedDict[str, Shard] = OrderedDict()  # least recently used first
        self._level: dict[str, int | None] = {}  # uid -> the stamp its shard is level with
        self._saved: dict[str, tuple[int | None, float]] = {}  # uid -> (stamp, when) on disk
        self._opening: dict[str, threading.Lock] = {}  # one load or rebuild of a user at once
        self._origins: dict[str, str] = {}  # uid -> where its shard in memory came from
        self._saver = Saver(self._save)
        self._building: dict[str, list[URIRef | str]] = {}  # nodes changed during a rebuild
        self._lock = threading.RLock()  # the shards: searches, and putting documents in place
        self._refreshing = threading.Lock()  # one refresh at a time
        self._reader = LexicalReader(store, queries, Damage(log))
        self.damage = self._reader.damage  # what the reads met that they could not read

    def rebuild(self, uid: str) -> int:
        """Rebuild ``uid``'s documents from the store (and save them); returns how many
        there are. Searches of other users go on meanwhile; changes refreshed during the
        rebuild are applied to the new documents."""
        return self._open(uid, saved=False) or 0

    def open(self, uid: str) -> int:
        """Hold ``uid``'s documents in memory: its saved shard if it is level with the
        store, else rebuilt from the store; how many documents."""
        return self._open(uid, saved=True) or 0

    def origin(self, uid: str) -> str | None:
        """Where ``uid``'s shard in memory came from: ``"saved"`` (loaded from its file),
        ``"store"`` (rebuilt) or ``"stale"`` (saved before writes no one can replay, searched
        while it is rebuilt); None when it is not in memory."""
        with self._lock:
            return self._origins.get(uid) if uid in self._shards else None

    def resident(self) -> dict[str, int]:
        """The users whose shards are in memory, least recently used first: their sizes."""
        with self._lock:
            return {uid: len(shard.docs) for uid, shard in self._shards.items()}

    def renewing(self) -> list[str]:
        """The users searched in a stale shard while it is rebuilt (see ``background``)."""
        with self._lock:
            return sorted(self._renewing)

    def intact(self, uid: str) -> bool:
        """Whether ``uid``'s shard is in memory, or saved with the store's stamp now (its
        header says so; the payload is checked when it is loaded)."""
        with self._lock:
            if uid in self._shards:
                return True
        header = None if self._files is None else self._files.header(uid, self._weights)
        return header is not None and header.stamp == self._outbox.stamp(uid)

    def _open(self, uid: str, *, saved: bool, build: bool = True) -> int | None:
        """Load (``saved``) or rebuild ``uid``'s shard and hold it; how many documents.
        ``build=False``: only a load, None when there is nothing to load."""
        UserGraphs(uid)  # a malformed uid is refused before anything is read
        with self._lock:
            opening = self._opening.setdefault(uid, threading.Lock())
        with opening:
            with self._lock:
                if saved and uid in self._shards:
                    return len(self._shards[uid].docs)
                self._building.setdefault(uid, [])
            try:
                stamp = self._outbox.stamp(uid)  # first: the shard holds every write up to it
                loaded = self._load(uid, stamp) if saved else None
                if loaded is None and not build:
                    return None
                shard, behind, was = loaded or (
                    self._reader.build(uid, self._weights, self._embedder),
                    set[URIRef](),
                    stamp,
                )
            finally:
                with self._lock:
                    changed = self._building.pop(uid, [])
            with self._lock:
                self._apply(uid, shard, [*(behind or ()), *changed])
                self._shards[uid] = shard
                self._shards.move_to_end(uid)
                if behind is None:  # stale: never saved, nor level with any stamp
                    self._renew(uid, was)
                else:
                    self._renewing.discard(uid)
                    self._level[uid] = stamp
                    self._origins[uid] = "store" if loaded is None else "saved"
                if loaded is not None and behind is not None:  # saved at the next level
                    self._saved[uid] = (was, time.monotonic() if was == stamp else 0.0)
            if loaded is None:
                self._save(uid)
            self._evict(keep=uid)
            return len(shard.docs)

    def _renew(self, uid: str, was: int | None, *, damaged: bool = False) -> None:
        """Bring ``uid``'s stale shard (saved at stamp ``was``) level in a thread of its own
        (the lock is held): the documents the digests say changed are read again, or, when
        they cannot say (or a saved document was ``damaged``), the shard is rebuilt; the
        stale one answers meanwhile and takes every refresh, as the new one will."""
        self._renewing.add(uid)
        self._level.pop(uid, None)
        self._origins[uid] = "stale"

        def run() -> None:
            try:
                if damaged or not self._caught_up(uid, was):
                    self._open(uid, saved=False)
            except Exception:  # searched stale until the next start rebuilds it
                log.exception("rebuilding the search index of %s failed", uid)

        threading.Thread(target=run, name=f"kgmem-reindex-{uid}", daemon=True).start()

    def _caught_up(self, uid: str, was: int | None) -> bool:
        """Read again the documents of ``uid``'s stale shard that changed since ``was``, if
        the digests know which; whether it is level now."""
        caught = None if self._digests is None else self._digests.since(uid, was)
        if caught is None:
            return False
        with self._lock:
            shard = self._shards.get(uid)
            if shard is None or uid not in self._renewing:
                return False
            self._apply(uid, shard, caught.nodes)
            self._renewing.discard(uid)
            self._level[uid] = caught.stamp
            self._origins[uid] = "saved"
        self._saver.later(uid)
        return True

    def _load(
        self, uid: str, stamp: int | None
    ) -> tuple[Shard, set[URIRef] | None, int | None] | None:
        if self._files is None:
            return None
        loaded = self._files.caught_up(
            uid,
            stamp,
            self._weights,
            self._outbox,
            stale=self._background,
            digests=self._digests,
        )
        if loaded is not None and self._embedder is not None:  # vectors are not saved
            loaded[0].embed_all(self._embedder)
        return loaded

    def level(self, uid: str, stamp: int | None) -> None:
        """The change feed drained every write of ``uid`` up to ``stamp`` into the shard;
        saved soon (in the background) if it changed since the last save and that save is
        old enough."""
        with self._lock:
            if uid not in self._shards or uid in self._building or uid in self._renewing:
                return
            self._level[uid] = stamp
            last = self._saved.get(uid)
            due = last is None or (
                last[0] != stamp and time.monotonic() - last[1] >= self._save_every
            )
        if due:  # in the saver's thread: a drain may run in a committing thread (a purge)
            self._saver.later(uid)

    def flush(self) -> int:
        """Save every shard in memory that changed since its last save; how many."""
        self._saver.clear()
        with self._lock:
            users = [
                u
                for u in self._shards
                if u not in self._renewing
                and (u not in self._saved or self._saved[u][0] != self._level.get(u))
            ]
        for uid in users:
            self._save(uid)
        return len(users)

    def _save(self, uid: str) -> None:
        if self._files is None:
            return
        with self._lock:
            shard = self._shards.get(uid)
            if shard is None or uid in self._renewing:
                return
            stamp = self._level.get(uid)
            payload = self._files.dump(shard)
            documents = len(shard.docs)
        try:
            self._files.write(uid, payload, stamp, self._weights, documents)
        except OSError as exc:  # the next start rebuilds this user: slower, never wrong
            log.warning("saving the search index of %s failed: %s", uid, exc)
            return
        with self._lock:
            if self._shards.get(uid) is shard:
                self._saved[uid] = (stamp, time.monotonic())

    def _evict(self, keep: str) -> None:
        """Let go of the shards used least recently while more than ``resident`` documents
        are held (``keep`` stays, whatever its size); each is saved first if it changed
        since its last save (at a million memories over 100 users, saving every shard let
        go, unchanged, in the search that let it go cost that search ~100 ms)."""
        if self._resident is None:
            return
        while True:
            with self._lock:
                held = sum(len(s.docs) for s in self._shards.values())
                victim = next((u for u in self._shards if u != keep), None)
                if held <= self._resident or victim is None:
                    return
                saved = self._saved.get(victim)
                changed = saved is None or saved[0] != self._level.get(victim)
            if changed:
                self._save(victim)
            with self._lock:
                self._shards.pop(victim, None)
                self._level.pop(victim, None)

    def drop(self, uid: str) -> None:
        """Forget ``uid``'s shard, in memory and on disk."""
        with self._lock:
            self._shards.pop(uid, None)
            self._level.pop(uid, None)
            self._saved.pop(uid, None)
            self._renewing.discard(uid)
            if self._files is not None:
                self._files.drop(uid)

    def _shard(self, uid: str) -> Shard:
        while True:
            with self._lock:
                shard = self._shards.get(uid)
                if shard is not None:
                    self._shards.move_to_end(uid)
                    if shard.docs.damaged and uid not in self._renewing:
                        log.error("the saved search index of %s is damaged: rebuilt", uid)
                        self._stale(uid)
                        self._renew(uid, None, damaged=True)
                    return shard
            self._open(uid, saved=True)

    def _stale(self, uid: str) -> None:
        """``uid``'s file no longer holds what the store does (the lock is held): deleted
        now, saved again ``save_every`` seconds later (or at the flush)."""
        self._saved[uid] = (_GONE, time.monotonic())
        if self._files is not None:
            self._files.drop(uid)

    def _apply(self, uid: str, shard: Shard, nodes: Iterable[URIRef | str]) -> int:
        return self._install(uid, shard, self._reader.read(uid, shard, nodes))

    def _install(self, uid: str, shard: Shard, update: Update) -> int:
        """Put ``update`` in place (the caller holds the lock); how many docs changed."""
        self._versions[uid] = self._versions.get(uid, 0) + 1
        for entity, name in update.names:
            shard.name(entity, name)
        changed = 0
        purged = False
        for doc_id in update.docs:
            old = shard.remove(doc_id)
            fresh = update.fresh.get(doc_id, [])
            for doc in fresh:
                shard.add(doc)
            changed += old != (fresh[0] if fresh else None)
            purged |= old is not None and not fresh
        if purged and self._shards.get(uid) is shard:
            self._stale(uid)
        for note in update.notes:
            shard.remove(note)
        for path in update.note_paths:
            if (current := shard.note_paths.get(path)) is not None:
                shard.remove(current)
        for doc in update.note_docs:
            shard.add(doc)
        shard.calibrate()
        return changed + len(update.note_paths)
