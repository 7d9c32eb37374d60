"""What the store already holds that a write must be checked against."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from rdflib import Literal, URIRef

from kgmem.memory.model import Authority, MemoryStatus
from kgmem.memory.prepass import DEFAULT_AUTHORITY_ORDER, ExistingClaim, rank
from kgmem.memory.records import ClaimRecord, claim_key
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs

__all__ = ["ActiveClaims", "claim_value"]


def claim_value(claim: ClaimRecord) -> URIRef | Literal:
    """The object (an entity) or value (a literal) of a claim."""
    value = claim.object if claim.object is not None else claim.value
    assert value is not None, claim
    return value


class ActiveClaims:
    """Claims of a user's active memories, looked up by (subject, predicate)."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def about(
        self,
        uid: str,
        claims: Sequence[ClaimRecord],
        functional: Callable[[URIRef], bool],
        order: tuple[Authority, ...] = DEFAULT_AUTHORITY_ORDER,
        *,
        pending: bool = False,
    ) -> list[ExistingClaim]:
        """Stored claims that can bear on ``claims``: of active memories (or, with
        ``pending``, of the review inbox). For a single-valued predicate every value of the
        subject matters (a different one contradicts); otherwise only the same value does
        (a repeat, or its negation), which keeps the lookup independent of how many values
        the subject has."""
        status = MemoryStatus.PENDING.iri if pending else MemoryStatus.ACTIVE.iri
        graph = UserGraphs(uid).kg
        rows: list[Row] = []
        for claim in claims:
            bindings: dict[str, URIRef | Literal] = {
                "graph": graph,
                "status": status,
                "subject": claim.subject,
                "predicate": claim.predicate,
            }
            if functional(claim.predicate):
                rows += self._store.select(self._queries["memory/claims_about"], bindings)
            else:
                bindings = {
                    "graph": graph,
                    "status": status,
                    "key": Literal(claim_key(claim.subject, claim.predicate, claim_value(claim))),
                }
                rows += self._store.select(self._queries["memory/claims_with_value"], bindings)
        return _claims(rows, order)

    def holding(
        self, uid: str, claim: ClaimRecord, order: tuple[Authority, ...] = DEFAULT_AUTHORITY_ORDER
    ) -> list[ExistingClaim]:
        """Active claims of ``claim``'s predicate and object or value, of other subjects:
        who held the thing before it moved."""
        bindings: dict[str, URIRef | Literal] = {
            "graph": UserGraphs(uid).kg,
            "status": MemoryStatus.ACTIVE.iri,
            "predicate": claim.predicate,
            "held": claim_value(claim),
        }
        rows = self._store.select(self._queries["memory/claims_holding"], bindings)
        return [
            e for e in _claims(rows, DEFAULT_AUTHORITY_ORDER) if e.claim.subject != claim.subject
        ]

    def asserted_by(
        self, uid: str, subject: URIRef, predicate: URIRef, obj: URIRef | Literal
    ) -> set[URIRef]:
        """Active memories asserting the fact ``subject predicate obj``."""
        rows = self._store.select(
            self._queries["memory/asserting_memories"],
            {"graph": UserGraphs(uid).kg, "key": Literal(claim_key(subject, predicate, obj))},
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
