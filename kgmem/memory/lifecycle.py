"""Lifecycle: review, pin, archive, restore, rate, outcomes, expiry, revert, forget.

Each action is one store transaction that rewrites the memory, moves its entity-level
facts in or out with its active status, and records a decision carrying the exact change,
so any of them can be reverted (``revert`` is itself a decision). ``forget`` is the one
exception: it purges the memory, its claims, evidence, facts, the edges other memories
point at it and every decision that mentions it, and leaves only an anonymous tombstone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from enum import StrEnum
from hashlib import sha256

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.errors import LifecycleError, UnknownMemory
from kgmem.memory.adjudication import vocabulary_patch
from kgmem.memory.changes import fact_quads, net_change, retired_facts
from kgmem.memory.decisions import Action, Decisions
from kgmem.memory.existing import ActiveClaims
from kgmem.memory.model import MemoryStatus
from kgmem.memory.notes import read_by_passes
from kgmem.memory.records import MemoryRecord, read_memory, record_quads
from kgmem.memory.strength import StrengthPolicy
from kgmem.ontology import DeclareProperty, DeltaPatch, OntologyService, ValidationService
from kgmem.store import Changeset, Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = ["Lifecycle", "Verdict"]

Change = Callable[[MemoryRecord], MemoryRecord]
_LIVE = {MemoryStatus.ACTIVE}


class Verdict(StrEnum):
    """How a memory an agent used for a task performed."""

    HELPFUL = "helpful"
    UNUSED = "unused"
    MISLEADING = "misleading"
    OUTDATED = "outdated"


class Lifecycle:
    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        clock: Clock,
        validation: ValidationService,
        strength: StrengthPolicy | None = None,
        *,
        ontology: OntologyService,
    ) -> None:
        self._store, self._queries, self._clock = store, queries, clock
        self._validation, self._ontology = validation, ontology
        self._strength = strength or StrengthPolicy()
        self._active = ActiveClaims(store, queries)
        self.decisions = Decisions(store, queries)

    # -- reading -------------------------------------------------------------------------

    def get(self, uid: str, memory: URIRef) -> MemoryRecord:
        graphs = UserGraphs(uid)
        record = read_memory(self._store, memory, [graphs.kg, graphs.quarantine])
        if record is None:
            raise UnknownMemory(str(memory))
        return record

    # -- the actions ---------------------------------------------------------------------

    def approve(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        """Activate a pending memory. One that waits for vocabulary has its terms decided
        first (see :mod:`kgmem.memory.adjudication`): declared in the user's schema delta in
        the same commit, or the approval is refused with :class:`UndeclaredTerms`."""
        record = self.get(uid, memory)
        patch = None
        if record.status is MemoryStatus.PENDING:
            effective = self._ontology.effective(uid)
            patch = vocabulary_patch(uid, record, effective, self._clock.now())
        ops = () if patch is None else patch.ops
        declared = [op.name for op in ops if isinstance(op, DeclareProperty)]
        return self._move(
            uid,
            memory,
            Action.ACTIVATE,
            actor,
            {MemoryStatus.PENDING},
            lambda r: replace(r, status=MemoryStatus.ACTIVE, needs_terms=()),
            "approved" + (f"; declared {', '.join(declared)}" if declared else ""),
            delta=patch,
        )

    def reject(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        return self._move(
            uid,
            memory,
            Action.REJECT,
            actor,
            {MemoryStatus.PENDING},
            lambda r: replace(r, status=MemoryStatus.ARCHIVED, retired_at=self._clock.now()),
            "rejected in review",
        )

    def pin(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        return self._move(
            uid, memory, Action.PIN, actor, None, lambda r: replace(r, pinned=True), "pinned"
        )

    def unpin(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        return self._move(
            uid, memory, Action.UNPIN, actor, None, lambda r: replace(r, pinned=False), "unpinned"
        )

    def archive(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        live: set[MemoryStatus] = {s for s in MemoryStatus if s is not MemoryStatus.ARCHIVED}
        return self._move(
            uid,
            memory,
            Action.ARCHIVE,
            actor,
            live,
            lambda r: replace(r, status=MemoryStatus.ARCHIVED, retired_at=self._clock.now()),
            "archived",
        )

    def restore(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        return self._move(
            uid,
            memory,
            Action.RESTORE,
            actor,
            {MemoryStatus.ARCHIVED},
            lambda r: replace(r, status=MemoryStatus.ACTIVE, retired_at=None),
            "restored",
        )

    def retire(
        self,
        uid: str,
        memory: URIRef,
        status: MemoryStatus,
        reason: str,
        actor: str = "person",
        *,
        by: URIRef | None = None,
    ) -> URIRef:
        """Take an active memory off the record as ``status``: outdated (it held, it holds no
        more), erroneous (it never held) or superseded (by the memory ``by``, which then
        records that it supersedes it)."""
        actions = {
            MemoryStatus.OUTDATED: Action.OUTDATED,
            MemoryStatus.ERRONEOUS: Action.ERRONEOUS,
            MemoryStatus.SUPERSEDED: Action.SUPERSEDE,
        }
        if status not in actions or (status is MemoryStatus.SUPERSEDED) != (by is not None):
            raise ValueError(f"cannot retire a memory as {status.value} (by={by})")
        now = self._clock.now()

        def change(r: MemoryRecord) -> MemoryRecord:
            until = (
                (r.valid_until or now) if status is not MemoryStatus.ERRONEOUS else r.valid_until
            )
            return replace(r, status=status, retired_at=now, valid_until=until)

        extra = [] if by is None else [Quad(by, KGM.supersedes, memory, UserGraphs(uid).kg)]
        return self._move(
            uid, memory, actions[status], actor, _LIVE, change, reason, extra_add=extra
        )

    def hold(self, uid: str, memory: URIRef, reason: str, actor: str = "person") -> URIRef:
        """Put an active memory back in the review inbox: a person is asked whether it still
        stands (approve keeps it, reject archives it)."""
        return self._move(
            uid,
            memory,
            Action.HOLD,
            actor,
            _LIVE,
            lambda r: replace(r, status=MemoryStatus.PENDING),
            reason,
        )

    def rate(self, uid: str, memory: URIRef, delta: int, actor: str = "person") -> URIRef:
        if delta not in (1, -1):
            raise LifecycleError(str(memory), "a rating is +1 or -1")
        return self._move(
            uid,
            memory,
            Action.RATE,
            actor,
            None,
            lambda r: self._strength.rated(r, delta),
            f"rated {delta:+d}",
        )

    def outcome(
        self, uid: str, memory: URIRef, verdict: Verdict, task: str = "", actor: str = "agent"
    ) -> URIRef:
        """Outcome feedback after a task: helpful, unused, misleading or outdated."""
        now = self._clock.now()
        if verdict is Verdict.OUTDATED:
            return self._move(
                uid,
                memory,
                Action.EXPIRE,
                actor,
                _LIVE,
                lambda r: replace(
                    r,
                    status=MemoryStatus.OUTDATED,
                    retired_at=now,
                    valid_until=r.valid_until or now,
                ),
                f"outdated for task {task}".strip(),
            )
        change = {
            Verdict.HELPFUL: self._strength.helpful,
            Verdict.UNUSED: self._strength.unused,
            Verdict.MISLEADING: self._strength.misleading,
        }[verdict]
        extra = (
            []
            if verdict is not Verdict.MISLEADING
            else [
                Quad(
                    memory,
                    KGM.counterEvidence,
                    Literal(f"misleading in task {task or 'unnamed'} at {now.isoformat()}"),
                    UserGraphs(uid).kg,
                )
            ]
        )
        return self._move(
            uid,
            memory,
            Action.RATE,
            actor,
            None,
            change,
            f"outcome {verdict.value} {task}".strip(),
            extra_add=extra,
        )

    def used(self, uid: str, memories: Sequence[URIRef]) -> None:
        """Retrieval used these memories: strength rises, use count and last use update.

        Usage is a signal, not a decision: it is not in the feed and not revertable.
        """
        now = self._clock.now()
        with self._store.transaction() as tx:
            for memory in dict.fromkeys(memories):
                old = self.get(uid, memory)
                graph = old.graph or UserGraphs(uid).kg
                new = self._strength.used(old, now)
                net = net_change(self._store, record_quads(new, graph), record_quads(old, graph))
                tx.add(*net.add)
                tx.remove(*net.remove)

    def expire_due(self, uid: str, actor: str = "scheduler") -> list[URIRef]:
        """Episodes whose time-to-live has passed become expired."""
        now = self._clock.now()
        rows = self._store.select(self._queries["memory/expiring"], {"graph": UserGraphs(uid).kg})
        due = [
            r["memory"]
            for r in rows
            if isinstance(e := r["expiresAt"], Literal) and e.toPython() <= now
        ]
        for memory in due:
            assert isinstance(memory, URIRef)
            self._move(
                uid,
                memory,
                Action.EXPIRE,
                actor,
                _LIVE,
                lambda r: replace(r, status=MemoryStatus.EXPIRED, retired_at=now),
                "time to live passed",
            )
        return [m for m in due if isinstance(m, URIRef)]

    def revert(self, uid: str, decision: URIRef, actor: str = "person") -> URIRef:
        """Undo ``decision`` exactly; refused if later changes touched the same quads."""
        with self._store.transaction() as tx:
            inverse = self.decisions.revert_change(uid, decision)
            target = self._target(uid, decision)
            record, quads = self.decisions.record(
                uid, Action.REVERT, target, inverse, f"reverts {decision}", actor, self._clock.now()
            )
            ops = UserGraphs(uid).ops
            tx.add(
                *inverse.add,
                *quads,
                Quad(decision, KGM.revertedBy, record, ops),
                Quad(record, KGM.reverts, decision, ops),
            )
            tx.remove(*inverse.remove)
        return record

    def _target(self, uid: str, decision: URIRef) -> URIRef:
        for quad in self._store.quads(UserGraphs(uid).ops, decision, KGM.target):
            if isinstance(quad.object, URIRef):
                return quad.object
        raise UnknownMemory(str(decision), "no such decision for this user")

    # -- the mechanism -------------------------------------------------------------------

    def _move(
        self,
        uid: str,
        memory: URIRef,
        action: Action,
        actor: str,
        allowed: set[MemoryStatus] | None,
        change: Change,
        reason: str,
        *,
        extra_add: Sequence[Quad] = (),
        delta: DeltaPatch | None = None,
    ) -> URIRef:
        """``delta``: schema-delta declarations the change needs, validated with it and
        committed with it, but kept out of the decision: the terms are the user's vocabulary,
        which reverting the decision leaves alone."""
        with self._store.transaction() as tx:
            old = self.get(uid, memory)
            if allowed is not None and old.status not in allowed:
                raise LifecycleError(
                    str(memory), f"cannot {action.value} a memory that is {old.status.value}"
                )
            new = change(old)
            graph = old.graph or UserGraphs(uid).kg
            add = [*record_quads(new, graph), *extra_add]
            remove = record_quads(old, graph)
            kg = UserGraphs(uid).kg
            if new.status in _LIVE and old.status not in _LIVE:
                add += fact_quads(new.claims, kg)
            if old.status in _LIVE and new.status not in _LIVE:
                remove += retired_facts(self._active, uid, memory, old.claims, kg)
            net = net_change(self._store, add, remove)
            if new.status in _LIVE and old.status not in _LIVE:
                self._check(uid, memory, net, delta)
            decision, quads = self.decisions.record(
                uid, action, memory, net, reason, actor, self._clock.now()
            )
            schema = () if delta is None else self._ontology.plan_delta(uid, delta).quads
            tx.add(*net.add, *quads, *schema)
            tx.remove(*net.remove)
        if schema:
            self._ontology.invalidate(uid)
        return decision

    def _check(self, uid: str, memory: URIRef, change: Changeset, delta: DeltaPatch | None) -> None:
        report = self._validation.validate(uid, change, delta)
        if not report.conforms:
            raise LifecycleError(
                str(memory),
                "activating it would break the graph: "
                + "; ".join(v.message for v in report.violations),
            )

    # -- forget --------------------------------------------------------------------------

    def forget(self, uid: str, memory: URIRef, actor: str = "person") -> URIRef:
        """Purge ``memory`` from every graph of the user; returns the tombstone decision."""
        graphs = UserGraphs(uid)
        with self._store.transaction() as tx:
            record = self.get(uid, memory)
            nodes = {memory, *(c.iri for c in record.claims), *(e.iri for e in record.evidence)}
            for graph in graphs.standing:  # a routine's step nodes are the memory's too
                nodes |= {
                    q.object
                    for q in self._store.quads(graph, memory, KGM.step)
                    if isinstance(q.object, URIRef)
                }
            gone: list[Quad] = []
            for graph in graphs.standing:
                for node in nodes:
                    gone += self._store.quads(graph, subject=node)
                    gone += self._store.quads(graph, obj=node)
            if record.status in _LIVE:
                gone += retired_facts(self._active, uid, memory, record.claims, graphs.kg)
            gone += self._decisions_mentioning(uid, memory)
            # what ended passes that read its sources kept of them (quotes in their state)
            gone += read_by_passes(self._store, uid, {e.source for e in record.evidence})[0]
            tombstone = URIRef(f"urn:kgmem:forgotten:{sha256(str(memory).encode()).hexdigest()}")
            _, quads = self.decisions.record(
                uid,
                Action.ERRONEOUS,
                tombstone,
                Changeset(),
                "forgotten: purged on request",
                actor,
                self._clock.now(),
            )
            tx.remove(*dict.fromkeys(gone))
            tx.add(*quads)
        return tombstone

    def _decisions_mentioning(self, uid: str, memory: URIRef) -> list[Quad]:
        ops = UserGraphs(uid).ops
        rows = self._store.select(
            self._queries["memory/decisions_mentioning"], {"graph": ops, "needle": memory}
        )
        out: list[Quad] = []
        for row in rows:
            decision = row["decision"]
            assert isinstance(decision, URIRef)
            out += self._store.quads(ops, subject=decision)
            out += self._store.quads(ops, obj=decision)
        return out
