"""What the store already holds that a write must be checked against."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from rdflib import Literal, URIRef

from kgmem.memory.model import Authority
from kgmem.memory.prepass import DEFAULT_AUTHORITY_ORDER, ExistingClaim, rank
from kgmem.memory.records import ClaimRecord
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs

__all__ = ["ActiveClaims"]


class ActiveClaims:
    """Claims of a user's active memories, looked up by (subject, predicate)."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def about(
        self,
        uid: str,
        pairs: Iterable[tuple[URIRef, URIRef]],
        order: tuple[Authority, ...] = DEFAULT_AUTHORITY_ORDER,
        *,
        pending: bool = False,
    ) -> list[ExistingClaim]:
        """Claims of active memories (or, with ``pending``, of the review inbox)."""
        query = self._queries["memory/pending_claims_about" if pending else "memory/claims_about"]
        found: list[ExistingClaim] = []
        for subject, predicate in dict.fromkeys(pairs):
            rows = self._store.select(
                query,
                {"graph": UserGraphs(uid).kg, "subject": subject, "predicate": predicate},
            )
            found += _claims(rows, order)
        return found

    def asserted_by(
        self, uid: str, subject: URIRef, predicate: URIRef, obj: URIRef | Literal
    ) -> set[URIRef]:
        """Active memories asserting the fact ``subject predicate obj``."""
        rows = self._store.select(
            self._queries["memory/asserting_memories"],
            {
                "graph": UserGraphs(uid).kg,
                "subject": subject,
                "predicate": predicate,
                "object": obj,
            },
        )
        return {m for r in rows if isinstance(m := r["memory"], URIRef)}


def _claims(rows: Iterable[Row], order: tuple[Authority, ...]) -> list[ExistingClaim]:
    authorities: dict[URIRef, set[Authority]] = defaultdict(set)
    first: dict[URIRef, Row] = {}
    for row in rows:
        claim = _iri(row["claim"])
        first.setdefault(claim, row)
        if isinstance(a := row.get("authority"), URIRef):
            authorities[claim].add(Authority(str(a).rsplit("#", 1)[-1].removesuffix("Authority")))
    return [_existing(claim, row, authorities[claim], order) for claim, row in first.items()]


def _existing(
    claim: URIRef, row: Row, authorities: set[Authority], order: tuple[Authority, ...]
) -> ExistingClaim:
    best = max(authorities or {Authority.AGENT}, key=lambda a: rank(a, order))
    obj, value = row.get("object"), row.get("value")
    record = ClaimRecord(
        claim,
        _iri(row["subject"]),
        _iri(row["predicate"]),
        obj if isinstance(obj, URIRef) else None,
        value if isinstance(value, Literal) else None,
        _py(row.get("negated")) is True,
    )
    valid = _py(row.get("validFrom"))
    confidence = _py(row["confidence"])
    return ExistingClaim(
        _iri(row["memory"]),
        record,
        _py(row.get("pinned")) is True,
        float(confidence) if isinstance(confidence, float | int) else 0.0,
        best,
        valid if isinstance(valid, datetime) else None,
    )


def _iri(term: object) -> URIRef:
    assert isinstance(term, URIRef), term
    return term


def _py(node: object) -> object:
    return node.toPython() if isinstance(node, Literal) else node
