"""The lexical (BM25) index: a rebuildable, in-memory projection of what a user can search.

Documents are a user's memories (kg and quarantine graphs: title, excerpt, body, tags, claim
values and predicate names, evidence quotes, names of the entities it is about), pages (title,
path, current Markdown), external notes (the latest revision of each path) and short notes
(memory_remember, by their text). Each document
also carries what retrieval filters and ranks on, read in the same pass, so a search runs no
SPARQL at all.

The index lives in memory, is built per user on first use (or by :meth:`LexicalIndex.rebuild`)
and kept current by :meth:`LexicalIndex.refresh` with the nodes a commit changed. Persisting it
would not make start-up cheaper: checking a stored copy against the store reads the same rows a
rebuild reads, and a copy that is never trusted cannot be stale.
"""

from __future__ import annotations

import heapq
import logging
import threading
from collections.abc import Iterable, Mapping
from datetime import datetime

from rdflib import URIRef

from kgmem.index.base import Links
from kgmem.index.dense import Embedder
from kgmem.index.lexical.arrays import Scores
from kgmem.index.lexical.docs import (
    FIELD_WEIGHTS,
    STOPWORDS,
    LexicalDoc,
    analyze,
    stem,
    words,
)
from kgmem.index.lexical.read import LexicalReader, Update
from kgmem.index.lexical.shard import Shard
from kgmem.store import (
    Damage,
    QueryRegistry,
    TripleStore,
    UserGraphs,
)

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]

log = logging.getLogger("kgmem.index")


class LexicalIndex:
    """BM25 over each user's memories, pages and notes; thread-safe."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        *,
        field_weights: Mapping[str, int] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        """``field_weights`` overrides the weight of a field's words (see ``FIELD_WEIGHTS``;
        0 leaves the field out): the recall benchmarks use it to measure what a field adds.
        ``embedder`` (the optional extra) adds a vector per document: :meth:`meaning`."""
        self._store, self._queries = store, queries
        self._embedder = embedder
        self._weights = {**FIELD_WEIGHTS, **(field_weights or {})}
        self._versions: dict[str, int] = {}  # bumped by every refresh and rebuild
        self._shards: dict[str, Shard] = {}
        self._building: dict[str, list[URIRef | str]] = {}  # nodes changed during a rebuild
        self._lock = threading.RLock()  # the shards: searches, and putting documents in place
        self._refreshing = threading.Lock()  # one refresh at a time
        self._reader = LexicalReader(store, queries, Damage(log))
        self.damage = self._reader.damage  # what the reads met that they could not read

    def rebuild(self, uid: str) -> int:
        """Rebuild ``uid``'s documents from the store; returns how many there are. Searches go
        on meanwhile; changes refreshed during the rebuild are applied to the new documents."""
        UserGraphs(uid)  # a malformed uid is refused before anything is read
        with self._lock:
            self._building.setdefault(uid, [])
        try:
            shard, names = Shard(self._weights, self._embedder), list[tuple[str, str]]()
            docs = self._reader.load(uid, shard, "all", None, names)
            for doc in (*docs, *self._reader.notes(uid, {})):
                shard.add(doc)
            for entity, name in names:
                shard.name(entity, name)
            shard.calibrate(force=True)
            if shard.vectors is not None:
                shard.vectors.embed_pending()
        finally:
            with self._lock:
                changed = self._building.pop(uid, [])
        with self._lock:
            self._apply(uid, shard, changed)
            self._shards[uid] = shard
            return len(shard.docs)

    def drop(self, uid: str) -> None:
        with self._lock:
            self._shards.pop(uid, None)

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
                if shard is None:
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
        with self._lock:
            return self._shard(uid).score(terms)

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
        with self._lock:
            vectors = self._shard(uid).vectors
        return {} if vectors is None else vectors.nearest(text, n)

    def chat_scores(self, uid: str, terms: Iterable[str]) -> dict[str, float]:
        """How well each of ``uid``'s chats as a whole matches ``terms``, relative to the
        best chat (0..1]; see :class:`_Conversations`."""
        with self._lock:
            return self._shard(uid).chats.score(terms)

    def named_entities(self, uid: str, terms: Iterable[str]) -> list[str]:
        """The entities of ``uid`` the analyzed ``terms`` name (every word of one of their
        names or aliases), those with the most memories first."""
        with self._lock:
            return self._shard(uid).named(frozenset(terms))

    def version(self, uid: str) -> int:
        """A number that changes whenever ``uid``'s documents may have (each refresh and
        rebuild); what is derived from them can be cached against it."""
        with self._lock:
            self._shard(uid)
            return self._versions.get(uid, 0)

    def names_any(self, uid: str, terms: Iterable[str]) -> bool:
        """Whether any of the analyzed ``terms`` is a word of the name of one of ``uid``'s
        entities that some document is about."""
        with self._lock:
            index = self._shard(uid).name_index
            return any(index.get(term) for term in terms)

    def about(self, uid: str, entity: str, first: int | None = None) -> list[str]:
        """The documents of ``uid`` about ``entity``, by id; ``first``: only the first so
        many (a hub entity is in tens of thousands: no copy, no full sort)."""
        with self._lock:
            return list(self._shard(uid).about(entity, first))

    def doc(self, uid: str, doc_id: str) -> LexicalDoc | None:
        with self._lock:
            return self._shard(uid).docs.get(doc_id)

    def during(
        self, uid: str, start: datetime, end: datetime, latest: int | None = None
    ) -> list[LexicalDoc]:
        """The documents whose moment or validity period meets [start, end); ``latest``:
        of those with a moment, only the ``latest`` last (every period document still)."""
        with self._lock:
            return self._shard(uid).during(start, end, latest)

    def size(self, uid: str) -> int:
        with self._lock:
            return len(self._shard(uid).docs)

    def _shard(self, uid: str) -> Shard:
        if uid not in self._shards:
            self.rebuild(uid)
        return self._shards[uid]

    def _apply(self, uid: str, shard: Shard, nodes: Iterable[URIRef | str]) -> int:
        return self._install(uid, shard, self._reader.read(uid, shard, nodes))

    def _install(self, uid: str, shard: Shard, update: Update) -> int:
        """Put ``update`` in place (the caller holds the lock); how many docs changed."""
        self._versions[uid] = self._versions.get(uid, 0) + 1
        for entity, name in update.names:
            shard.name(entity, name)
        changed = 0
        for doc_id in update.docs:
            old = shard.remove(doc_id)
            fresh = update.fresh.get(doc_id, [])
            for doc in fresh:
                shard.add(doc)
            changed += old != (fresh[0] if fresh else None)
        for note in update.notes:
            shard.remove(note)
        for path in update.note_paths:
            if (current := shard.note_paths.get(path)) is not None:
                shard.remove(current)
        for doc in update.note_docs:
            shard.add(doc)
        shard.calibrate()
        return changed + len(update.note_paths)
