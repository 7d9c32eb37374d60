"""The Kùzu schema of the projection, and the Cypher that writes and reads each table.

Every node and edge carries ``uid``. A node's primary key is ``"{uid}|{iri}"`` (``|`` cannot
occur in an IRI or a user id), so two users never share a node and no edge can join them.
Values are always parameters; only table and column names, declared here, are written into
the Cypher text.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "EDGES",
    "NODES",
    "NODE_KINDS",
    "SCHEMA_VERSION",
    "STAMP",
    "EdgeTable",
    "NodeTable",
    "Stamp",
    "ddl",
    "node_key",
]

#: Bump when a table changes: a database of another version is replaced and rebuilt.
SCHEMA_VERSION = "1"


def node_key(uid: str, iri: str) -> str:
    return f"{uid}|{iri}"


@dataclass(frozen=True)
class NodeTable:
    name: str
    columns: tuple[tuple[str, str], ...]  # (column, Kùzu type) after key, id, uid

    def create(self) -> str:
        columns = ", ".join(f"{c} {t}" for c, t in self.columns)
        return (
            f"CREATE NODE TABLE IF NOT EXISTS {self.name}"
            f"(key STRING PRIMARY KEY, id STRING, uid STRING, {columns})"
        )

    def copy(self) -> str:
        """Append the rows ``$rows`` (keys new to the table: a duplicate fails the copy).

        ``COPY ... FROM (subquery)`` looks rows up by primary key and runs inside the
        caller's transaction; ``UNWIND ... MERGE`` is twenty times slower."""
        keys = (("key", "STRING"), ("id", "STRING"), ("uid", "STRING"))
        columns = ", ".join(_typed(c, t) for c, t in (*keys, *self.columns))
        return f"COPY {self.name} FROM (UNWIND $rows AS r RETURN {columns})"

    def read(self) -> str:
        columns = ", ".join(f"n.{c}" for c, _ in self.columns)
        return f"MATCH (n:{self.name}) WHERE n.uid = $uid RETURN n.id, {columns}"

    def delete_user(self) -> str:
        return f"MATCH (n:{self.name}) WHERE n.uid = $uid DETACH DELETE n"

    def delete_key(self) -> str:
        """Delete the node ``$key`` with its edges, found by the primary key's index.

        Not ``WHERE n.key IN $keys``: that scans the table, and measured (a page node
        deleted and written again at every revision, in ``vault_edit.py --entities 2000``)
        the scan missed a node the index found, so the delete left it and the write after
        it failed on a duplicated key; the index lookup is also faster (0.5 ms a key
        against 75 ms a scan of 300k rows)."""
        return f"MATCH (n:{self.name} {{key: $key}}) DETACH DELETE n"

    def id_of_key(self) -> str:
        """The id of the node ``$key``, if the table holds it (by the primary key's index,
        as :meth:`delete_key`)."""
        return f"MATCH (n:{self.name} {{key: $key}}) RETURN n.id"

    def update(self) -> str:
        """Set the columns of the nodes ``$rows`` (by key), keeping their edges."""
        columns = ", ".join(f"n.{c} = {_typed(c, t)}" for c, t in self.columns)
        return f"UNWIND $rows AS r MATCH (n:{self.name} {{key: r.key}}) SET n.id = r.id, {columns}"

    def uids(self) -> str:
        return f"MATCH (n:{self.name}) RETURN DISTINCT n.uid"

    def counts(self) -> str:
        """Each user's number of rows, in one scan."""
        return f"MATCH (n:{self.name}) RETURN n.uid, count(*)"

    def count_user(self) -> str:
        return f"MATCH (n:{self.name}) WHERE n.uid = $uid RETURN count(*)"


@dataclass(frozen=True)
class EdgeTable:
    name: str
    source: str  # node table
    target: str
    columns: tuple[tuple[str, str], ...] = ()  # after uid

    def create(self) -> str:
        columns = "".join(f", {c} {t}" for c, t in self.columns)
        return (
            f"CREATE REL TABLE IF NOT EXISTS {self.name}"
            f"(FROM {self.source} TO {self.target}, uid STRING{columns})"
        )

    def copy(self) -> str:
        """Append the edges ``$rows`` (``a``, ``b``: node keys; a missing end fails the copy).

        ``UNWIND ... MATCH (a {key}), (b {key})`` scans the target table once per row,
        which is quadratic: minutes at 100k memories. The copy finds ends by primary key."""
        typed = "".join(f", {_typed(c, t)}" for c, t in (("uid", "STRING"), *self.columns))
        return f"COPY {self.name} FROM (UNWIND $rows AS r RETURN r.a, r.b{typed})"

    def counts(self) -> str:
        """Each user's number of rows, in one scan."""
        return f"MATCH (:{self.source})-[e:{self.name}]->(:{self.target}) RETURN e.uid, count(*)"

    def count_user(self) -> str:
        return (
            f"MATCH (:{self.source})-[e:{self.name}]->(:{self.target}) WHERE e.uid = $uid "
            "RETURN count(*)"
        )

    def delete_user(self) -> str:
        """Delete every edge of ``$uid``. A rebuild deletes a user's edges before its
        nodes: ``DETACH DELETE`` of a 100k-memory user's nodes with their edges crashed the
        process (a segmentation fault in Kùzu 0.11, reproduced on a copy of the database);
        the edges first, then the nodes, took 18 s."""
        return (
            f"MATCH (:{self.source})-[e:{self.name}]->(:{self.target}) WHERE e.uid = $uid DELETE e"
        )

    def read(self) -> str:
        columns = "".join(f", e.{c}" for c, _ in self.columns)
        return (
            f"MATCH (a:{self.source})-[e:{self.name}]->(b:{self.target}) WHERE e.uid = $uid "
            f"RETURN a.id, b.id{columns}"
        )

    def at(self, end: str) -> str:
        """This table's edges whose ``end`` (``a`` source, ``b`` target) is the node
        ``$key`` (found by its index, as :meth:`NodeTable.delete_key`): internal id, end keys
        and columns, as :meth:`delete_rows` takes them."""
        columns = "".join(f", e.{c}" for c, _ in self.columns)
        source = "{key: $key}" if end == "a" else ""
        target = "{key: $key}" if end == "b" else ""
        return (
            f"MATCH (a:{self.source} {source})-[e:{self.name}]->(b:{self.target} {target}) "
            f"RETURN ID(e), a.key, b.key, e.uid{columns}"
        )

    def delete_between(self) -> str:
        """Delete this table's edges from ``a`` to ``b`` of each row of ``$rows`` (node keys;
        Kùzu deletes no undirected match: give both orders for either way)."""
        return (
            f"UNWIND $rows AS r MATCH (a:{self.source} {{key: r.a}})-[e:{self.name}]->"
            f"(b:{self.target} {{key: r.b}}) DELETE e"
        )

    def delete_rows(self) -> str:
        """Delete the edges ``$rows`` (``a``, ``b``: node keys; every column equal)."""
        same = "".join(f" AND e.{c} = {_typed(c, t)}" for c, t in self.columns)
        return (
            f"UNWIND $rows AS r MATCH (a:{self.source} {{key: r.a}})-[e:{self.name}]->"
            f"(b:{self.target} {{key: r.b}}) WHERE e.uid = r.uid{same} DELETE e"
        )


def _typed(column: str, kind: str) -> str:
    # A parameter list whose values are all null is typed STRING by Kùzu: cast scalars.
    if kind == "STRING" or kind.endswith("[]"):
        return f"r.{column}"
    return f"CAST(r.{column} AS {kind})"


NODES = (
    NodeTable("Entity", (("name", "STRING"), ("aliases", "STRING[]"), ("types", "STRING[]"))),
    NodeTable(
        "Memory",
        (
            ("kind", "STRING"),
            ("status", "STRING"),
            ("title", "STRING"),
            ("confidence", "DOUBLE"),
            ("strength", "DOUBLE"),
            ("recorded_at", "TIMESTAMP"),
            ("valid_from", "TIMESTAMP"),
            ("valid_until", "TIMESTAMP"),
            ("pinned", "BOOL"),
        ),
    ),
    NodeTable("Page", (("path", "STRING"), ("title", "STRING"))),
    NodeTable("Source", (("type", "STRING"), ("chat", "STRING"), ("timestamp", "TIMESTAMP"))),
)
EDGES = (
    EdgeTable(
        "RELATES",
        "Entity",
        "Entity",
        (("predicate", "STRING"), ("memory", "STRING"), ("inferred", "BOOL")),
    ),
    EdgeTable("ABOUT", "Memory", "Entity"),
    EdgeTable("EVIDENCE", "Memory", "Source"),
    EdgeTable("PAGE_OF", "Page", "Entity"),
    EdgeTable("SHARES_MEMORY", "Entity", "Entity", (("count", "INT64"),)),
)


#: The table a user's node can be projected to, by the kind in its IRI (the path segment
#: after ``UserGraphs.node_base``, as ``kgmem.store.nodes`` mints them): None for a kind the
#: projection never holds as a node (a claim or evidence item stands for its memory).
#: A node of a kind not listed here may be in any table.
NODE_KINDS: dict[str, str | None] = {
    "entity": "Entity",
    "memory": "Memory",
    "page": "Page",
    "msg": "Source",
    "task": "Source",
    "note": "Source",
    "short": "Source",
    "claim": None,
    "evidence": None,
    "decision": None,
    "pass": None,
    "prefs": None,
    "queued": None,
}


def ddl() -> list[str]:
    """Statements creating every table (and the version table) where missing."""
    return [
        "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
        *(t.create() for t in NODES),
        *(t.create() for t in EDGES),
    ]


STAMP = {"p": "stamp:"}  # a user's stamp is the Meta row keyed "stamp:<uid>"


@dataclass(frozen=True)
class Stamp:
    """A user's recorded stamp and the row counts per table it was recorded with."""

    stamp: int | None
    counts: dict[str, int]

    def holds(self, counts: dict[str, int]) -> bool:
        """Whether the projection holds as many rows of each table as then."""
        return {t: n for t, n in self.counts.items() if n} == {t: n for t, n in counts.items() if n}
