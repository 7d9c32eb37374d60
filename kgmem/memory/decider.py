"""The decisions for one planned draft: pre-pass, contradictions, status, and the change.

A small state machine kept out of the gate: the gate plans and validates, this decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from rdflib import URIRef

from kgmem.config import Settings
from kgmem.memory.changes import fact_quads, net_change, retired_facts
from kgmem.memory.decisions import Action, Decisions
from kgmem.memory.existing import ActiveClaims
from kgmem.memory.model import MAX_TRIGGERS, Authority, DraftMemory, MemoryKind, MemoryStatus
from kgmem.memory.planning import DraftPlan
from kgmem.memory.prepass import (
    Conflict,
    Disposition,
    ExistingClaim,
    Prepass,
    Resolution,
    prepass,
    resolve_conflict,
    slots,
    stated_change,
)
from kgmem.memory.records import ClaimRecord, MemoryRecord, read_memory, record_quads
from kgmem.memory.refs import resolve_refs
from kgmem.memory.retold import occurred, told_again
from kgmem.ontology import OntologyService, Violation
from kgmem.store import NodeKind, Quad, TripleStore, UserGraphs, new_node

__all__ = [
    "Actor",
    "BatchResult",
    "Decider",
    "GateDeps",
    "ItemResult",
    "Outcome",
    "Work",
    "WriteMode",
]


class WriteMode(StrEnum):
    AUTONOMOUS = "autonomous"
    REVIEW = "review"


class Actor(StrEnum):
    AGENT = "agent"  # an agent's write: subject to the mode
    PERSON = "person"  # the user, through the CLI or the browser
    CONSOLIDATION = "consolidation"  # a background pass: subject to the mode, like an agent


class Outcome(StrEnum):
    ACTIVE = "active"
    PENDING = "pending"
    MERGED = "merged"
    DISCARDED = "discarded"
    QUARANTINED = "quarantined"
    REFUSED = "refused"


_EPISODIC = MemoryKind.EPISODIC.iri


@dataclass(frozen=True)
class ItemResult:
    index: int
    outcome: Outcome
    memory: URIRef | None = None
    decision: URIRef | None = None
    reasons: tuple[str, ...] = ()
    needs_terms: tuple[URIRef, ...] = ()
    superseded: tuple[URIRef, ...] = ()
    weakened: tuple[URIRef, ...] = ()
    contradicts: tuple[URIRef, ...] = ()
    violations: tuple[Violation, ...] = ()


@dataclass(frozen=True)
class BatchResult:
    items: tuple[ItemResult, ...]


@dataclass
class Work:
    """What one draft will write, gathered while deciding, and the plan it was decided on
    (None when it was refused before a decision: a caller deciding drafts side by side, as
    consolidation's reconcile does, asks which active claims it weighed)."""

    change_add: list[Quad]
    change_remove: list[Quad]
    result: ItemResult
    plan: DraftPlan | None = None


@dataclass(frozen=True)
class GateDeps:
    """What deciding needs from the gate."""

    store: TripleStore
    ontology: OntologyService
    active: ActiveClaims
    decisions: Decisions
    settings: Settings
    order: tuple[Authority, ...]
    now: datetime


class Decider:
    """The decisions for one planned draft (a small state machine, kept out of the gate)."""

    def __init__(
        self,
        deps: GateDeps,
        uid: str,
        index: int,
        draft: DraftMemory,
        plan: DraftPlan,
        actor: Actor,
        mode: WriteMode,
        existing: list[ExistingClaim],
    ) -> None:
        self.deps, self.uid, self.index, self.draft, self.plan = deps, uid, index, draft, plan
        self.actor, self.mode, self.existing = actor, mode, existing
        self.graphs = UserGraphs(uid)
        self.now = deps.now
        self.add: list[Quad] = list(plan.entity_quads)
        self.remove: list[Quad] = []
        self.reasons: list[str] = list(plan.refusals)

    def run(self) -> Work:
        functional = self.deps.ontology.effective(self.uid).is_functional
        changed = bool(self.plan.change_texts)
        pre = prepass(self.plan.claims, self.existing, slots(functional, changed))
        pre, supported = self._as_event(pre)
        conflicts = [
            c
            for c in pre.conflicts
            if not changed or stated_change(c, functional, self.plan.change_texts)
        ]
        conflicts += [  # "ledger-api moved to Payments Platform": Core Ledger owns it no more
            Conflict(claim, held, "the thing moved to another holder")
            for claim in (self.plan.claims[n] for n in self.plan.moved)
            for held in self.deps.active.holding(self.uid, claim, self.deps.order)
            if not held.claim.negated and not claim.negated
        ]
        authority = self.plan.authority or Authority.AGENT
        valid_from = min((c.valid_from for c in self.draft.claims if c.valid_from), default=None)
        if valid_from is None and changed:
            valid_from = self.plan.change_at  # the world changed when the source said so
        resolutions = [
            (c, resolve_conflict(c, authority, valid_from, self.deps.order)) for c in conflicts
        ]
        if any(r is Resolution.QUARANTINE for _, r in resolutions):
            return self._quarantine([c.existing.memory for c, _ in resolutions])
        if pre.disposition is not Disposition.CREATE and pre.target is not None:
            return self._fold(pre.disposition, pre.target, pre.new_claims)
        told = None if self.plan.claims else self._told_again()
        if told is not None:
            return self._fold(Disposition.DISCARD, told, ())
        superseded = [c.existing.memory for c, r in resolutions if r is Resolution.SUPERSEDE]
        weakened = [c.existing.memory for c, r in resolutions if r is Resolution.WEAKEN]
        status = self._status(authority, bool(weakened))
        waiting = self._waiting() if status is MemoryStatus.ACTIVE and not superseded else None
        if waiting is not None:
            return self._promote(waiting)
        memory = self._record(status, self.plan.claims, superseded, weakened, valid_from)
        memory = replace(memory, supports=supported)
        for old in dict.fromkeys(superseded):
            self._supersede(old, memory.iri, valid_from)
        for old in dict.fromkeys(weakened):
            self._weaken(old)
        self.add += record_quads(memory, self.graphs.kg)
        if status is MemoryStatus.ACTIVE:
            self.add += fact_quads(memory.claims, self.graphs.kg)
        action = (
            Action.SUPERSEDE
            if superseded
            else (Action.CREATE if status is MemoryStatus.ACTIVE else Action.HOLD)
        )
        outcome = Outcome.ACTIVE if status is MemoryStatus.ACTIVE else Outcome.PENDING
        return self._finish(
            action, memory.iri, outcome, superseded=tuple(superseded), weakened=tuple(weakened)
        )

    def _told_again(self) -> URIRef | None:
        return told_again(self.deps.store, self.graphs.kg, self.draft, self.plan.evidence)

    def _as_event(self, pre: Prepass) -> tuple[Prepass, tuple[URIRef, ...]]:
        """An episode restating what memories know is folded into an episode of the same time
        that knows it (the same event told again); otherwise it is an event of its own: "moved
        to Porto on 3 May" is no repeat of "lives in Porto", nor of last year's move, and its
        evidence supports what the facts among them claim (``kgm:supports``)."""
        d = self.draft
        if d.kind is not MemoryKind.EPISODIC or d.occurred_at is None or pre.target is None:
            return pre, ()
        keys = {c.key() for c in self.plan.claims}
        restated = sorted({e.memory for e in self.existing if e.claim.key() in keys})
        when = {m: occurred(self.deps.store, self.graphs.kg, m) for m in restated}
        same = [m for m in restated if when[m] == d.occurred_at]
        if same:
            return replace(pre, target=same[0]), ()
        facts = tuple(m for m in restated if when[m] is None)
        return Prepass(Disposition.CREATE, None, pre.new_claims, pre.conflicts), facts

    def _status(self, authority: Authority, contested: bool) -> MemoryStatus:
        if self.plan.needs_terms or contested:
            if self.plan.needs_terms:
                self.reasons.append("uses terms the ontology does not declare yet")
            if contested:
                self.reasons.append("contradicts an active memory of equal standing")
            return MemoryStatus.PENDING
        if self.actor is Actor.PERSON:
            return MemoryStatus.ACTIVE
        if self.mode is WriteMode.REVIEW or not self.plan.may_auto_activate:
            self.reasons.append(
                "review mode"
                if self.mode is WriteMode.REVIEW
                else "its evidence cannot activate it alone"
            )
            return MemoryStatus.PENDING
        confident = self._confidence() >= self.deps.settings.auto_activate_confidence
        if confident or authority is Authority.USER:
            return MemoryStatus.ACTIVE
        self.reasons.append("below the auto-activate confidence")
        return MemoryStatus.PENDING

    def _confidence(self) -> float:
        return min(self.draft.confidence, self.plan.confidence_cap)

    def _record(
        self,
        status: MemoryStatus,
        claims: Sequence[ClaimRecord],
        superseded: Sequence[URIRef],
        contradicts: Sequence[URIRef],
        valid_from: datetime | None,
    ) -> MemoryRecord:
        d = self.draft
        refs = resolve_refs(self.deps.store, self.uid, d.source_refs, strict=False)
        expires = None
        if d.ttl is not None:
            expires = (d.occurred_at or self.now) + d.ttl
        return MemoryRecord(
            iri=new_node(self.uid, NodeKind.MEMORY),
            kind=d.kind,
            status=status,
            title=d.title,
            confidence=self._confidence(),
            recorded_at=self.now,
            excerpt=d.excerpt,
            body=d.body,
            tags=tuple(dict.fromkeys(d.tags)),
            domain=d.domain,
            about=tuple(self.plan.about),
            claims=tuple(claims),
            evidence=tuple(self.plan.evidence),
            occurred_at=d.occurred_at,
            ttl=d.ttl,
            expires_at=expires,
            valid_from=valid_from,
            source_refs=refs.locators,
            derived_from=refs.derived_from,
            steps=d.steps,
            triggers=tuple(dict.fromkeys(d.triggers)),
            needs_terms=tuple(dict.fromkeys(self.plan.needs_terms)),
            supersedes=tuple(dict.fromkeys(superseded)),
            contradicts=tuple(dict.fromkeys(contradicts)),
        )

    # -- effects on other memories ------------------------------------------------------

    def _read(self, memory: URIRef) -> MemoryRecord:
        record = read_memory(self.deps.store, memory, [self.graphs.kg])
        assert record is not None, memory
        return record

    def _replace(self, old: MemoryRecord, new: MemoryRecord) -> None:
        self.remove += record_quads(old, self.graphs.kg)
        self.add += record_quads(new, self.graphs.kg)

    def _supersede(self, old_iri: URIRef, by: URIRef, valid_from: datetime | None) -> None:
        old = self._read(old_iri)
        self._replace(
            old,
            replace(
                old, status=MemoryStatus.SUPERSEDED, retired_at=self.now, valid_until=valid_from
            ),
        )
        self.remove += retired_facts(
            self.deps.active, self.uid, old_iri, old.claims, self.graphs.kg
        )
        self.reasons.append(f"supersedes {old_iri}")

    def _weaken(self, old_iri: URIRef) -> None:
        old = self._read(old_iri)
        self._replace(old, replace(old, confidence=old.confidence / 2))
        self.reasons.append(f"halved the confidence of {old_iri}")

    def _quarantine(self, protected: Sequence[URIRef]) -> Work:
        memory = self._record(MemoryStatus.QUARANTINED, self.plan.claims, (), protected, None)
        self.add += record_quads(memory, self.graphs.quarantine)
        self.reasons.append(
            "contradicts a pinned or higher-authority memory: "
            + ", ".join(dict.fromkeys(protected))
        )
        return self._finish(
            Action.QUARANTINE,
            memory.iri,
            Outcome.QUARANTINED,
            contradicts=tuple(dict.fromkeys(protected)),
        )

    def _waiting(self) -> URIRef | None:
        """A review-inbox memory making exactly these claims (second-hand, say)."""
        if not self.plan.claims:
            return None
        functional = self.deps.ontology.effective(self.uid).is_functional
        pending = self.deps.active.about(
            self.uid, self.plan.claims, functional, self.deps.order, pending=True
        )
        keys = {c.key() for c in self.plan.claims}
        by_memory: dict[URIRef, set[tuple[object, ...]]] = {}
        for e in pending:
            by_memory.setdefault(e.memory, set()).add(e.claim.key())
        return next((m for m, ks in by_memory.items() if ks == keys), None)

    def _promote(self, waiting: URIRef) -> Work:
        """First-hand support for a waiting memory: its evidence joins, and it activates."""
        old = self._read(waiting)
        known = {(e.source, e.span) for e in old.evidence}
        evidence = [e for e in self.plan.evidence if (e.source, e.span) not in known]
        new = replace(
            self._with_procedure(old),
            status=MemoryStatus.ACTIVE,
            evidence=old.evidence + tuple(evidence),
            confidence=max(old.confidence, self._confidence()),
        )
        self._replace(old, new)
        self.add += fact_quads(new.claims, self.graphs.kg)
        self.reasons.append("independent first-hand support activated a waiting memory")
        return self._finish(Action.ACTIVATE, waiting, Outcome.ACTIVE)

    def _fold(
        self, disposition: Disposition, target: URIRef, new_claims: Sequence[ClaimRecord]
    ) -> Work:
        """DISCARD (everything known: keep the new evidence) or MERGE the new claims in."""
        old = self._read(target)
        known = {(e.source, e.span) for e in old.evidence}
        evidence = [e for e in self.plan.evidence if (e.source, e.span) not in known]
        merged = replace(
            self._with_procedure(old),
            claims=old.claims + tuple(new_claims),
            evidence=old.evidence + tuple(evidence),
            about=tuple(dict.fromkeys(old.about + tuple(self.plan.about))),
        )
        self._replace(old, merged)
        if old.status is MemoryStatus.ACTIVE:
            self.add += fact_quads(new_claims, self.graphs.kg)
        if disposition is Disposition.DISCARD:
            kept = f"; {len(evidence)} new evidence item(s) kept" if evidence else ""
            said = "every claim is already known" if self.plan.claims else "told again"
            self.reasons.append(said + kept)
            return self._finish(Action.DISCARD, target, Outcome.DISCARDED)
        self.reasons.append(f"{len(new_claims)} new claim(s) folded into {target}")
        return self._finish(Action.MERGE, target, Outcome.MERGED)

    def _with_procedure(self, old: MemoryRecord) -> MemoryRecord:
        """``old`` with what the draft says of a procedure: its triggers join (the old ones
        first, up to the cap), and its steps replace the old ones (a procedure is not two
        lists run together)."""
        if old.kind is not MemoryKind.PROCEDURAL:
            return old
        steps = self.draft.steps or old.steps
        if steps != old.steps:
            self.reasons.append(f"its steps are now {len(steps)} (were {len(old.steps)})")
        triggers = tuple(dict.fromkeys(old.triggers + self.draft.triggers))[:MAX_TRIGGERS]
        return replace(old, steps=steps, triggers=triggers)

    def _finish(
        self,
        action: Action,
        memory: URIRef,
        outcome: Outcome,
        *,
        superseded: tuple[URIRef, ...] = (),
        weakened: tuple[URIRef, ...] = (),
        contradicts: tuple[URIRef, ...] = (),
    ) -> Work:
        change = net_change(self.deps.store, self.add, self.remove)
        self.add, self.remove = list(change.add), list(change.remove)
        reason = "; ".join(self.reasons) or outcome.value
        decision, quads = self.deps.decisions.record(
            self.uid, action, memory, change, reason, self.actor.value, self.now
        )
        result = ItemResult(
            self.index,
            outcome,
            memory,
            decision,
            tuple(self.reasons),
            tuple(dict.fromkeys(self.plan.needs_terms)),
            superseded,
            weakened,
            contradicts,
        )
        return Work(self.add + quads, self.remove, result, self.plan)
