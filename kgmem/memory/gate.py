"""The write gate: every foreground write goes through here.

For each draft: ground and type it (:mod:`kgmem.memory.planning`), compare it with the
user's active memories (DISCARD / MERGE / CREATE), handle contradictions (quarantine,
supersede, weaken), choose its status (autonomous: confident or user-backed drafts
activate, the rest wait in the review inbox; review mode: every agent write waits),
validate the change as a graph, and record the decision with the exact change it made.

Batches: malformed input (size outside 1..batch_max, a bad field) refuses the whole batch
before anything is read. Otherwise drafts are decided in order, each with its own outcome:
a draft that fails grounding or validation is refused with its reasons while the others go
on, and each accepted draft is committed in its own store transaction (never half-written),
so a later draft of the batch sees the earlier ones (a repeat in one batch is discarded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from hashlib import sha256
from typing import Any

from pydantic import ValidationError
from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import BatchSizeError, DraftInvalid
from kgmem.memory.changes import fact_quads, net_change, retired_facts
from kgmem.memory.decisions import Action, Decisions
from kgmem.memory.entities import EntityResolver
from kgmem.memory.existing import ActiveClaims
from kgmem.memory.ids import NodeKind, new_node, node_iri
from kgmem.memory.model import Authority, DraftMemory, MemoryStatus, SourceRecord
from kgmem.memory.planning import DraftPlan, PlanContext, plan_draft
from kgmem.memory.prepass import (
    Disposition,
    ExistingClaim,
    Resolution,
    prepass,
    resolve_conflict,
)
from kgmem.memory.records import ClaimRecord, MemoryRecord, read_memory, record_quads
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.sources import SourceStore
from kgmem.ontology import OntologyService, ValidationService, Violation
from kgmem.store import Changeset, Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = [
    "REPORTED",
    "Actor",
    "BatchResult",
    "ItemResult",
    "Outcome",
    "WriteGate",
    "WriteMode",
]

#: The evidence source id that names a draft's own ``reported_source``.
REPORTED = "reported"


class WriteMode(StrEnum):
    AUTONOMOUS = "autonomous"
    REVIEW = "review"


class Actor(StrEnum):
    AGENT = "agent"  # an agent's write: subject to the mode
    PERSON = "person"  # the user, through the CLI or the browser


class Outcome(StrEnum):
    ACTIVE = "active"
    PENDING = "pending"
    MERGED = "merged"
    DISCARDED = "discarded"
    QUARANTINED = "quarantined"
    REFUSED = "refused"


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
class _Work:
    """What one draft will write, gathered while deciding."""

    change_add: list[Quad]
    change_remove: list[Quad]
    result: ItemResult


class WriteGate:
    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        settings: Settings,
        clock: Clock,
        sources: SourceStore,
        ontology: OntologyService,
        validation: ValidationService,
        authority_order: tuple[Authority, ...] | None = None,
    ) -> None:
        self._store, self._queries, self._settings, self._clock = store, queries, settings, clock
        self._sources, self._ontology, self._validation = sources, ontology, validation
        self._order = authority_order or tuple(
            Authority(a.strip()) for a in settings.authority_order.split(",")
        )
        self._resolver = EntityResolver(store, queries)
        self._active = ActiveClaims(store, queries)
        self.decisions = Decisions(store, queries)

    # -- input -------------------------------------------------------------------------

    def parse(self, payloads: Sequence[Mapping[str, Any] | DraftMemory]) -> list[DraftMemory]:
        """Validate a batch's shape and fields; raise before anything is read or written."""
        if not 1 <= len(payloads) <= self._settings.batch_max:
            raise BatchSizeError(len(payloads), self._settings.batch_max)
        drafts = []
        context = {"max_tags": self._settings.max_tags}
        for index, payload in enumerate(payloads):
            raw = payload.model_dump() if isinstance(payload, DraftMemory) else payload
            try:
                drafts.append(DraftMemory.model_validate(raw, context=context))
            except ValidationError as exc:
                error = exc.errors()[0]
                where = ".".join(str(p) for p in error["loc"]) or "draft"
                raise DraftInvalid(index, where, error["msg"]) from exc
        return drafts

    # -- the gate ----------------------------------------------------------------------

    def draft(
        self,
        uid: str,
        payloads: Sequence[Mapping[str, Any] | DraftMemory],
        *,
        actor: Actor = Actor.AGENT,
        mode: WriteMode | None = None,
        account_name: str | None = None,
    ) -> BatchResult:
        """Run a batch of drafts through the gate; see the module docstring."""
        drafts = self.parse(payloads)
        mode = mode or self.mode(uid)
        results = []
        for index, draft in enumerate(drafts):
            with self._store.transaction() as tx:
                work = self._one(uid, index, draft, actor, mode, account_name or uid)
                tx.add(*work.change_add)
                tx.remove(*work.change_remove)
            results.append(work.result)
        return BatchResult(tuple(results))

    def _one(
        self,
        uid: str,
        index: int,
        draft: DraftMemory,
        actor: Actor,
        mode: WriteMode,
        account: str,
    ) -> _Work:
        draft = self._reported(uid, draft)
        sources = self._sources.get(uid, [e.source for e in draft.evidence])
        ctx = PlanContext(
            uid,
            account,
            self._ontology.effective(uid),
            self._resolver,
            _by_id(sources),
            self._previous(uid, sources.values()),
            {},
            self._order,
        )
        plan = plan_draft(draft, ctx)
        if not plan.grounded:
            return _Work(
                [],
                [],
                ItemResult(
                    index, Outcome.REFUSED, reasons=tuple(plan.refusals) or ("no evidence",)
                ),
            )
        functional = self._ontology.effective(uid).is_functional
        existing = self._active.about(uid, plan.claims, functional, self._order)
        work = _Decider(self, uid, index, draft, plan, actor, mode, existing).run()
        if work.result.outcome is not Outcome.REFUSED:
            report = self._validation.validate(
                uid, Changeset.of(work.change_add, work.change_remove)
            )
            if not report.conforms:
                return _Work(
                    [],
                    [],
                    ItemResult(
                        index,
                        Outcome.REFUSED,
                        reasons=tuple(v.message for v in report.violations),
                        violations=report.violations,
                    ),
                )
        return work

    def mode(self, uid: str) -> WriteMode:
        """The user's write mode (autonomous unless they chose review)."""
        for quad in self._store.quads(UserGraphs(uid).ops, _prefs(uid), KGM.writeMode):
            return WriteMode(str(quad.object))
        return WriteMode.AUTONOMOUS

    def set_mode(self, uid: str, mode: WriteMode) -> None:
        ops, node = UserGraphs(uid).ops, _prefs(uid)
        with self._store.transaction() as tx:
            tx.remove(*self._store.quads(ops, node, KGM.writeMode))
            tx.add(Quad(node, KGM.writeMode, Literal(mode.value), ops))

    def _reported(self, uid: str, draft: DraftMemory) -> DraftMemory:
        """Keep a source the agent reports inline ("the user said: ...") as a second-hand
        message with agent authority, and point the draft's ``"reported"`` evidence at it."""
        reported = draft.reported_source
        if reported is None:
            return draft
        chat = reported.chat or "reported-" + sha256(reported.text.encode()).hexdigest()[:16]
        stored = self._sources.ingest_message(
            uid,
            MessageIn(
                chat=chat, turn=0, role=reported.role, text=reported.text, agent_reported=True
            ),
        )
        evidence = tuple(
            e.model_copy(update={"source": str(stored.iri)}) if e.source == REPORTED else e
            for e in draft.evidence
        )
        return draft.model_copy(update={"evidence": evidence})

    def _previous(self, uid: str, records: Any) -> dict[URIRef, SourceRecord]:
        out = {}
        for record in records:
            before = self._sources.previous_message(uid, record)
            if before is not None:
                out[record.iri] = before
        return out

    def now(self) -> datetime:
        return self._clock.now()


def _prefs(uid: str) -> URIRef:
    return node_iri(uid, NodeKind.PREFERENCES, "write")


def _by_id(sources: Mapping[str, SourceRecord]) -> dict[str, SourceRecord]:
    out = dict(sources)
    for record in sources.values():
        out[str(record.iri)] = record
    return out


class _Decider:
    """The decisions for one planned draft (a small state machine, kept out of the gate)."""

    def __init__(
        self,
        gate: WriteGate,
        uid: str,
        index: int,
        draft: DraftMemory,
        plan: DraftPlan,
        actor: Actor,
        mode: WriteMode,
        existing: list[ExistingClaim],
    ) -> None:
        self.gate, self.uid, self.index, self.draft, self.plan = gate, uid, index, draft, plan
        self.actor, self.mode, self.existing = actor, mode, existing
        self.graphs = UserGraphs(uid)
        self.now = gate.now()
        self.add: list[Quad] = list(plan.entity_quads)
        self.remove: list[Quad] = []
        self.reasons: list[str] = list(plan.refusals)

    def run(self) -> _Work:
        functional = self.gate._ontology.effective(self.uid).is_functional
        pre = prepass(self.plan.claims, self.existing, functional)
        authority = self.plan.authority or Authority.AGENT
        valid_from = min((c.valid_from for c in self.draft.claims if c.valid_from), default=None)
        resolutions = [
            (c, resolve_conflict(c, authority, valid_from, self.gate._order)) for c in pre.conflicts
        ]
        if any(r is Resolution.QUARANTINE for _, r in resolutions):
            return self._quarantine([c.existing.memory for c, _ in resolutions])
        if pre.disposition is not Disposition.CREATE and pre.target is not None:
            return self._fold(pre.disposition, pre.target, pre.new_claims)
        superseded = [c.existing.memory for c, r in resolutions if r is Resolution.SUPERSEDE]
        weakened = [c.existing.memory for c, r in resolutions if r is Resolution.WEAKEN]
        status = self._status(authority, bool(weakened))
        waiting = self._waiting() if status is MemoryStatus.ACTIVE and not superseded else None
        if waiting is not None:
            return self._promote(waiting)
        memory = self._record(status, self.plan.claims, superseded, weakened, valid_from)
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

    # -- statuses ----------------------------------------------------------------------

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
        confident = self._confidence() >= self.gate._settings.auto_activate_confidence
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
            source_refs=d.source_refs,
            supersedes=tuple(dict.fromkeys(superseded)),
            contradicts=tuple(dict.fromkeys(contradicts)),
        )

    # -- effects on other memories ------------------------------------------------------

    def _read(self, memory: URIRef) -> MemoryRecord:
        record = read_memory(self.gate._store, memory, [self.graphs.kg])
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
            self.gate._active, self.uid, old_iri, old.claims, self.graphs.kg
        )
        self.reasons.append(f"supersedes {old_iri}")

    def _weaken(self, old_iri: URIRef) -> None:
        old = self._read(old_iri)
        self._replace(old, replace(old, confidence=old.confidence / 2))
        self.reasons.append(f"halved the confidence of {old_iri}")

    def _quarantine(self, protected: Sequence[URIRef]) -> _Work:
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
        functional = self.gate._ontology.effective(self.uid).is_functional
        pending = self.gate._active.about(
            self.uid, self.plan.claims, functional, self.gate._order, pending=True
        )
        keys = {c.key() for c in self.plan.claims}
        by_memory: dict[URIRef, set[tuple[object, ...]]] = {}
        for e in pending:
            by_memory.setdefault(e.memory, set()).add(e.claim.key())
        return next((m for m, ks in by_memory.items() if ks == keys), None)

    def _promote(self, waiting: URIRef) -> _Work:
        """First-hand support for a waiting memory: its evidence joins, and it activates."""
        old = self._read(waiting)
        known = {(e.source, e.span) for e in old.evidence}
        evidence = [e for e in self.plan.evidence if (e.source, e.span) not in known]
        new = replace(
            old,
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
    ) -> _Work:
        """DISCARD (everything known: keep the new evidence) or MERGE the new claims in."""
        old = self._read(target)
        known = {(e.source, e.span) for e in old.evidence}
        evidence = [e for e in self.plan.evidence if (e.source, e.span) not in known]
        merged = replace(
            old,
            claims=old.claims + tuple(new_claims),
            evidence=old.evidence + tuple(evidence),
            about=tuple(dict.fromkeys(old.about + tuple(self.plan.about))),
        )
        self._replace(old, merged)
        if old.status is MemoryStatus.ACTIVE:
            self.add += fact_quads(new_claims, self.graphs.kg)
        if disposition is Disposition.DISCARD:
            self.reasons.append("every claim is already known; evidence added")
            return self._finish(Action.DISCARD, target, Outcome.DISCARDED)
        self.reasons.append(f"{len(new_claims)} new claim(s) folded into {target}")
        return self._finish(Action.MERGE, target, Outcome.MERGED)

    def _finish(
        self,
        action: Action,
        memory: URIRef,
        outcome: Outcome,
        *,
        superseded: tuple[URIRef, ...] = (),
        weakened: tuple[URIRef, ...] = (),
        contradicts: tuple[URIRef, ...] = (),
    ) -> _Work:
        change = net_change(self.gate._store, self.add, self.remove)
        self.add, self.remove = list(change.add), list(change.remove)
        reason = "; ".join(self.reasons) or outcome.value
        decision, quads = self.gate.decisions.record(
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
        return _Work(self.add + quads, self.remove, result)
