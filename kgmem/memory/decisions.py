"""The decisions feed: every gate and lifecycle decision, with the exact change it made.

A decision stores the quads it added and removed (as N-Quads). Reverting applies the exact
inverse in one commit, after checking that nothing since has touched the same quads; the
revert is itself a decision, linked both ways.

A *refusal* (the gate refused a draft: ungrounded, a clash, invalid) is a decision too, but
it acted on no memory and changed nothing: it has no target and names the draft instead, by
title, kind and a hash of the draft as sent, with the reasons. The draft's content is not
kept (it is not a memory), and a refusal cannot be reverted (there is nothing to undo: send
the draft again). A proposal refused before it could become a draft (a model's claim citing
a source it was never shown) is named the same way, by a :class:`RefusedDraft` its refuser
makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from hashlib import sha256

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import DecisionConflict, UnknownMemory
from kgmem.memory.model import DraftMemory, MemoryKind
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    Row,
    TripleStore,
    UserGraphs,
    from_nquads,
    new_node,
    to_nquads,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Action", "DecisionRecord", "Decisions", "RefusedDraft", "draft_hash"]


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
    REFUSE = "refuse"


@dataclass(frozen=True)
class RefusedDraft:
    """What names a refused draft in its decision (its content is not kept)."""

    title: str
    kind: MemoryKind
    hash: str  # sha256 of the draft as the gate read it (see :func:`draft_hash`)


@dataclass(frozen=True)
class DecisionRecord:
    iri: URIRef
    action: Action
    target: URIRef | None  # None only for a refusal, which acted on no memory
    reason: str
    actor: str
    at: datetime
    reverted_by: URIRef | None = None
    draft: RefusedDraft | None = None  # a refusal's draft


def draft_hash(draft: DraftMemory) -> str:
    """The sha256 of ``draft``'s canonical JSON: the same draft sent again has the same hash."""
    return sha256(draft.model_dump_json().encode()).hexdigest()


def _decision(row: Row) -> DecisionRecord:
    decision, target, at = row["decision"], row.get("target"), row["at"]
    assert isinstance(decision, URIRef)
    assert isinstance(at, Literal) and isinstance(at.toPython(), datetime)
    reverted = row.get("revertedBy")
    return DecisionRecord(
        decision,
        Action(str(row["action"]).rsplit("#", 1)[-1]),
        target if isinstance(target, URIRef) else None,
        str(row.get("reason", "")),
        str(row.get("actor", "")),
        at.toPython(),
        reverted if isinstance(reverted, URIRef) else None,
        _refused(row),
    )


def _refused(row: Row) -> RefusedDraft | None:
    digest, kind = row.get("draftHash"), row.get("draftKind")
    if digest is None or not isinstance(kind, URIRef):
        return None
    return RefusedDraft(
        str(row.get("draftTitle", "")), MemoryKind(str(kind).rsplit("#", 1)[-1]), str(digest)
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

    def refusal(
        self,
        uid: str,
        draft: DraftMemory | RefusedDraft,
        reasons: Sequence[str],
        actor: str,
        at: datetime,
        *,
        in_pass: URIRef | None = None,
    ) -> tuple[URIRef, list[Quad]]:
        """The decision refusing ``draft`` for ``reasons`` and its quads: no target, no
        change, the draft named by title, kind and hash (commit them on their own)."""
        if isinstance(draft, DraftMemory):
            draft = RefusedDraft(draft.title, draft.kind, draft_hash(draft))
        d, ops = new_node(uid, NodeKind.DECISION), UserGraphs(uid).ops
        quads = [
            Quad(d, RDF.type, KGM.Decision, ops),
            Quad(d, KGM.action, URIRef(KGM[Action.REFUSE]), ops),
            Quad(d, KGM.reason, Literal("; ".join(reasons) or "refused"), ops),
            Quad(d, KGM.actor, Literal(actor), ops),
            Quad(d, KGM.decidedAt, Literal(at, datatype=XSD.dateTime), ops),
            Quad(d, KGM.draftTitle, Literal(draft.title), ops),
            Quad(d, KGM.draftKind, draft.kind.iri, ops),
            Quad(d, KGM.draftHash, Literal(draft.hash), ops),
        ]
        if in_pass is not None:
            quads.append(Quad(d, KGM.inPass, in_pass, ops))
        return d, quads

    def refused_before(self, uid: str, draft: DraftMemory) -> bool:
        """Whether a refusal of this very draft is already in the feed (a periodic job that
        derives the same draft each run records its refusal once)."""
        digest = Literal(draft_hash(draft))
        return any(
            True for _ in self._store.quads(UserGraphs(uid).ops, None, KGM.draftHash, digest)
        )

    def feed(self, uid: str, limit: int = 100) -> list[DecisionRecord]:
        rows = self._store.select(self._queries["memory/decisions"], {"graph": UserGraphs(uid).ops})
        return [_decision(row) for row in rows[:limit]]

    def history(self, uid: str, targets: Sequence[URIRef]) -> list[DecisionRecord]:
        """Every decision about any of ``targets``, newest first (one query per batch)."""
        rows = self._store.select(
            self._queries["memory/decision_history"],
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
        refuse = URIRef(KGM[Action.REFUSE])
        if any(True for _ in self._store.quads(ops, decision, KGM.action, refuse)):
            raise DecisionConflict(
                str(decision), "a refusal changed nothing, so there is nothing to revert"
            )
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
