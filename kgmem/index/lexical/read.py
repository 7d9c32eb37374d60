"""Reading the lexical index's documents from the store: a user's memories (with what they
quote and the conversation around it), pages and external notes, whole for a rebuild or for
the nodes a commit touched for a refresh.

:class:`~kgmem.index.lexical.LexicalIndex` holds one :class:`LexicalReader`; a refresh reads
here without holding searches up, then puts the :class:`Update` in place under its lock.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError
from kgmem.index.dense import Embedder
from kgmem.index.lexical.docs import (
    LexicalDoc,
    camel_words,
    memory_doc,
    note_doc,
    page_doc,
    revision_key,
    short_note_doc,
)
from kgmem.index.lexical.shard import Shard
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
    message_node,
    parse_graph,
    select_keyed,
)

__all__ = ["LexicalReader", "Update"]


@dataclasses.dataclass
class Update:
    """What one refresh read from the store, to put in place under the lock."""

    docs: dict[str, str]  # memory and page doc ids (with their kind) to re-read
    notes: set[str]  # note revisions touched
    fresh: defaultdict[str, list[LexicalDoc]] = dataclasses.field(
        default_factory=lambda: defaultdict(list)
    )
    names: list[tuple[str, str]] = dataclasses.field(default_factory=list)  # (entity, name)
    note_paths: set[str] = dataclasses.field(default_factory=set)  # notes whose latest is re-read
    note_docs: list[LexicalDoc] = dataclasses.field(default_factory=list)


#: Notes stored from edits a person made to the pages in a vault's ``Memory/`` folder (see
#: :mod:`kgmem.pages.sync`): evidence for the memories those edits made, not notes to find.
PAGE_EDITS = "Memory/"


class LexicalReader:
    """Reads a user's documents from the store: whole (a rebuild) or for the nodes a commit
    touched (a refresh). Unreadable values and records are noted in ``damage``."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, damage: Damage) -> None:
        self._store, self._queries, self.damage = store, queries, damage

    def read(self, uid: str, shard: Shard, nodes: Iterable[URIRef | str]) -> Update:
        """What refreshing ``nodes`` changes, read from the store. It reads the shard only
        where searches never look (:meth:`_targets`), so searches go on meanwhile."""
        docs, notes = self._targets(uid, shard, nodes)
        update = Update(docs, notes)
        memories = [URIRef(d) for d, kind in docs.items() if kind == "memory"]
        for doc in self.load(uid, shard, "memory", memories, update.names) if memories else ():
            update.fresh[doc.id].append(doc)
        for doc_id, kind in docs.items():
            if kind != "memory":
                update.fresh[doc_id] = self.load(uid, shard, kind, [doc_id], update.names)
        query = self._queries["index/lexical_notes"]
        for note in notes:
            if (held := shard.docs.get(note)) is not None and held.path is not None:
                update.note_paths.add(held.path)
            bindings = {"graph": UserGraphs(uid).sources, "note": URIRef(note)}
            update.note_paths |= {str(row["path"]) for row in self._store.select(query, bindings)}
        for path in update.note_paths:
            update.note_docs += self.notes(uid, {"path": Literal(path)})
        return update

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
            if kind in ("memory", "page", "short"):
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

    def build(self, uid: str, weights: Mapping[str, int], embedder: Embedder | None) -> Shard:
        """``uid``'s whole shard, read from the store."""
        shard, names = Shard(weights, embedder), list[tuple[str, str]]()
        for doc in (*self.load(uid, shard, "all", None, names), *self.notes(uid, {})):
            shard.add(doc)
        for entity, name in names:
            shard.name(entity, name)
        shard.calibrate(force=True)
        if shard.vectors is not None:
            shard.vectors.embed_pending()
        return shard

    def load(
        self,
        uid: str,
        shard: Shard,
        kind: str,
        nodes: Sequence[URIRef | str] | None,
        names: list[tuple[str, str]],
    ) -> list[LexicalDoc]:
        """The memories, pages or short notes ``nodes`` (every one of them when None), as
        documents;
        the names of the entities they are about go to ``names`` (entity, name)."""
        graphs, out = UserGraphs(uid), []
        keys = None if nodes is None else [URIRef(n) for n in nodes]
        if kind in ("all", "memory"):
            out += self._memories(uid, shard, graphs.kg, keys, names)
            # a memory is in one graph: only those not found may be quarantined
            found = {doc.id for doc in out}
            rest = None if keys is None else [k for k in keys if str(k) not in found]
            if rest is None or rest:
                out += self._memories(uid, shard, graphs.quarantine, rest, names)
        if kind in ("all", "page"):
            query, fixed = self._queries["index/lexical_pages"], {"graph": graphs.kg}
            rows = self._select(query, fixed, "page", keys, per_key=True)
            out += self._docs(rows, "page", page_doc)
        if kind in ("all", "short"):
            query, fixed = self._queries["index/lexical_short_notes"], {"graph": graphs.sources}
            rows = self._select(query, fixed, "note", keys, per_key=True)
            out += self._docs(rows, "note", short_note_doc)
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
        rebuild): the quoted messages, then, for a rebuild, every message the user has; for
        a refresh, the messages around the quotes by their nodes (``message_node``): a chat
        read whole is 14-18 ms cold at 1M memories, and a drain's merges quote old chats.
        A turn's first-hand message is its context; an agent's report of it stands in only
        when the user's own is not stored."""
        quoted: list[tuple[str, str, int]] = []
        query = self._queries["index/lexical_quoted_messages"]
        fixed = {"graph": graph, "sources": graphs.sources}
        # a bound memory is an index lookup; a list of them: 11-18 ms for 25 at 1M, 5 a key
        for row in self._select(query, fixed, "memory", memories, per_key=True):
            if (turn := integer(row["turn"])) is not None:
                quoted.append((str(row["memory"]), str(row["chat"]), turn))
        if not quoted:
            return
        if memories is None:
            query, keys = self._queries["index/lexical_chat_messages"], None
        else:
            query = self._queries["index/lexical_message_texts"]
            keys = [
                message_node(graphs.uid, chat, near, reported=reported)
                for _, chat, turn in quoted
                for near in (turn - 1, turn + 1)
                if near >= 0
                for reported in (False, True)
            ]
        texts: dict[tuple[str, int], str] = {}
        for row in self._select(query, {"sources": graphs.sources}, "message", keys, per_key=False):
            if (turn := integer(row["turn"])) is None:
                continue
            chat = str(row["chat"])
            if (chat, turn) not in texts or row["message"] == message_node(graphs.uid, chat, turn):
                texts[(chat, turn)] = str(row["text"])
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

    def notes(self, uid: str, bindings: Mapping[str, Literal]) -> Iterator[LexicalDoc]:
        """The latest revision of each external note (highest revision, then latest time),
        unless the note's file was removed."""
        query = self._queries["index/lexical_notes"]
        latest: dict[str, Row] = {}
        for row in self._store.select(query, {"graph": UserGraphs(uid).sources, **bindings}):
            path = str(row["path"])
            if path.startswith(PAGE_EDITS):  # an edit of a page: the page is what is found
                continue
            if path not in latest or revision_key(row) > revision_key(latest[path]):
                latest[path] = row
        found = [row for row in latest.values() if row.get("removedAt") is None]  # else gone
        yield from self._docs(found, "note", note_doc)

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
    """The node kind (see ``kgmem.store.nodes``) of one of the user's nodes, else ""."""
    base = graphs.node_base
    return iri[len(base) :].split("/", 1)[0] if iri.startswith(base) else ""


def _readable(uid: str, graph: str) -> bool:
    try:
        parsed = parse_graph(graph)
    except GraphNameError:
        return False
    schema = parsed.kind is GraphKind.SCHEMA and parsed.uid == uid
    return schema or parsed.kind is GraphKind.CATALOGUE
