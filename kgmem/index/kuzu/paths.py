"""The projection's neighbourhood walks: their Cypher, and their rows as
:class:`~kgmem.index.base.Neighbour` paths of :class:`~kgmem.index.base.Link` steps.

Only the hop count and the limit, validated integers, are written into the walk's text;
every value is a parameter.
"""

from __future__ import annotations

from typing import Any

from rdflib import URIRef

from kgmem.index.base import Link, LinkKind, Neighbour

__all__ = ["ABOUT_COUNTS", "NEIGHBOURS", "OUTLINE", "internal_id", "neighbour"]

NEIGHBOURS = """
MATCH (a:Entity {{key: $key}})-[e:RELATES|SHARES_MEMORY* SHORTEST 1..{hops}
      (r, n | WHERE n.uid = $uid AND r.uid = $uid)]-(b:Entity)
WHERE b.uid = $uid AND b.key <> a.key
RETURN b.id, b.name, b.types, length(e), rels(e), nodes(e), a, b
ORDER BY length(e), b.name, b.id
LIMIT {limit}
"""

# What the memory browser draws: these tables' rows, and memories counted per entity (a
# user's memories are not read).
OUTLINE = ("Entity", "RELATES", "PAGE_OF", "SHARES_MEMORY")
ABOUT_COUNTS = "MATCH (:Memory)-[e:ABOUT]->(n:Entity) WHERE e.uid = $uid RETURN n.id, count(*)"


def _link(rel: dict[str, Any], ids: dict[tuple[int, int], str]) -> Link:
    source = URIRef(ids[internal_id(rel["_src"])])
    target = URIRef(ids[internal_id(rel["_dst"])])
    if rel["_label"] == "SHARES_MEMORY":
        return Link(LinkKind.SHARES_MEMORY, source, target, count=int(rel["count"]))
    memory = rel.get("memory")
    return Link(
        LinkKind.RELATES,
        source,
        target,
        predicate=URIRef(rel["predicate"]),
        memory=URIRef(memory) if memory else None,
        inferred=bool(rel["inferred"]),
    )


def internal_id(node_id: dict[str, int]) -> tuple[int, int]:
    return node_id["table"], node_id["offset"]


def neighbour(row: list[Any]) -> Neighbour:
    iri, name, types, distance, rels, middle, start, end = row
    ids = {internal_id(n["_id"]): n["id"] for n in (start, *middle, end)}
    return Neighbour(
        entity=URIRef(iri),
        name=name,
        types=tuple(URIRef(t) for t in types or ()),
        distance=int(distance),
        path=tuple(_link(rel, ids) for rel in rels),
    )
