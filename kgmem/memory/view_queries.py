"""The named queries a batch asks while deciding, answered from pattern reads.

A :class:`~kgmem.memory.overlay.BatchView` cannot hand a SPARQL query to the store (the
store does not hold the batch's pending quads), so for each query the gate runs during a
batch there is an evaluator here that gives the same rows from ``quads()`` lookups: every
row of the query, bound variables included, unbound optionals left out. Each is held to its
``queries/memory/*.rq`` file by ``tests/memory/test_overlay.py``; change both together.
On Oxigraph a handful of index lookups is also several times cheaper than parsing and
planning a query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import product
from typing import Protocol

from rdflib import BNode, Literal, URIRef

from kgmem.store import Quad, Query, Row, Term
from kgmem.vocab import KGM, RDF

__all__ = ["VIEW_QUERIES", "ViewReader"]

_TRUE = Literal(True)


class ViewReader(Protocol):
    """What an evaluator reads: the view's quads, and for a query too wide to answer from
    patterns, the store's own answer and what the pending change touches."""

    def quads(
        self,
        graph: URIRef | None = None,
        subject: URIRef | BNode | None = None,
        predicate: URIRef | None = None,
        obj: Term | None = None,
    ) -> Iterator[Quad]: ...

    def stored(self, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
        """``query``'s rows from the store alone (without the pending change)."""
        ...

    def pending(self, predicate: URIRef) -> list[Quad]:
        """The pending (added or removed) quads with ``predicate``."""
        ...


Evaluator = Callable[[ViewReader, Query, Mapping[str, Term]], list[Row]]


def _objects(r: ViewReader, g: URIRef, s: Term, p: URIRef) -> list[Term]:
    if not isinstance(s, URIRef | BNode):
        return []
    return list(dict.fromkeys(q.object for q in r.quads(g, s, p)))


def _subjects(r: ViewReader, g: URIRef, p: URIRef, o: Term) -> list[Term]:
    return list(dict.fromkeys(q.subject for q in r.quads(g, None, p, o)))


def _has(r: ViewReader, g: URIRef, s: Term, p: URIRef, o: Term) -> bool:
    return isinstance(s, URIRef | BNode) and any(True for _ in r.quads(g, s, p, o))


def _optional(values: Sequence[Term]) -> Sequence[Term | None]:
    return values or (None,)


def _row(fixed: Mapping[str, Term], **optional: Term | None) -> Row:
    row = dict(fixed)
    row.update({k: v for k, v in optional.items() if v is not None})
    return row


def _graph(bindings: Mapping[str, Term]) -> URIRef:
    graph = bindings.get("graph")
    if not isinstance(graph, URIRef):
        raise ValueError("a batch view answers a query for one bound ?graph")
    return graph


def _props(r: ViewReader, g: URIRef, node: Term) -> dict[Term, list[Term]]:
    """``node``'s values by predicate (one lookup: records have a few dozen triples)."""
    found: dict[Term, list[Term]] = {}
    if isinstance(node, URIRef | BNode):
        for q in r.quads(g, node):
            found.setdefault(q.predicate, []).append(q.object)
    return found


def _claim_rows(
    r: ViewReader,
    g: URIRef,
    claim: Term,
    c: Mapping[Term, list[Term]],
    status: Term,
    fixed: Mapping[str, Term],
) -> list[Row]:
    """The rows of claims_about / claims_with_value for one claim (``c``: its values by
    predicate) whose subject, predicate (and key) are in ``fixed``: its memories in
    ``status``, with every optional value."""
    rows: list[Row] = []
    for memory in _subjects(r, g, KGM.claim, claim):
        m = _props(r, g, memory)
        if status not in m.get(KGM.status, ()):
            continue
        authorities = [a for e in m.get(KGM.evidence, ()) for a in _objects(r, g, e, KGM.authority)]
        optionals = list(
            product(
                _optional(c.get(KGM.object, [])),
                _optional(c.get(KGM.objectValue, [])),
                _optional(c.get(KGM.negated, [])),
                _optional(m.get(KGM.pinned, [])),
                _optional(m.get(KGM.validFrom, [])),
                _optional(list(dict.fromkeys(authorities))),
            )
        )
        base = {**fixed, "graph": g, "status": status, "memory": memory, "claim": claim}
        for confidence in m.get(KGM.confidence, ()):
            fixed_row = {**base, "confidence": confidence}
            for obj, value, negated, pinned, valid, authority in optionals:
                rows.append(
                    _row(
                        fixed_row,
                        object=obj,
                        value=value,
                        negated=negated,
                        pinned=pinned,
                        validFrom=valid,
                        authority=authority,
                    )
                )
    return rows


_CLAIM_KEYS = (KGM.subject, KGM.predicate, KGM.object, KGM.objectValue, KGM.negated)
_MEMORY_KEYS = (KGM.claim, KGM.status, KGM.confidence, KGM.pinned, KGM.validFrom, KGM.evidence)


def claims_about(r: ViewReader, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
    """memory/claims_about.rq with ?graph, ?status, ?subject and ?predicate bound.

    A subject may have any number of claims (the user has one per fact about them), so the
    store answers the query and only the claims the pending change bears on are read again:
    a row reads its claim's, its memory's and its evidence's triples with the predicates
    above, so a claim whose answer changes has a pending triple with one of them."""
    g, status = _graph(bindings), bindings["status"]
    subject, predicate = bindings["subject"], bindings["predicate"]
    claims: set[Term] = {q.subject for p in _CLAIM_KEYS for q in r.pending(p)}
    memories: set[Term] = {q.subject for p in _MEMORY_KEYS for q in r.pending(p)}
    for quad in r.pending(KGM.authority):
        memories.update(_subjects(r, g, KGM.evidence, quad.subject))
    for memory in memories:
        claims.update(_objects(r, g, memory, KGM.claim))
    stored = r.stored(query, bindings)
    claims.update(row["claim"] for row in stored if row["memory"] in memories)
    rows = [row for row in stored if row["claim"] not in claims]
    fixed = {"subject": subject, "predicate": predicate}
    for claim in claims:  # most are about other subjects: one bound read rules them out
        if not _has(r, g, claim, KGM.subject, subject):
            continue
        c = _props(r, g, claim)
        if predicate in c.get(KGM.predicate, ()):
            rows += _claim_rows(r, g, claim, c, status, fixed)
    return rows


def claims_with_value(r: ViewReader, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
    """memory/claims_with_value.rq with ?graph, ?status and ?key bound."""
    g, status, key = _graph(bindings), bindings["status"], bindings["key"]
    rows: list[Row] = []
    for claim in _subjects(r, g, KGM.claimKey, key):
        c = _props(r, g, claim)  # one read of the claim (a few triples), not one a property
        for subject in c.get(KGM.subject, ()):
            for predicate in c.get(KGM.predicate, ()):
                fixed = {"key": key, "subject": subject, "predicate": predicate}
                rows += _claim_rows(r, g, claim, c, status, fixed)
    return rows


def claims_holding(r: ViewReader, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
    """memory/claims_holding.rq with ?graph, ?status, ?predicate and ?held bound."""
    g, status = _graph(bindings), bindings["status"]
    predicate, held = bindings["predicate"], bindings["held"]
    claims = _subjects(r, g, KGM.object, held) + _subjects(r, g, KGM.objectValue, held)
    rows: list[Row] = []
    for claim in dict.fromkeys(claims):
        c = _props(r, g, claim)
        if predicate not in c.get(KGM.predicate, ()):
            continue
        for subject in c.get(KGM.subject, ()):
            for key in c.get(KGM.claimKey, ()):
                fixed = {"key": key, "subject": subject, "predicate": predicate}
                rows += _claim_rows(r, g, claim, c, status, fixed)
    return rows


def asserting_memories(r: ViewReader, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
    """memory/asserting_memories.rq with ?graph and ?key bound."""
    g, key = _graph(bindings), bindings["key"]
    rows: list[Row] = []
    for claim in _subjects(r, g, KGM.claimKey, key):
        if _has(r, g, claim, KGM.negated, _TRUE):
            continue
        for memory in _subjects(r, g, KGM.claim, claim):
            if _has(r, g, memory, KGM.status, KGM.active):
                rows.append({"graph": g, "key": key, "memory": memory})
    return rows


def entities_by_key(r: ViewReader, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
    """memory/entities_by_key.rq with ?graph and ?key bound."""
    g, key = _graph(bindings), bindings["key"]
    rows: list[Row] = []
    for entity in _subjects(r, g, KGM.nameKey, key):
        # by property, not whole: an entity may have any number of facts about it
        types = _objects(r, g, entity, RDF.type)
        if KGM.Entity not in types:
            continue
        fixed = {"graph": g, "key": key, "entity": entity}
        names = _optional(_objects(r, g, entity, KGM.name))
        rows += [_row(fixed, name=n, type=t) for n, t in product(names, types)]
    return rows


#: query name -> evaluator, for the queries a batch view answers over pending changes
VIEW_QUERIES: Mapping[str, Evaluator] = {
    "memory/claims_about": claims_about,
    "memory/claims_with_value": claims_with_value,
    "memory/claims_holding": claims_holding,
    "memory/asserting_memories": asserting_memories,
    "memory/entities_by_key": entities_by_key,
}
