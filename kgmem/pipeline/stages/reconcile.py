"""Reconcile (code): each draft of the pass against existing memories, by the gate's own code.

:meth:`~kgmem.memory.gate.WriteGate.decide` runs exactly as for a foreground write —
planning, DISCARD/MERGE/CREATE, contradictions (supersede, quarantine, weaken), the user's
write mode — with the pass's entity bindings (:class:`~kgmem.pipeline.stages.resolve.PassResolver`),
the ontology as the pass's schema delta will make it, and the terms assemble deferred (such a
memory waits as pending with its vocabulary proposal). The gate plans the draft as the model
proposed it (:meth:`~kgmem.pipeline.worklist.PassDraft.proposed`: with the classes its
answer said its mentions are), so what the gate checks a draft's types against it checks
them against here too: a name the chat makes a person ("my colleague Claire Fontaine"),
said to be an organization, is refused as the gate refuses it. Nothing is written: each draft's
change travels to validate and commit as N-Quads. A refused draft is dropped with its
reasons and, as at the foreground gate, its refusal is a decision in the feed (written at
commit, with the pass).

Drafts of one pass are decided against the same store, so two of them must not change the
same thing: a draft that would create a claim another draft of the pass creates, or change
a node another draft changes, is *deferred* — queued again at commit, it is decided by the
next pass against what this one committed (where it folds in as DISCARD or MERGE). So is a
draft the gate would weigh against a claim an earlier draft of the pass makes (the store
with the earlier drafts' changes laid over it says which, by the gate's own lookup): a
newer value of a single-valued slot, or one whose evidence says the world changed ("since
April I'm a senior researcher"), is decided next against the older value it may close, as
the foreground gate decides the second of two drafts.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from pydantic import BaseModel, ConfigDict, JsonValue
from rdflib import URIRef

from kgmem.errors import OntologyError
from kgmem.memory.decider import Actor, Outcome, Work
from kgmem.memory.overlay import BatchView
from kgmem.memory.prepass import ExistingClaim
from kgmem.ontology import DeltaPatch, EffectiveOntology
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.refusals import refusal_quads
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.stages.assemble import delta_patch
from kgmem.pipeline.stages.resolve import PassResolver
from kgmem.pipeline.worklist import Dropped, PassDraft, Worklist, worklist
from kgmem.store import Quad, to_nquads
from kgmem.vocab import KGM

__all__ = ["Decided", "ReconcileStage", "Reconciled", "pass_delta"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Decided(_Model):
    """One draft's decision and the change it makes."""

    key: str
    outcome: Outcome
    memory: str | None = None
    reasons: tuple[str, ...] = ()
    add: str = ""  # N-Quads
    remove: str = ""


class Reconciled(_Model):
    """The reconcile stage's output."""

    decided: tuple[Decided, ...] = ()
    deferred: tuple[PassDraft, ...] = ()  # queued again at commit
    dropped: tuple[Dropped, ...] = ()
    notes: tuple[Dropped, ...] = ()  # why a draft was decided without the pass's delta
    #: the refused drafts' decisions for the feed (N-Quads), written at commit
    refusals: str = ""
    delta_at: datetime | None = None  # the schema delta's time (it names its records)

    def to_json(self) -> JsonValue:
        value: JsonValue = self.model_dump(mode="json")
        return value


def pass_delta(uid: str, state: PassState, at: datetime | None) -> DeltaPatch | None:
    """The pass's schema-delta patch, the same each time it is rebuilt (``at`` is kept)."""
    if at is None:
        return None
    return delta_patch(uid, worklist(state, StageName.RECONCILE), at)


class ReconcileStage:
    name = StageName.RECONCILE

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        work = worklist(state, self.name)
        at = ctx.clock.now()
        patch = delta_patch(ctx.uid, work, at)
        effective, notes = self._effective(ctx.uid, patch, work)
        slots = _Slots(self._ports, ctx, effective)
        dropped: list[Dropped] = []
        gate, mode = self._ports.gate, self._ports.gate.mode(ctx.uid)
        decided: list[Decided] = []
        deferred: list[PassDraft] = []
        claims: set[str] = set()
        removed: set[Quad] = set()
        changed: set[URIRef] = set()
        refusals: list[Quad] = []
        for index, entry in enumerate(work.drafts):
            result = gate.decide(
                ctx.uid,
                index,
                entry.proposed(),
                Actor.CONSOLIDATION,
                mode,
                ctx.uid,
                resolver=PassResolver(ctx.store, ctx.queries, entry.bindings),
                effective=effective,
                needs_terms=[URIRef(t) for t in entry.deferred_terms],
            )
            if result.result.outcome is Outcome.REFUSED:
                dropped.append(_refused(entry.key, result))
                refusals += refusal_quads(ctx, entry, result.result.reasons)
                continue
            keys, touches = _claim_keys(result.change_add), _touched(result)
            if (
                keys & claims
                or touches & changed
                or removed & set(result.change_remove)
                or slots.weighs_on_pass(result)
            ):
                deferred.append(entry)
                continue
            claims |= keys
            changed |= touches
            removed |= set(result.change_remove)
            slots.apply(result)
            decided.append(_decided(entry.key, result))
        out = Reconciled(
            decided=tuple(decided),
            deferred=tuple(deferred),
            dropped=tuple(dropped),
            notes=tuple(notes),
            delta_at=at if patch is not None and effective is not None else None,
            refusals=to_nquads(refusals),
        )
        return state.with_output(self.name, out.to_json())

    def _effective(
        self, uid: str, patch: DeltaPatch | None, work: Worklist
    ) -> tuple[EffectiveOntology | None, list[Dropped]]:
        if patch is None:
            return None, []
        try:
            effective, _ = self._ports.ontology.preview(uid, patch)
        except OntologyError as exc:
            # Assemble checked the patch; if the ontology changed since, nothing is declared
            # and the drafts using the pass's new terms wait as pending, with this reason.
            why = f"the pass's schema delta was refused: {exc}"
            users = [d.key for d in work.drafts if _uses_delta(d, work)]
            return None, [
                Dropped(key=k, stage=self.name, code="schema", message=why) for k in users
            ]
        return effective, []


class _Slots:
    """The active claims the gate weighs a draft against, in the store and in the store as
    the pass's drafts decided so far will leave it."""

    def __init__(
        self, ports: PassPorts, ctx: PassContext, effective: EffectiveOntology | None
    ) -> None:
        self._gate, self._uid = ports.gate, ctx.uid
        self._effective = effective or ports.ontology.effective(ctx.uid)
        self._view = BatchView(ctx.store)

    def apply(self, work: Work) -> None:
        self._view.apply(work.change_add, work.change_remove)

    def weighs_on_pass(self, work: Work) -> bool:
        """Whether the gate, had the earlier drafts been committed, would weigh ``work``'s
        draft against a claim one of them makes (decided against the store, it did not)."""
        plan = work.plan
        if plan is None or not plan.claims or not self._view:
            return False
        gate, uid, effective = self._gate, self._uid, self._effective
        stored = {_weighed(e) for e in gate.existing(uid, plan, effective, moved=True)}
        after = gate.existing(uid, plan, effective, store=self._view, moved=True)
        return any(_weighed(e) not in stored for e in after)


def _weighed(claim: ExistingClaim) -> tuple[URIRef, URIRef]:
    return claim.memory, claim.claim.iri


def _refused(key: str, work: Work) -> Dropped:
    """A refused draft, coded by the kind of its first violation (``disjoint``: it types a
    known entity with a class disjoint with the entity's) or plainly ``refused``."""
    result = work.result
    code = result.violations[0].kind.value if result.violations else "refused"
    reasons = "; ".join(result.reasons) or "refused"
    return Dropped(key=key, stage=StageName.RECONCILE, code=code, message=reasons)


def _uses_delta(entry: PassDraft, work: Worklist) -> bool:
    terms = {t.iri for t in work.undeclared}
    used = {c.predicate for c in entry.draft.claims}
    used |= {t for e in entry.draft.entities for t in e.types}
    return bool(terms & used)


def _claim_keys(quads: Iterable[Quad]) -> set[str]:
    return {str(q.object) for q in quads if q.predicate == KGM.claimKey}


def _touched(work: Work) -> set[URIRef]:
    """Existing nodes the change alters (those it removes statements of)."""
    return {q.subject for q in work.change_remove if isinstance(q.subject, URIRef)}


def _decided(key: str, work: Work) -> Decided:
    result = work.result
    return Decided(
        key=key,
        outcome=result.outcome,
        memory=None if result.memory is None else str(result.memory),
        reasons=result.reasons,
        add=to_nquads(work.change_add),
        remove=to_nquads(work.change_remove),
    )
