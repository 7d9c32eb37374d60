"""The projection's rows in Kùzu: batched writes, reads back, and neighbourhood walks
(their Cypher and row shapes in :mod:`kgmem.index.kuzu.paths`).

Writes go in batches (``UNWIND $rows``) inside one Kùzu transaction per call, so a rebuild
or a refresh is applied whole or not at all. Statements, transactions and Kùzu's errors go
through :class:`~kgmem.index.kuzu.connection.Connection`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from contextlib import suppress
from itertools import islice
from typing import Any

import kuzu
from rdflib import URIRef

from kgmem.index.base import Neighbour
from kgmem.index.kuzu.connection import Connection
from kgmem.index.kuzu.params import (
    ENTITY,
    ROW_TYPES,
    Edge,
    Params,
    edge_identity,
    edge_of,
    edge_params,
    node_params,
    row_of,
)
from kgmem.index.kuzu.paths import NEIGHBOURS, internal_id, neighbour
from kgmem.index.kuzu.schema import (
    EDGES,
    NODE_KINDS,
    NODES,
    STAMP,
    EdgeTable,
    NodeTable,
    Stamp,
    node_key,
)
from kgmem.index.reader import NodeSet
from kgmem.index.rows import (
    Fingerprint,
    FingerprintSum,
    UserRows,
)
from kgmem.store import UserGraphs

__all__ = ["KuzuGraph"]

_BATCH = 2000
# rows a rebuild writes per transaction: Kùzu holds a transaction's pages in its buffer pool
# (a bounded pool: 160 rows a MB, at least 20,000), and each commit costs in proportion to
# the rows the table already holds (an edge table of 300k rows: 2.4 s a commit), so a large
# pool writes larger transactions (see KuzuGraph.replace_user)
_PER_TRANSACTION = 20_000
_MOST_PER_TRANSACTION = 200_000
_PER_POOL_MB = 160


class KuzuGraph:
    """The projection's rows in one Kùzu database, through one :class:`Connection`;
    callers serialize access."""

    def __init__(self, database: kuzu.Database, buffer_megabytes: int = 0) -> None:
        """``buffer_megabytes``: the database's buffer pool (0: Kùzu's default)."""
        self._db, self._buffer = Connection(database), buffer_megabytes
        self._chunk: int | None = None  # rows per transaction while a rebuild writes
        self._pending = 0

    def close(self) -> None:
        self._db.close()

    def run(
        self, cypher: str, params: dict[str, Any] | None = None, *, prepared: bool = False
    ) -> list[list[Any]]:
        """:meth:`Connection.run`."""
        return self._db.run(cypher, params, prepared=prepared)

    def _batches(self, cypher: str, rows: Iterable[Params]) -> None:
        it = iter(rows)
        while chunk := list(islice(it, _BATCH)):
            self.run(cypher, {"rows": chunk})
            self._pending += len(chunk)
            if self._chunk is not None and self._pending >= self._chunk:
                self._db.commit()
                self._db.begin()
                self._pending = 0

    def _keys(self, uid: str, iris: Iterable[str]) -> list[str]:
        return sorted(node_key(uid, str(iri)) for iri in iris)

    # -- writes ------------------------------------------------------------------------

    def _write(
        self,
        uid: str,
        rows: UserRows,
        *,
        kept: frozenset[str] = frozenset(),
        held: Counter[Edge] | None = None,
    ) -> None:
        """Append ``rows``, whose nodes the projection does not hold, except the entities
        ``kept`` (keys), which it holds with ``held``, the edges at them: their columns are
        set, an edge of ``held`` that ``rows`` repeats stays, any other is deleted. An edge
        is written when both ends are among ``rows`` or already in the projection; other
        edges are dropped, as :func:`~kgmem.index.kuzu.params.closed` does."""
        found = list(rows.tables().values())
        known: dict[str, set[str]] = {}
        for table, node_rows in zip(NODES, found, strict=False):
            params = [node_params(uid, r) for r in node_rows]
            known[table.name] = {p["key"] for p in params}
            if table.name == ENTITY:
                self._batches(table.update(), (p for p in params if p["key"] in kept))
                params = [p for p in params if p["key"] not in kept]
            self._batches(table.copy(), params)
        stale = Counter(held or ())
        edges: list[tuple[EdgeTable, list[Params]]] = []
        for edge, edge_rows in zip(EDGES, found[len(NODES) :], strict=True):
            write = []
            for p in (edge_params(uid, r) for r in edge_rows):
                identity = edge_identity(edge, p)
                if stale[identity] == 1:
                    del stale[identity]  # held once and still so: left as it is
                else:
                    write.append(p)
            edges.append((edge, write))
        self._add_held(uid, known, edges)
        for edge in EDGES:  # held edges that rows no longer has (or held twice: drift)
            gone = [edge_of(edge, identity) for identity in stale if identity[0] == edge.name]
            self._batches(edge.delete_rows(), gone)
        for edge, params in edges:
            ends = known[edge.source], known[edge.target]
            self._batches(
                edge.copy(), (p for p in params if p["a"] in ends[0] and p["b"] in ends[1])
            )

    def _add_held(
        self, uid: str, known: dict[str, set[str]], edges: list[tuple[EdgeTable, list[Params]]]
    ) -> None:
        """Add to ``known`` the ends of ``edges`` that the projection holds."""
        for table in NODES:
            ends = {
                p[end]
                for edge, params in edges
                for end, name in (("a", edge.source), ("b", edge.target))
                if name == table.name
                for p in params
            }
            known[table.name] |= self._held(uid, table.name, sorted(ends - known[table.name]))

    def replace_user(self, uid: str, slices: Iterable[UserRows]) -> None:
        """Drop every row of ``uid`` and write ``slices``: closed rows (an edge's ends are
        among the nodes of the slices), each edge after its ends (a slice of
        :class:`~kgmem.index.slices.UserSlices`, or one whole user's :func:`closed` rows).

        Kùzu holds a transaction's pages in its buffer pool, which is bounded
        (``Settings.graph_buffer_megabytes``): a 100k-memory user written in one transaction
        filled a 128 MB pool ("the buffer pool is full"). So the rows are written in
        transactions of at least ``_PER_TRANSACTION`` rows (more in a larger pool: a
        commit costs as much as the table holds, and 1M edges written 20,000 a commit took
        over 20 minutes), after one that drops the user's rows and stamp: stopped halfway,
        the user has no stamp, and :meth:`KuzuProjection.unlevel` finds it for a whole
        compare at the next start."""
        with self._db.transaction():
            self.run("MATCH (m:Meta {key: $k}) DELETE m", {"k": STAMP["p"] + uid})
            for table in (*EDGES, *NODES):  # edges first: see EdgeTable.delete_user
                self.run(table.delete_user(), {"uid": uid})
        pool = self._buffer * _PER_POOL_MB if self._buffer else _MOST_PER_TRANSACTION
        self._chunk = max(_PER_TRANSACTION, min(pool, _MOST_PER_TRANSACTION))
        self._pending = 0
        try:
            with self._db.transaction():
                for rows in slices:
                    self._append(uid, rows)
        finally:
            self._chunk = None

    def _append(self, uid: str, rows: UserRows) -> None:
        """Write ``rows`` as they are: new nodes, and edges whose ends are written."""
        found = list(rows.tables().values())
        for table, node_rows in zip(NODES, found, strict=False):
            self._batches(table.copy(), (node_params(uid, r) for r in node_rows))
        for edge, edge_rows in zip(EDGES, found[len(NODES) :], strict=True):
            self._batches(edge.copy(), (edge_params(uid, r) for r in edge_rows))

    def replace_nodes(
        self,
        uid: str,
        nodes: NodeSet,
        rows: UserRows,
        pairs: Iterable[tuple[str, str]] = (),
    ) -> None:
        """Make ``nodes`` and every edge at them, and the entity-to-entity edges between each
        of ``pairs`` (neither end among ``nodes``), what ``rows`` says, in one transaction:
        nodes absent from ``rows`` are deleted with their edges. An entity that stays keeps
        its node, and of the edges at it only those that changed are deleted or written: a
        hub (the user's own entity) has thousands, and a write touches a few."""
        stays = {node_key(uid, r.id) for r in rows.entities}
        kept = frozenset(
            self._held(uid, ENTITY, [k for k in self._keys(uid, nodes.entities) if k in stays])
        )
        sets = (nodes.entities, nodes.memories, nodes.pages, nodes.sources)
        with self._db.transaction():
            held = self._edges_at(sorted(kept))
            gone: set[str] = set()
            for table, iris in zip(NODES, sets, strict=True):
                keys = [k for k in self._keys(uid, iris) if k not in kept]
                for key in keys:
                    self.run(table.delete_key(), {"key": key})
                gone.update(keys)
            between = [
                {"a": node_key(uid, a), "b": node_key(uid, b)}
                for pair in sorted(pairs)
                for a, b in (pair, pair[::-1])
            ]
            for edge in EDGES:
                if edge.source == edge.target == ENTITY:
                    self._batches(edge.delete_between(), between)
            # an edge to a node deleted just now went with it
            held = Counter({e: n for e, n in held.items() if e[1] not in gone and e[2] not in gone})
            self._write(uid, rows, kept=kept, held=held)

    def _held(self, uid: str, table: str, keys: list[str]) -> set[str]:
        """Which of the node ``keys`` of ``table`` the projection holds."""
        if not keys:
            return set()
        [found] = [t for t in NODES if t.name == table]
        return {
            node_key(uid, row[0])
            for key in keys
            for row in self.run(found.id_of_key(), {"key": key}, prepared=True)
        }

    def _edges_at(self, keys: list[str]) -> Counter[Edge]:
        """The edges at the entities ``keys``, each counted once however many ends it has
        among them (a duplicate edge is drift, counted twice)."""
        found: dict[tuple[str, int, int], Edge] = {}
        if not keys:
            return Counter()
        for edge in EDGES:
            ends = [
                end for end, table in (("a", edge.source), ("b", edge.target)) if table == ENTITY
            ]
            for end in ends:
                for key in keys:
                    for internal, *rest in self.run(edge.at(end), {"key": key}, prepared=True):
                        found[(edge.name, *internal_id(internal))] = (edge.name, *rest)
        return Counter(found.values())

    # -- reads -------------------------------------------------------------------------

    def rows(self, uid: str, tables: Collection[str] | None = None) -> UserRows:
        """Every row of ``uid`` as stored (duplicates kept: they are drift), or only those of
        the named ``tables`` (``Entity``, ``RELATES``, ...; the others left empty)."""
        every: tuple[NodeTable | EdgeTable, ...] = (*NODES, *EDGES)
        found = [
            tuple(row_of(kind, values) for values in self.run(table.read(), {"uid": uid}))
            if tables is None or table.name in tables
            else ()
            for kind, table in zip(ROW_TYPES, every, strict=True)
        ]
        return UserRows(*found)  # type: ignore[arg-type]

    def fingerprint(self, uid: str) -> Fingerprint:
        """:func:`fingerprint_of` :meth:`rows`, summed as Kùzu hands the rows over."""
        total = FingerprintSum()
        every: tuple[NodeTable | EdgeTable, ...] = (*NODES, *EDGES)
        for kind, table in zip(ROW_TYPES, every, strict=True):
            for chunk in self._db.chunks(table.read(), {"uid": uid}):
                total.add_table(table.name, [row_of(kind, values) for values in chunk])
        return total.fingerprint()

    def stamps(self) -> dict[str, Stamp]:
        """Each user's recorded stamp (see :meth:`set_stamp`)."""
        rows = self.run("MATCH (m:Meta) WHERE m.key STARTS WITH $p RETURN m.key, m.value", STAMP)
        found: dict[str, Stamp] = {}
        for key, value in rows:
            with suppress(ValueError, TypeError, KeyError):
                held = json.loads(value)
                counts = {str(t): int(n) for t, n in held["counts"].items()}
                stamp = held["stamp"]
                found[str(key)[len(STAMP["p"]) :]] = Stamp(
                    None if stamp is None else int(stamp), counts
                )
        return found

    def set_stamp(self, uid: str, stamp: int | None) -> None:
        """Record that ``uid``'s rows hold every write up to ``stamp`` (None: the user never
        had one; :mod:`kgmem.index.feed_outbox`), with how many rows each table holds of
        them now: rows lost behind the projection's back show as other counts."""
        value = json.dumps({"stamp": stamp, "counts": self.user_counts(uid)})
        self.run("MERGE (m:Meta {key: $k}) SET m.value = $v", {"k": STAMP["p"] + uid, "v": value})

    def user_counts(self, uid: str) -> dict[str, int]:
        """How many rows of ``uid`` each table holds."""
        return {
            table.name: int(n)
            for table in (*NODES, *EDGES)
            for (n,) in self.run(table.count_user(), {"uid": uid})
        }

    def counts(self) -> dict[str, dict[str, int]]:
        """Per user, how many rows each table holds (tables without any left out)."""
        found: dict[str, dict[str, int]] = defaultdict(dict)
        for table in (*NODES, *EDGES):
            for uid, n in self.run(table.counts()):
                found[str(uid)][table.name] = int(n)
        return dict(found)

    def users(self) -> set[str]:
        found: set[str] = set()
        for table in NODES:
            found |= {row[0] for row in self.run(table.uids())}
        return found

    def holding(self, uid: str, iris: Iterable[URIRef]) -> NodeSet:
        """Which of ``iris`` the projection holds, by table.

        Each IRI is looked up by key, and only in the table its kind can be in (see
        :data:`NODE_KINDS`; an IRI of another form, in every table): a list of keys makes
        Kùzu scan each table, which grows with the store. The drains of one 25-draft batch
        at 100k memories: 609 ms of such scans, 168 ms with lookups by key."""
        base = UserGraphs(uid).node_base
        wanted: dict[str, list[str]] = {t.name: [] for t in NODES}
        for iri in sorted({str(i) for i in iris}):
            kind = iri[len(base) :].split("/", 1)[0] if iri.startswith(base) else ""
            names = [NODE_KINDS[kind]] if kind in NODE_KINDS else list(wanted)
            for name in names:
                if name is not None:
                    wanted[name].append(iri)
        held = [
            frozenset(
                URIRef(row[0])
                for iri in wanted[t.name]
                for row in self.run(t.id_of_key(), {"key": node_key(uid, iri)}, prepared=True)
            )
            for t in NODES
        ]
        return NodeSet(*held)

    def linked_entities(self, uid: str, memories: Iterable[URIRef]) -> set[URIRef]:
        """Entities the projection links to ``memories`` (ABOUT, or a RELATES they back)."""
        return set().union(*self.memory_entity_sets(uid, memories).values())

    def memory_entity_sets(self, uid: str, memories: Iterable[URIRef]) -> dict[URIRef, set[URIRef]]:
        """Each memory's entities in the projection: ABOUT, and the ends of the RELATES it
        backs."""
        ids = sorted(str(m) for m in memories)
        found: dict[URIRef, set[URIRef]] = {}
        if not ids:
            return found
        about = [  # by each memory's key index (a scan can miss a node: see delete_key)
            row
            for key in self._keys(uid, ids)
            for row in self.run(
                "MATCH (m:Memory {key: $key})-[:ABOUT]->(e:Entity) RETURN m.id, e.id",
                {"key": key},
                prepared=True,
            )
        ]
        facts = self.run(
            "MATCH (a:Entity)-[r:RELATES]->(b:Entity) WHERE r.uid = $uid AND r.memory IN $ids "
            "RETURN r.memory, a.id, b.id",
            {"uid": uid, "ids": ids},
        )
        for memory, *ends in (*about, *facts):
            found.setdefault(URIRef(memory), set()).update(URIRef(e) for e in ends)
        return found

    def neighbourhood(self, uid: str, entity: str, hops: int, limit: int) -> list[Neighbour]:
        cypher = NEIGHBOURS.format(hops=int(hops), limit=int(limit))
        rows = self.run(cypher, {"key": node_key(uid, entity), "uid": uid})
        return [neighbour(row) for row in rows]
