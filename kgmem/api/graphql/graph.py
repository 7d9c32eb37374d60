"""GraphQL ``graph``: the caller's whole entity graph in one answer, as the memory browser
draws it: entities with the top-level class they fall under, facts between them (asserted
and inferred) and links between pages that share atomic memories.

Read from the graph projection (Kùzu: one query a table, memories counted there), so a graph
of thousands of entities costs a few queries, not one per entity; like search, it shows the
projection, which follows each commit.
"""

from __future__ import annotations

import strawberry
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.api.tools.args import short_id

__all__ = ["GraphEdge", "GraphLink", "GraphNode", "GraphPredicate", "GraphView", "read_graph"]

MAX_NODES = 20_000


@strawberry.type(description="An entity as the browser draws it.")
class GraphNode:
    id: str
    short_id: str
    name: str
    types: list[str] = strawberry.field(description="labels of its types")
    branch: str | None = strawberry.field(
        description="the top-level class its first type falls under (IRI)"
    )
    branch_label: str | None
    memories: int = strawberry.field(description="memories about it")
    has_page: bool


@strawberry.type(description="A property facts use, with its label.")
class GraphPredicate:
    iri: str
    label: str


@strawberry.type(description="A fact between two entities (ends and property by index).")
class GraphEdge:
    source: int = strawberry.field(description="its subject: an index into nodes")
    target: int = strawberry.field(description="its object: an index into nodes")
    predicate: int = strawberry.field(description="an index into predicates")
    inferred: bool = strawberry.field(description="implied by an inverse or symmetric property")


@strawberry.type(description="Two entities' pages built from shared atomic memories.")
class GraphLink:
    source: int = strawberry.field(description="an index into nodes")
    target: int = strawberry.field(description="an index into nodes")
    shared: int = strawberry.field(description="memories about both")


@strawberry.type(
    description="The caller's entity graph. Edges and links name their ends by index into "
    "nodes (a graph of thousands of entities answers in a fraction of the bytes)."
)
class GraphView:
    nodes: list[GraphNode]
    predicates: list[GraphPredicate]
    edges: list[GraphEdge]
    links: list[GraphLink]
    total: int = strawberry.field(description="entities in all (nodes holds at most `first`)")
    truncated: bool


def read_graph(services: Services, uid: str, first: int) -> GraphView:
    """The first ``first`` entities (those most written about first) and what joins them."""
    rows, about = services.projection.outline(uid)
    entities = list(rows.entities)
    paged = {row.entity for row in rows.page_of}
    entities.sort(key=lambda e: (-about.get(e.id, 0), (e.name or "").casefold(), e.id))
    kept = entities[:first]
    # labels and branches need the terms, not the closure of what the user uses (the
    # effective ontology: 2.7 s the first time at 50k memories)
    vocab = services.ontology.user_vocabulary(uid)
    # entity types are few: each one's branch is found once
    branches = {t: vocab.branch(URIRef(t)) for t in {min(e.types) for e in kept if e.types}}
    nodes = []
    for e in kept:
        types = sorted(e.types)
        branch = branches[types[0]] if types else None
        nodes.append(
            GraphNode(
                id=e.id,
                short_id=short_id(e.id),
                name=e.name or short_id(e.id),
                types=[vocab.label(URIRef(t)) for t in types],
                branch=None if branch is None else str(branch),
                branch_label=None if branch is None else vocab.label(branch),
                memories=about.get(e.id, 0),
                has_page=e.id in paged,
            )
        )
    at = {e.id: i for i, e in enumerate(kept)}
    facts = sorted(
        {r for r in rows.relates if r.source in at and r.target in at},
        key=lambda r: (at[r.source], r.predicate, at[r.target], r.inferred),
    )
    used = sorted({r.predicate for r in facts})
    numbered = {p: i for i, p in enumerate(used)}
    edges = [
        GraphEdge(
            source=at[r.source],
            target=at[r.target],
            predicate=numbered[r.predicate],
            inferred=r.inferred,
        )
        for r in facts
    ]
    links = [
        GraphLink(source=at[r.source], target=at[r.target], shared=r.count)
        for r in sorted(set(rows.shares), key=lambda r: (r.source, r.target))
        if r.source in paged and r.target in paged and r.source in at and r.target in at
    ]
    return GraphView(
        nodes=nodes,
        predicates=[GraphPredicate(iri=p, label=vocab.label(URIRef(p))) for p in used],
        edges=edges,
        links=links,
        total=len(entities),
        truncated=len(kept) < len(entities),
    )
