"""The lexical (BM25) index: a rebuildable, in-memory projection of what a user can search.

Documents are a user's memories (kg and quarantine graphs: title, excerpt, body, tags, claim
values and predicate names, evidence quotes, names of the entities it is about), pages (title,
path, current Markdown), external notes (the latest revision of each path) and short notes
(memory_remember, by their text). Each document also carries what retrieval filters and
ranks on, read in the same pass, so a search runs no SPARQL at all.

A user's index (a *shard*) is held in memory, kept current by :meth:`LexicalIndex.refresh`
with the nodes a commit changed, and saved per user (:mod:`kgmem.index.lexical.saved`). A
saved shard is loaded when its stamp is the store's (every write moves its user's stamp:
:mod:`kgmem.index.feed_outbox`), or caught up when the outbox still holds every write since
(those nodes are read again; a write to a user not in memory loads them so); else it is
rebuilt and saved. Saves: after a rebuild, ``save_every`` seconds after a change, at eviction
and at :meth:`LexicalIndex.flush`. A file that cannot be caught up, or whose shard lost a
document, is deleted at once: a forgotten text never waits on disk for the next save.
``resident`` bounds the documents held: past it, the least recently used shards are saved and
let go.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

from rdflib import URIRef

from kgmem.index.base import Links
from kgmem.index.dense import Embedder
from kgmem.index.digests import Digests
from kgmem.index.feed_outbox import Outbox
from kgmem.index.lexical.chats import ChatMatch
from kgmem.index.lexical.docs import (
    FIELD_WEIGHTS,
    STOPWORDS,
    LexicalDoc,
    analyze,
    stem,
    words,
)
from kgmem.index.lexical.read import LexicalReader, Update
from kgmem.index.lexical.saved import Saver, ShardFiles
from kgmem.index.lexical.scores import Scores
from kgmem.index.lexical.shard import Shard
from kgmem.store import (
    Damage,
    QueryRegistry,
    TripleStore,
    UserGraphs,
)

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]

log = logging.getLogger("kgmem.index")
_GONE = -1  # the stamp of a deleted file (a stamp is a time in nanoseconds)


class LexicalIndex:
    """BM25 over each user's memories, pages and notes; thread-safe."""

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

    def refresh(self, uid: str, nodes: Iterable[URIRef | str], links: Links | None = None) -> int:
        """Re-read the documents behind ``nodes`` (memories, pages, note revisions, entities
        whose names the memories about them carry); returns how many docs changed. A user
        not built yet is left alone: the first search reads the store as it is then.
        ``links`` is not needed: a document's links are re-read with it.

        Refreshes run one at a time, and read the store without holding searches up: only
        putting the new documents in place does (a few milliseconds)."""
        nodes = list(nodes)
        with self._refreshing:
            with self._lock:
                if uid in self._building:
                    self._building[uid] += nodes
            while True:
                with self._lock:
                    shard = self._shards.get(uid)
                    building = uid in self._building
                caught_up = shard is None and not building
                if caught_up and self._open(uid, saved=True, build=False) is not None:
                    continue  # a saved shard caught up with the outbox: the user is active
                if shard is None:
                    with self._lock:
                        if not building:
                            self._stale(uid)  # it can no longer be caught up
                    return 0
                update = self._reader.read(uid, shard, nodes)
                with self._lock:
                    if self._shards.get(uid) is shard:  # else a rebuild replaced it: again
                        return self._install(uid, shard, update)

    def search(self, uid: str, text: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best documents for ``text``: (doc id, BM25 score), best first."""
        found = self.scores(uid, analyze(text)).items()
        return heapq.nlargest(k, found, key=lambda item: (item[1], item[0]))

    def scores(self, uid: str, terms: Iterable[str]) -> Scores:
        """BM25 of every document of ``uid`` for the analyzed ``terms`` (0: no match)."""
        shard = self._shard(uid)
        with self._lock:
            return shard.score(terms)

    @property
    def embedder(self) -> Embedder | None:
        """The embedding model documents are given vectors with (None: no vectors)."""
        return self._embedder

    @property
    def dense(self) -> bool:
        """Whether documents have vectors (an embedding model is loaded)."""
        return self._embedder is not None

    def meaning(self, uid: str, text: str, n: int) -> dict[str, float]:
        """The ``n`` documents of ``uid`` nearest ``text`` in meaning: doc id -> cosine
        (empty without an embedding model)."""
        shard = self._shard(uid)
        with self._lock:
            vectors = shard.vectors
        return {} if vectors is None else vectors.nearest(text, n)

    def chat_scores(self, uid: str, terms: Iterable[str]) -> ChatMatch:
        """How well each of ``uid``'s chats as a whole matches ``terms``, relative to the
        best chat (0..1]; see :class:`_Conversations`."""
        shard = self._shard(uid)
        with self._lock:
            return shard.chats.score(terms)

    def named_entities(self, uid: str, terms: Iterable[str], most: int | None = None) -> list[str]:
        """The entities of ``uid`` the analyzed ``terms`` name (every word of one of their
        names or aliases), those with the most memories first; ``most``: only those at most
        so many documents are about."""
        shard = self._shard(uid)
        with self._lock:
            return shard.named(frozenset(terms), most)

    def version(self, uid: str) -> int:
        """A number that changes whenever ``uid``'s documents may have (each refresh and
        rebuild); what is derived from them can be cached against it."""
        self._shard(uid)
        with self._lock:
            return self._versions.get(uid, 0)

    def names_any(self, uid: str, terms: Iterable[str]) -> bool:
        """Whether any of the analyzed ``terms`` is a word of the name of one of ``uid``'s
        entities that some document is about."""
        shard = self._shard(uid)
        with self._lock:
            index = shard.name_index
            return any(index.get(term) for term in terms)

    def about(self, uid: str, entity: str, first: int | None = None) -> list[str]:
        """The documents of ``uid`` about ``entity``, by id; ``first``: only the first so
        many (a hub entity is in tens of thousands: no copy, no full sort)."""
        shard = self._shard(uid)
        with self._lock:
            return list(shard.about(entity, first))

    def neighbours(self, uid: str, entity: str, first: int) -> list[str]:
        """See :meth:`Shard.neighbours`."""
        shard = self._shard(uid)
        with self._lock:
            return shard.neighbours(entity, first)

    def doc(self, uid: str, doc_id: str) -> LexicalDoc | None:
        shard = self._shard(uid)
        with self._lock:
            return shard.docs.get(doc_id)

    def latest(self, uid: str, start: datetime, end: datetime, n: int) -> list[str]:
        """The ``n`` documents of ``uid`` whose moment or validity period meets [start, end)
        that happened or began last (a period with no start: at the epoch), latest first;
        equal times by id, the greater first. None of them is read."""
        shard = self._shard(uid)
        with self._lock:
            found = shard.during(start, end, n)
        return [doc_id for _, doc_id in heapq.nlargest(n, found)]

    def size(self, uid: str) -> int:
        shard = self._shard(uid)
        with self._lock:
            return len(shard.docs)

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
