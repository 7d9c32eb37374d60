"""Helpers shared by everything that changes memories: net changes and entity-level facts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rdflib import URIRef
from rdflib.term import Node

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
    present = _Presence(store)
    return Changeset.of(
        [q for q in add if q not in both and not present(q)],
        [q for q in remove if q not in both and present(q)],
    )


class _Presence:
    """Whether a quad is in the store; a node the store has nothing about (a memory, claim
    or evidence minted for this change) answers for all its quads with one lookup."""

    def __init__(self, store: TripleStore) -> None:
        self._store = store
        self._known: dict[tuple[URIRef, Node], bool] = {}

    def __call__(self, quad: Quad) -> bool:
        key = (quad.graph, quad.subject)
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = _any(self._store.quads(quad.graph, quad.subject))
        return known and _any(
            self._store.quads(quad.graph, quad.subject, quad.predicate, quad.object)
        )


def _any(quads: Iterable[Quad]) -> bool:
    return any(True for _ in quads)


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
