"""Helpers shared by everything that changes memories: net changes and entity-level facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rdflib import URIRef

from kgmem.memory.existing import ActiveClaims, claim_value
from kgmem.memory.records import ClaimRecord
from kgmem.store import Changeset, Quad, TripleStore

__all__ = ["claim_value", "fact_quads", "net_change", "retired_facts"]


def net_change(store: TripleStore, add: Iterable[Quad], remove: Iterable[Quad]) -> Changeset:
    """Only what really changes: a quad rewritten unchanged is neither added nor removed,
    one already present is not added, one absent is not removed. A decision records this
    change, so reverting it restores exactly the state before."""
    add, remove = list(dict.fromkeys(add)), list(dict.fromkeys(remove))
    both = set(add) & set(remove)
    return Changeset.of(
        [q for q in add if q not in both and not _present(store, q)],
        [q for q in remove if q not in both and _present(store, q)],
    )


def _present(store: TripleStore, quad: Quad) -> bool:
    return any(True for _ in store.quads(quad.graph, quad.subject, quad.predicate, quad.object))


def fact_quads(claims: Sequence[ClaimRecord], graph: URIRef) -> list[Quad]:
    """The entity-level triples of positive claims (what an active memory asserts)."""
    return [Quad(c.subject, c.predicate, claim_value(c), graph) for c in claims if not c.negated]


def retired_facts(
    active: ActiveClaims, uid: str, memory: URIRef, claims: Sequence[ClaimRecord], graph: URIRef
) -> list[Quad]:
    """Facts of ``memory`` no other active memory asserts: they go when it stops being active."""
    out = []
    for claim in claims:
        if claim.negated:
            continue
        others = active.asserted_by(uid, claim.subject, claim.predicate, claim_value(claim))
        if not others - {memory}:
            out += fact_quads([claim], graph)
    return out
