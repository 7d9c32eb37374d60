"""The data a patch is validated against: the patch plus just enough of its surroundings.

Validation cost must follow the patch, not the store. The nodes a patch writes are focus
nodes; for an existing entity (whose facts grow without bound) only its types, names and
the predicates the patch writes or some shape constrains are read; for any other focus node
(a memory, claim, evidence) all of its triples are. Nodes the patch points to contribute
their triples too (a source's text for the span check), except entities: their types only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice

from rdflib import Graph, URIRef
from rdflib.term import Node

from kgmem.store import Changeset, Quad, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF, SH

__all__ = ["Triples", "constrained_predicates", "neighbourhood"]

Triple = tuple[Node, Node, Node]
_ENTITY_KEYS = frozenset((RDF.type, KGM.name, KGM.canonical, KGM.mergedInto))


def constrained_predicates(shapes: Graph) -> frozenset[URIRef] | None:
    """The predicates a shape that can apply to an entity constrains (None: a path too
    complex to tell). Shapes of kgmem's own record classes (memories, evidence, sources,
    decisions, ...) never target an entity: those classes are disjoint with kgm:Entity."""
    found: set[URIRef] = set()
    for shape in set(shapes.subjects(RDF.type, SH.NodeShape)):
        targets = set(shapes.objects(shape, SH.targetClass))
        if targets and all(_internal(t) for t in targets):
            continue
        for prop in shapes.objects(shape, SH.property):
            for path in shapes.objects(prop, SH.path):
                if isinstance(path, URIRef):
                    found.add(path)
                    continue
                inner = [
                    o
                    for _, p, o in shapes.triples((path, None, None))
                    if p in (SH.inversePath, RDF.first) and isinstance(o, URIRef)
                ]
                if not inner:
                    return None
                found.update(inner)
    return frozenset(found)


def _internal(target: object) -> bool:
    return str(target).startswith(str(KGM)) and target != KGM.Entity


class Triples:
    """The data graph of one validation: a set of triples, cheap to fill and to scan (an
    rdflib ``Graph`` costs ~20 µs a triple to fill, more than reading it from the store)."""

    def __init__(self) -> None:
        self._triples: dict[Triple, None] = {}

    def add(self, triple: Triple) -> None:
        self._triples[triple] = None

    def __contains__(self, triple: object) -> bool:
        return triple in self._triples

    def __iter__(self) -> Iterator[Triple]:
        return iter(self._triples)

    def __len__(self) -> int:
        return len(self._triples)


def neighbourhood(
    store: TripleStore,
    graphs: UserGraphs,
    change: Changeset,
    constrained: frozenset[URIRef] | None,
    functional: Callable[[URIRef], bool],
) -> tuple[Triples, list[Node]]:
    """The patch, plus what validating it needs; see the module docstring.

    For an existing entity, a predicate the patch writes is read back only when it is
    single-valued (a second value is a violation) or a shape constrains it.
    """
    removed: set[Triple] = {(q.subject, q.predicate, q.object) for q in change.remove}
    data = Triples()
    written: dict[Node, set[URIRef]] = defaultdict(set)
    for quad in change.add:
        data.add((quad.subject, quad.predicate, quad.object))
        written[quad.subject].add(quad.predicate)
    focus = list(written)
    reader = _Reader(store, graphs, data)

    def focus_keys(node: Node) -> frozenset[URIRef] | None:
        if constrained is None:
            return None
        return frozenset(p for p in written[node] if functional(p)) | constrained | _ENTITY_KEYS

    for node in focus:
        reader.add(node, focus_keys, removed)
    # Vocabulary terms (classes, properties, individuals) have no triples in a user graph.
    base = graphs.node_base
    pointed = {
        o for s, _, o in data if s in written and isinstance(o, URIRef) and o.startswith(base)
    } - set(focus)
    for node in pointed:
        reader.add(node, lambda _: _ENTITY_KEYS, removed)
    return data, focus


_SWEEP = 64  # quads of one node read in one go before an entity's read narrows to its keys


class _Reader:
    def __init__(self, store: TripleStore, graphs: UserGraphs, data: Triples) -> None:
        self._store, self._graphs, self._data = store, graphs, data
        self._read = (graphs.kg, graphs.sources)

    def is_entity(self, node: Node) -> bool:
        if (node, RDF.type, KGM.Entity) in self._data:
            return True
        return isinstance(node, URIRef) and any(
            True for _ in self._store.quads(self._graphs.kg, node, RDF.type, KGM.Entity)
        )

    def add(
        self, node: Node, keys: Callable[[Node], Iterable[URIRef] | None], removed: set[Triple]
    ) -> None:
        """Read ``node``'s triples; an entity's only for the predicates ``keys(node)`` names (an
        entity lives in the knowledge graph alone, and its facts grow without bound).

        One read of the node's quads serves both the question "is it an entity?" and the
        answer, when the node has at most ``_SWEEP`` quads; a node with more (a hub entity,
        whose facts grow without bound) is read by key."""
        if not isinstance(node, URIRef):
            return
        # graph by graph: the store's index by graph is the one every read keeps warm (a
        # node read across all graphs costs a cold lookup: 0.3-0.5 ms at 1M memories,
        # against 0.02-0.3 in its graph)
        quads = chain.from_iterable(self._store.quads(g, subject=node) for g in self._read)
        sweep = list(islice(quads, _SWEEP + 1))
        kg = self._graphs.kg
        if len(sweep) > _SWEEP:
            entity = self.is_entity(node)
        else:
            entity = (node, RDF.type, KGM.Entity) in self._data or any(
                q.graph == kg and q.predicate == RDF.type and q.object == KGM.Entity for q in sweep
            )
        wanted = keys(node) if entity else None
        found: Iterable[Quad]
        if wanted is None:
            # A record or a source lives in one of the two graphs; the read goes on from where
            # the sweep stopped.
            found = chain(sweep, quads)
        elif len(sweep) > _SWEEP:
            found = (
                q for p in set(wanted) for q in self._store.quads(kg, subject=node, predicate=p)
            )
        else:
            allowed = set(wanted)
            found = (q for q in sweep if q.graph == kg and q.predicate in allowed)
        self._keep(found, removed)

    def _keep(self, quads: Iterable[Quad], removed: set[Triple]) -> None:
        for q in quads:
            triple = (q.subject, q.predicate, q.object)
            if triple not in removed:
                self._data.add(triple)
