"""The lexical (BM25) index: a rebuildable, in-memory projection of what a user can search.

Documents are a user's memories (kg and quarantine graphs: title, excerpt, body, tags, claim
values and predicate names, evidence quotes, names of the entities it is about), pages (title,
path, current Markdown), external notes (the latest revision of each path) and short notes
(memory_remember, by their text). Each document also carries what retrieval filters and
ranks on, read in the same pass, so a search runs no SPARQL at all.

A user's index (a *shard*) is held in memory, kept current by :meth:`LexicalIndex.refresh`
with the nodes a commit changed, and saved per user: which shards are held, and how they are
loaded, saved and let go, is :class:`~kgmem.index.lexical.resident.ResidentShards`.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from datetime import datetime

from rdflib import URIRef

from kgmem.index.base import Links
from kgmem.index.dense import Embedder
from kgmem.index.lexical.chats import ChatMatch
from kgmem.index.lexical.docs import (
    STOPWORDS,
    LexicalDoc,
    analyze,
    stem,
    words,
)
from kgmem.index.lexical.resident import ResidentShards
from kgmem.index.lexical.scores import Scores

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]


class LexicalIndex(ResidentShards):
    """BM25 over each user's memories, pages and notes; thread-safe."""

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
