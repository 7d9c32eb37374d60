"""The lexical (BM25) index: a rebuildable, in-memory projection of what a user can search.

Documents are a user's memories (kg and quarantine graphs: title, excerpt, body, tags, claim
values and predicate names, evidence quotes, names of the entities it is about), pages (title,
path, current Markdown) and external notes (the latest revision of each path). Each document
also carries what retrieval filters and ranks on, read in the same pass, so a search runs no
SPARQL at all.

The index lives in memory, is built per user on first use (or by :meth:`LexicalIndex.rebuild`)
and kept current by :meth:`LexicalIndex.refresh` with the nodes a commit changed. Persisting it
would not make start-up cheaper: checking a stored copy against the store reads the same rows a
rebuild reads, and a copy that is never trusted cannot be stale.
"""

from __future__ import annotations

import dataclasses
import heapq
import logging
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError
from kgmem.index.base import Links
from kgmem.index.dense import Embedder
from kgmem.index.lexical_arrays import Scores
from kgmem.index.lexical_docs import (
    FIELD_WEIGHTS,
    STOPWORDS,
    LexicalDoc,
    analyze,
    camel_words,
    memory_doc,
    note_doc,
    page_doc,
    revision_key,
    stem,
    words,
)
from kgmem.index.lexical_shard import Shard
from kgmem.store import (
    Bindings,
    Damage,
    GraphKind,
    Query,
    QueryRegistry,
    Row,
    TripleStore,
    UserGraphs,
    integer,
    parse_graph,
    select_keyed,
)

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]

log = logging.getLogger("kgmem.index")


@dataclasses.dataclass
class _Update:
    """What one refresh read from the store, to put in place under the lock."""

    docs: dict[str, str]  # memory and page doc ids (with their kind) to re-read
    notes: set[str]  # note revisions touched
    fresh: defaultdict[str, list[LexicalDoc]] = dataclasses.field(
        default_factory=lambda: defaultdict(list)
    )
    names: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (entity, name)
    note_paths: set[str] = dataclasses.field(default_factory=set)  # notes whose latest is re-read
    note_docs: list[LexicalDoc] = dataclasses.field(default_factory=list)


class LexicalIndex:
    """BM25 over each user's memories, pages and external notes; thread-safe."""

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
        self.damage = Damage(log)  # what the reads met that they could not read

    def rebuild(self, uid: str) -> int:
        """Rebuild ``uid``'s documents from the store; returns how many there are. Searches go
        on meanwhile; changes refreshed during the rebuild are applied to the new documents."""
        UserGraphs(uid)  # a malformed uid is refused before anything is read
        with self._lock:
            self._building.setdefault(uid, [])
        try:
            shard, names = Shard(self._weights, self._embedder), list[tuple[str, str]]()
            for doc in (*self._load(uid, shard, "all", None, names), *self._notes(uid, {})):
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
                update = self._read(uid, shard, nodes)
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
        return self._install(uid, shard, self._read(uid, shard, nodes))

    def _read(self, uid: str, shard: Shard, nodes: Iterable[URIRef | str]) -> _Update:
        """What refreshing ``nodes`` changes, read from the store. It reads the shard only
        where searches never look (:meth:`_targets`), so searches go on meanwhile."""
        docs, notes = self._targets(uid, shard, nodes)
        update = _Update(docs, notes)
        memories = [URIRef(d) for d, kind in docs.items() if kind == "memory"]
        for doc in self._load(uid, shard, "memory", memories, update.names) if memories else ():
            update.fresh[doc.id].append(doc)
        for doc_id, kind in docs.items():
            if kind != "memory":
                update.fresh[doc_id] = self._load(uid, shard, kind, [doc_id], update.names)
        query = self._queries["index/lexical_notes"]
        for note in notes:
            if (held := shard.docs.get(note)) is not None and held.path is not None:
                update.note_paths.add(held.path)
            bindings = {"graph": UserGraphs(uid).sources, "note": URIRef(note)}
            update.note_paths |= {str(row["path"]) for row in self._store.select(query, bindings)}
        for path in update.note_paths:
            update.note_docs += self._notes(uid, {"path": Literal(path)})
        return update

    def _install(self, uid: str, shard: Shard, update: _Update) -> int:
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

    def _targets(
        self, uid: str, shard: Shard, nodes: Iterable[URIRef | str]
    ) -> tuple[dict[str, str], set[str]]:
        """The memory and page docs (with their kind), and the note revisions, ``nodes`` touch.
        An entity touches the documents about it only when its names changed: a fact about
        the user's own entity must not re-read every memory about the user."""
        graphs = UserGraphs(uid)
        docs: dict[str, str] = {}
        notes: set[str] = set()
        for node in nodes:
            iri = str(node).split("#", 1)[0]  # a page revision is <page>#rN
            kind = _kind(graphs, iri)
            if kind in ("memory", "page"):
                docs[iri] = kind
            elif kind == "note":
                notes.add(iri)
            elif kind == "msg":  # a message quoted by a memory, or next to one quoted
                query, message = self._queries["index/lexical_adjacent"], URIRef(iri)
                bindings = {"sources": graphs.sources, "message": message}
                for graph in (graphs.kg, graphs.quarantine):
                    for row in self._store.select(query, {"graph": graph, **bindings}):
                        docs[str(row["memory"])] = "memory"
            elif kind == "entity" and self._renamed(uid, shard, iri):
                query, entity = self._queries["index/lexical_related"], URIRef(iri)
                for graph in (graphs.kg, graphs.quarantine):
                    for row in self._store.select(query, {"graph": graph, "entity": entity}):
                        docs[str(row["node"])] = _kind(graphs, str(row["node"]))
        return docs, notes

    def _renamed(self, uid: str, shard: Shard, entity: str) -> bool:
        """Whether ``entity``'s names and aliases differ from those its documents were
        indexed with (so they must be read again); forgets them if so."""
        query, kg = self._queries["index/lexical_entity_names"], UserGraphs(uid).kg
        rows = self._store.select(query, {"kg": kg, "entity": URIRef(entity)})
        if shard.entity_texts.get(entity) == frozenset(str(r["text"]) for r in rows):
            return False
        shard.entity_texts.pop(entity, None)
        return True

    # -- from the store ------------------------------------------------------------------

    def _load(
        self,
        uid: str,
        shard: Shard,
        kind: str,
        nodes: Sequence[URIRef | str] | None,
        names: list[tuple[str, str]],
    ) -> list[LexicalDoc]:
        """The memories or pages ``nodes`` (every memory and page when None), as documents;
        the names of the entities they are about go to ``names`` (entity, name)."""
        graphs, out = UserGraphs(uid), []
        keys = None if nodes is None else [URIRef(n) for n in nodes]
        if kind in ("all", "memory"):
            for graph in (graphs.kg, graphs.quarantine):
                out += self._memories(uid, shard, graph, keys, names)
        if kind in ("all", "page"):
            query, fixed = self._queries["index/lexical_pages"], {"graph": graphs.kg}
            rows = self._select(query, fixed, "page", keys, per_key=True)
            out += self._docs(rows, "page", page_doc)
        return out

    def _memories(
        self,
        uid: str,
        shard: Shard,
        graph: URIRef,
        memories: Sequence[URIRef] | None,
        named: list[tuple[str, str]],
    ) -> list[LexicalDoc]:
        """The memories of ``graph`` (those of ``memories`` only, when given) as documents:
        a memory's row and texts are read one key a query (a bound memory is an index
        lookup; a list of them makes Oxigraph scan every memory), what they quote once for
        all of them."""
        query = self._queries["index/lexical_memories"]
        rows = self._select(query, {"graph": graph}, "memory", memories, per_key=True)
        if not rows:
            return []
        graphs = UserGraphs(uid)
        keyed = None if memories is None else [URIRef(str(row["memory"])) for row in rows]
        pieces: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        names: dict[str, set[str]] = defaultdict(set)
        query = self._queries["index/lexical_memory_texts"]
        fixed = {"graph": graph, "kg": graphs.kg}
        for row in self._select(query, fixed, "memory", keyed, per_key=True):
            field, term = str(row["field"]), row.get("term")
            text = str(row["text"]) if "text" in row else str(term)
            if field == "predicate":
                text = self._label(uid, shard, text)
            elif field == "entity" and term is not None:
                named.append((str(term), text))
                names[str(term)].add(text)
            pieces[str(row["memory"])][field].append(text)
        # each memory's rows carry every name and alias of its entities, as the store has them
        shard.entity_texts.update((entity, frozenset(found)) for entity, found in names.items())
        self._conversation(graphs, graph, keyed, pieces)
        return self._docs(rows, "memory", lambda row: memory_doc(row, pieces[str(row["memory"])]))

    def _conversation(
        self,
        graphs: UserGraphs,
        graph: URIRef,
        memories: Sequence[URIRef] | None,
        pieces: dict[str, dict[str, list[str]]],
    ) -> None:
        """Each memory's chats, and the messages before ("context") and after ("reply") the
        ones it quotes. Two linear reads joined here (the same join in SPARQL costs most of a
        rebuild), each one query for all ``memories``: a drain's memories quote a few chats."""
        quoted: list[tuple[str, str, int]] = []
        query = self._queries["index/lexical_quoted_messages"]
        fixed = {"graph": graph, "sources": graphs.sources}
        for row in self._select(query, fixed, "memory", memories, per_key=False):
            if (turn := integer(row["turn"])) is not None:
                quoted.append((str(row["memory"]), str(row["chat"]), turn))
        if not quoted:
            return
        query = self._queries["index/lexical_chat_messages"]
        chats = None if memories is None else [Literal(c) for c in sorted({q[1] for q in quoted})]
        texts: dict[tuple[str, int], str] = {}
        for row in self._select(query, {"sources": graphs.sources}, "chat", chats, per_key=False):
            if (turn := integer(row["turn"])) is not None:
                texts[(str(row["chat"]), turn)] = str(row["text"])
        for memory, chat, turn in quoted:
            found = pieces[memory]
            found["chat"].append(chat)
            for field, near in (("context", turn - 1), ("reply", turn + 1)):
                if (text := texts.get((chat, near))) is not None:
                    found[field].append(text)

    def _select(
        self,
        query: Query,
        fixed: Bindings,
        variable: str,
        keys: Sequence[URIRef | Literal] | None,
        *,
        per_key: bool,
    ) -> list[Row]:
        """``query``'s rows for ``keys`` (bound to ``variable``), or for everything when None."""
        if keys is None:
            return self._store.select(query, fixed)
        return select_keyed(self._store, query, fixed, variable, keys, per_key=per_key)

    def _label(self, uid: str, shard: Shard, term: str) -> str:
        """A predicate's words: its local name split, and its labels the user may read."""
        if term not in shard.labels:
            local = re.split(r"[#/]", term)[-1]
            names = [camel_words(local)]
            rows = self._store.select(self._queries["index/lexical_labels"], {"term": URIRef(term)})
            names += [str(r["label"]) for r in rows if _readable(uid, str(r["labelGraph"]))]
            shard.labels[term] = " ".join({n.casefold(): n for n in names}.values())
        return shard.labels[term]

    def _notes(self, uid: str, bindings: Mapping[str, Literal]) -> Iterator[LexicalDoc]:
        """The latest revision of each external note (highest revision, then latest time)."""
        query = self._queries["index/lexical_notes"]
        latest: dict[str, Row] = {}
        for row in self._store.select(query, {"graph": UserGraphs(uid).sources, **bindings}):
            path = str(row["path"])
            if path not in latest or revision_key(row) > revision_key(latest[path]):
                latest[path] = row
        yield from self._docs(latest.values(), "note", note_doc)

    def _docs(
        self, rows: Iterable[Row], node: str, build: Callable[[Row], LexicalDoc]
    ) -> list[LexicalDoc]:
        """Each row's document. A value that cannot be read reads as absent and a row that
        cannot be made a document is left out, both logged with the node's IRI: one bad
        record never stops a user's index, a refresh or start-up."""
        docs = []
        for row in rows:
            self.damage.check(row.get(node), ((name, (term,)) for name, term in row.items()))
            try:
                docs.append(build(row))
            except Exception as exc:
                self.damage.guard(row.get(node), exc)
        return docs


def _kind(graphs: UserGraphs, iri: str) -> str:
    """The node kind (see ``kgmem.memory.ids``) of one of the user's nodes, else ""."""
    base = graphs.node_base
    return iri[len(base) :].split("/", 1)[0] if iri.startswith(base) else ""


def _readable(uid: str, graph: str) -> bool:
    try:
        parsed = parse_graph(graph)
    except GraphNameError:
        return False
    schema = parsed.kind is GraphKind.SCHEMA and parsed.uid == uid
    return schema or parsed.kind is GraphKind.CATALOGUE
