"""Between the projection's rows (:mod:`kgmem.index.rows`) and Kùzu: the parameters a
row is written with (its nodes' keys are the user's), an edge's identity (to count what a
table holds), a row made back from what Kùzu returns, and a user's rows closed over its
nodes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from kgmem.index.kuzu.schema import EDGES, NODES, EdgeTable, node_key
from kgmem.index.rows import (
    AboutRow,
    EntityRow,
    EvidenceRow,
    MemoryRow,
    PageOfRow,
    PageRow,
    RelatesRow,
    Row,
    SharesRow,
    SourceRow,
    UserRows,
)

__all__ = [
    "ENTITY",
    "ROW_TYPES",
    "Edge",
    "Params",
    "closed",
    "edge_identity",
    "edge_of",
    "edge_params",
    "ends",
    "node_params",
    "row_of",
]

Params = dict[str, Any]
ROW_TYPES: tuple[type[Row], ...] = (
    EntityRow,
    MemoryRow,
    PageRow,
    SourceRow,
    RelatesRow,
    AboutRow,
    EvidenceRow,
    PageOfRow,
    SharesRow,
)


def node_params(uid: str, row: Row) -> Params:
    values = {f.name: getattr(row, f.name) for f in fields(row)}
    values = {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return {"key": node_key(uid, str(values["id"])), "uid": uid, **values}


def edge_params(uid: str, row: Row) -> Params:
    first, second, *rest = (getattr(row, f.name) for f in fields(row))
    names = [f.name for f in fields(row)][2:]
    return {
        "a": node_key(uid, first),
        "b": node_key(uid, second),
        "uid": uid,
        **dict(zip(names, rest, strict=True)),
    }


# An edge as the projection holds it: table name, end keys, uid and its columns in order.
Edge = tuple[Any, ...]
ENTITY = "Entity"


def edge_identity(edge: EdgeTable, params: Params) -> Edge:
    return (
        edge.name,
        params["a"],
        params["b"],
        params["uid"],
        *(params[c] for c, _ in edge.columns),
    )


def edge_of(edge: EdgeTable, identity: Edge) -> Params:
    _, a, b, uid, *values = identity
    return {
        "a": a,
        "b": b,
        "uid": uid,
        **dict(zip((c for c, _ in edge.columns), values, strict=True)),
    }


def closed(rows: UserRows) -> UserRows:
    """A whole user's ``rows`` without the edges whose ends are not among its nodes: the
    projection cannot hold them, so a fingerprint must not count them."""
    nodes: tuple[tuple[EntityRow | MemoryRow | PageRow | SourceRow, ...], ...] = (
        rows.entities,
        rows.memories,
        rows.pages,
        rows.sources,
    )
    ids = {t.name: {r.id for r in found} for t, found in zip(NODES, nodes, strict=True)}
    edges = list(rows.tables().values())[len(NODES) :]
    kept = [
        tuple(r for r in found if ends(r)[0] in ids[e.source] and ends(r)[1] in ids[e.target])
        for e, found in zip(EDGES, edges, strict=True)
    ]
    return UserRows(*nodes, *kept)  # type: ignore[arg-type]


def ends(row: Row) -> tuple[str, str]:
    first, second = (getattr(row, f.name) for f in fields(row)[:2])
    return first, second


def row_of(kind: type[Row], values: Sequence[Any]) -> Row:
    args: list[Any] = [tuple(v) if isinstance(v, list) else v for v in values]
    return kind(*args)
