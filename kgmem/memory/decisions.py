"""The decisions feed: every gate and lifecycle decision, with the exact change it made.

A decision stores the quads it added and removed (as N-Quads). Reverting applies the exact
inverse in one commit, after checking that nothing since has touched the same quads; the
revert is itself a decision, linked both ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import DecisionConflict, UnknownMemory
from kgmem.memory.ids import NodeKind, new_node
from kgmem.store import (
    Changeset,
    Quad,
    QueryRegistry,
    Row,
    TripleStore,
    UserGraphs,
    from_nquads,
    to_nquads,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Action", "DecisionRecord", "Decisions"]


class Action(StrEnum):
    CREATE = "create"
    MERGE = "merge"
    DISCARD = "discard"
    ACTIVATE = "activate"
    HOLD = "holdForReview"
    REJECT = "reject"
    QUARANTINE = "quarantine"
    SUPERSEDE = "supersede"
    ARCHIVE = "archive"
    RESTORE = "restore"
    PIN = "pin"
    UNPIN = "unpin"
    RATE = "rate"
    EXPIRE = "expire"
    OUTDATED = "markOutdated"
    ERRONEOUS = "markErroneous"
    REVERT = "revert"


@dataclass(frozen=True)
class DecisionRecord:
    iri: URIRef
    action: Action
    target: URIRef
    reason: str
    actor: str
    at: datetime
    reverted_by: URIRef | None = None


def _decision(row: Row) -> DecisionRecord:
    decision, target, at = row["decision"], row["target"], row["at"]
    assert isinstance(decision, URIRef) and isinstance(target, URIRef)
    assert isinstance(at, Literal) and isinstance(at.toPython(), datetime)
    reverted = row.get("revertedBy")
    return DecisionRecord(
        decision,
        Action(str(row["action"]).rsplit("#", 1)[-1]),
        target,
        str(row.get("reason", "")),
        str(row.get("actor", "")),
        at.toPython(),
        reverted if isinstance(reverted, URIRef) else None,
    )


class Decisions:
    """Records decisions in a user's ``ops`` graph and reverts them."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def record(
        self,
        uid: str,
        action: Action,
        target: URIRef,
        change: Changeset,
        reason: str,
        actor: str,
        at: datetime,
    ) -> tuple[URIRef, list[Quad]]:
        """The decision node for ``change`` and its quads (commit them with the change)."""
        d, ops = new_node(uid, NodeKind.DECISION), UserGraphs(uid).ops
        quads = [
            Quad(d, RDF.type, KGM.Decision, ops),
            Quad(d, KGM.action, URIRef(KGM[action]), ops),
            Quad(d, KGM.target, target, ops),
            Quad(d, KGM.reason, Literal(reason), ops),
            Quad(d, KGM.actor, Literal(actor), ops),
            Quad(d, KGM.decidedAt, Literal(at, datatype=XSD.dateTime), ops),
            Quad(d, KGM.changeAdded, Literal(to_nquads(change.add)), ops),
            Quad(d, KGM.changeRemoved, Literal(to_nquads(change.remove)), ops),
        ]
        return d, quads

    def feed(self, uid: str, limit: int = 100) -> list[DecisionRecord]:
        rows = self._store.select(self._queries["memory/decisions"], {"graph": UserGraphs(uid).ops})
        return [_decision(row) for row in rows[:limit]]

    def history(self, uid: str, targets: Sequence[URIRef]) -> list[DecisionRecord]:
        """Every decision about any of ``targets``, newest first (one query per batch)."""
        rows = self._store.select(
            self._queries["memory/decisions"],
            {"graph": UserGraphs(uid).ops},
            values={"target": list(targets)},
        )
        return [_decision(row) for row in rows]

    def change_of(self, uid: str, decision: URIRef) -> Changeset:
        ops = UserGraphs(uid).ops
        values = {q.predicate: q.object for q in self._store.quads(ops, subject=decision)}
        if KGM.changeAdded not in values:
            raise UnknownMemory(str(decision), "no such decision for this user")
        return Changeset.of(
            from_nquads(str(values[KGM.changeAdded])), from_nquads(str(values[KGM.changeRemoved]))
        )

    def revert_change(self, uid: str, decision: URIRef) -> Changeset:
        """The exact inverse of ``decision``'s change, if the store still shows its effect."""
        ops = UserGraphs(uid).ops
        if any(True for _ in self._store.quads(ops, subject=decision, predicate=KGM.revertedBy)):
            raise DecisionConflict(str(decision), "already reverted")
        change = self.change_of(uid, decision)
        missing = [q for q in change.add if not self._present(q)]
        back = [q for q in change.remove if self._present(q)]
        if missing or back:
            raise DecisionConflict(
                str(decision), "later changes touched the same memory; revert those first"
            )
        return Changeset.of(add=change.remove, remove=change.add)

    def _present(self, quad: Quad) -> bool:
        return any(
            True for _ in self._store.quads(quad.graph, quad.subject, quad.predicate, quad.object)
        )
