"""The write gate: every foreground write goes through here.

For each draft: ground and type it (:mod:`kgmem.memory.planning`), compare it with the
user's active memories (DISCARD / MERGE / CREATE), handle contradictions (quarantine,
supersede, weaken), choose its status (autonomous: confident or user-backed drafts
activate, the rest wait in the review inbox; review mode: every agent write waits),
validate the change as a graph, and record the decision with the exact change it made. A
draft that types a known entity with a class disjoint with the entity's (a person it names
by its own cited speaker, typed as an organization) is refused with that conflict.

Batches: malformed input (size outside 1..batch_max, a bad field) refuses the whole batch
before anything is read. Otherwise drafts are decided in order, each with its own outcome,
and each sees the earlier drafts' changes (a repeat in one batch is discarded), through a
:class:`~kgmem.memory.overlay.BatchView` that lays them over the store. A draft that fails
grounding or validation is refused with its reasons while the others go on.

Validation runs once, on the batch's whole change. Only when that has violations is each
draft validated on its own, in order, against the store plus the drafts accepted before it,
so the refusal names the draft and its violations; the drafts after a refused one are then
decided again, without it. (So a draft whose change breaks a shape that a later draft of
the same batch repairs is accepted: the batch, as written, conforms.)

A refused draft is a decision too: once the batch's outcomes are final, each refusal is
recorded in the decisions feed with its reasons, in the batch's commit (one per refused
draft: a draft decided again on the way is still refused once). It names the draft by
title, kind and hash; the draft's content is not kept.

The batch is atomic: the accepted drafts are written in one store commit, with the write
lock held from the first read to the commit, so a crash or an error leaves either all of
them or none. Reported sources (``reported_source``) are recorded as they are read, before
the commit, as sources always are.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from hashlib import sha256
from typing import Any

from pydantic import ValidationError
from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import BatchSizeError, DraftInvalid
from kgmem.memory.decider import (
    Actor,
    BatchResult,
    Decider,
    GateDeps,
    ItemResult,
    Outcome,
    Work,
    WriteMode,
)
from kgmem.memory.decisions import Decisions
from kgmem.memory.entities import EntityResolver, self_entity
from kgmem.memory.existing import ActiveClaims
from kgmem.memory.grounding import BatchNames, batch_names
from kgmem.memory.model import Authority, DraftMemory, SourceRecord
from kgmem.memory.overlay import BatchView
from kgmem.memory.planning import DraftPlan, PlanContext, grounding_context, plan_draft
from kgmem.memory.prepass import ExistingClaim, slots
from kgmem.memory.refs import UnknownRef, resolve_refs
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.sources import SourceStore
from kgmem.ontology import EffectiveOntology, OntologyService, ValidationService
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    Transaction,
    TripleStore,
    UserGraphs,
    node_iri,
)
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
                raise DraftInvalid(index, _field(error["loc"]), error["msg"]) from exc
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
        account = account_name or uid
        with self._store.transaction() as tx, self._sources.once():
            view = BatchView(self._store)
            works: list[Work] = []
            batch = self.batch(uid, drafts, account)
            for index, draft in enumerate(drafts):
                drafts[index] = draft = self._reported(uid, draft)
                works.append(
                    self.decide(uid, index, draft, actor, mode, account, store=view, batch=batch)
                )
                view.apply(works[-1].change_add, works[-1].change_remove)
            if view and not self._validation.validate(uid, view.changeset()).conforms:
                view = self._one_by_one(uid, drafts, works, actor, mode, account, batch)
            change = view.changeset()
            tx.remove(*change.remove)
            tx.add(*change.add)
            results = [
                self.refusal(uid, d, w.result, actor, tx)
                for d, w in zip(drafts, works, strict=True)
            ]
        return BatchResult(tuple(results))

    def refusal(
        self,
        uid: str,
        draft: DraftMemory,
        result: ItemResult,
        actor: Actor,
        tx: Transaction,
        *,
        once: bool = False,
    ) -> ItemResult:
        """``result``, and if it refuses ``draft``, its refusal added to ``tx`` for the
        decisions feed. ``once``: not if this very draft was refused before (a periodic job
        derives the same draft each run)."""
        if result.outcome is not Outcome.REFUSED:
            return result
        if once and self.decisions.refused_before(uid, draft):
            return result
        decision, quads = self.decisions.refusal(
            uid, draft, result.reasons, actor.value, self._clock.now()
        )
        tx.add(*quads)
        return replace(result, decision=decision)

    def _one_by_one(
        self,
        uid: str,
        drafts: Sequence[DraftMemory],
        works: list[Work],
        actor: Actor,
        mode: WriteMode,
        account: str,
        batch: BatchNames | None,
    ) -> BatchView:
        """Validate each draft against the ones accepted before it; once one is refused, the
        later ones were decided with it in view, so they are decided again. ``works`` is
        updated in place; returns the view of the accepted drafts."""
        view = BatchView(self._store)
        stale = False
        for index, draft in enumerate(drafts):
            if stale:
                works[index] = self.decide(
                    uid, index, draft, actor, mode, account, store=view, batch=batch
                )
            work = works[index]
            works[index] = self.validated(uid, index, work, store=view)
            if works[index] is not work:
                stale = True
            view.apply(works[index].change_add, works[index].change_remove)
        return view

    def validated(
        self, uid: str, index: int, work: Work, *, store: TripleStore | None = None
    ) -> Work:
        """``work`` if its change validates against ``store`` (the gate's store by default)
        or it was refused anyway, else a refusal that names the violations; nothing is
        written."""
        if work.result.outcome is Outcome.REFUSED:
            return work
        change = Changeset.of(work.change_add, work.change_remove)
        report = self._validation.validate(uid, change, store=store)
        if report.conforms:
            return work
        return Work(
            [],
            [],
            ItemResult(
                index,
                Outcome.REFUSED,
                reasons=tuple(v.message for v in report.violations),
                violations=report.violations,
            ),
        )

    def decide(
        self,
        uid: str,
        index: int,
        draft: DraftMemory,
        actor: Actor,
        mode: WriteMode,
        account: str,
        *,
        resolver: EntityResolver | None = None,
        effective: EffectiveOntology | None = None,
        needs_terms: Sequence[URIRef] = (),
        store: TripleStore | None = None,
        batch: BatchNames | None = None,
    ) -> Work:
        """Plan and decide one draft against the store as it is (or as ``store``, a
        :class:`BatchView`, shows it); nothing is validated or written. Consolidation's
        reconcile stage calls this with the pass's own entity bindings (``resolver``), the
        ontology as the pass's schema delta will make it (``effective``) and the terms it
        deferred (``needs_terms``: the memory waits)."""
        if resolver is None and store is not None:
            resolver = EntityResolver(store, self._queries)
        try:  # a ref naming nothing of theirs: the draft is refused, saying which
            resolve_refs(store or self._store, uid, draft.source_refs)
        except UnknownRef as exc:
            reason = f"source_refs[{exc.index}]: {exc}"
            return Work([], [], ItemResult(index, Outcome.REFUSED, reasons=(reason,)))
        plan, effective = self.plan(
            uid, draft, account, resolver=resolver, effective=effective, batch=batch
        )
        plan.needs_terms += [t for t in needs_terms if t not in plan.needs_terms]
        if not plan.grounded:
            reasons = tuple(plan.refusals) or ("no evidence",)
            return Work([], [], ItemResult(index, Outcome.REFUSED, reasons=reasons))
        if plan.clashes:
            return _clash(index, plan)
        existing = self.existing(uid, plan, effective, store=store)
        deps = self.deps(store=store)
        return Decider(deps, uid, index, draft, plan, actor, mode, existing).run()

    def plan(
        self,
        uid: str,
        draft: DraftMemory,
        account: str,
        *,
        resolver: EntityResolver | None = None,
        effective: EffectiveOntology | None = None,
        batch: BatchNames | None = None,
    ) -> tuple[DraftPlan, EffectiveOntology]:
        """``draft`` grounded, typed and resolved (see :func:`plan_draft`), and the ontology
        it was planned against; ``batch``: the names of the batch it came in (see
        :meth:`batch`)."""
        sources, previous = self.sources_of(uid, draft)
        effective = effective or self._ontology.effective(uid)
        ctx = PlanContext(
            uid,
            account,
            effective,
            resolver or self._resolver,
            sources,
            previous,
            {},
            self._order,
            self.history_of(uid, sources),
            self.user_names(uid, account),
            batch,
        )
        return plan_draft(draft, ctx), effective

    def batch(self, uid: str, drafts: Sequence[DraftMemory], account: str) -> BatchNames | None:
        """What the caller knows across ``drafts`` when there are several: their chats are
        read once with all their names (a draft's names are the caller's knowledge for the
        others too), not once a draft with its own (a fifth of a 25-draft batch)."""
        if len(drafts) < 2:
            return None
        effective, names = self._ontology.effective(uid), self.user_names(uid, account)
        contexts = [
            (d.claims, grounding_context(d, account, {}, user_names=names, effective=effective))
            for d in drafts
        ]
        return batch_names(contexts)

    def existing(
        self,
        uid: str,
        plan: DraftPlan,
        effective: EffectiveOntology,
        *,
        exclude: Collection[URIRef] = (),
        store: TripleStore | None = None,
        moved: bool = False,
    ) -> list[ExistingClaim]:
        """The active claims the pre-pass weighs ``plan`` against (as ``store`` shows them),
        with ``moved`` also those of the other holders its moved things leave, except those
        of the memories in ``exclude`` (a derivation's own inputs)."""
        active = self._active if store is None else ActiveClaims(store, self._queries)
        functional = slots(effective.is_functional, bool(plan.change_texts))
        found = active.about(uid, plan.claims, functional, self._order)
        for n in plan.moved if moved else ():  # "we switched flour to Harinas Norte"
            found += active.holding(uid, plan.claims[n], self._order)
        return [e for e in found if e.memory not in exclude]

    def deps(self, *, store: TripleStore | None = None) -> GateDeps:
        """What a :class:`Decider` needs, as of now (reading through ``store`` if given)."""
        return GateDeps(
            self._store if store is None else store,
            self._ontology,
            self._active if store is None else ActiveClaims(store, self._queries),
            self.decisions,
            self._settings,
            self._order,
            self._clock.now(),
        )

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
                chat=chat,
                turn=0,
                role=reported.role,
                text=reported.text,
                tool_name=reported.tool_name,
                tool_outcome=reported.tool_outcome,
                agent_reported=True,
            ),
        )
        evidence = tuple(
            e.model_copy(update={"source": str(stored.iri)}) if e.source == REPORTED else e
            for e in draft.evidence
        )
        return draft.model_copy(update={"evidence": evidence})

    def sources_of(
        self, uid: str, draft: DraftMemory
    ) -> tuple[dict[str, SourceRecord], dict[URIRef, SourceRecord]]:
        """The user's sources ``draft`` cites (by id and by IRI), and for each cited user
        message the message before it (a confirmation grounds the claim it confirms)."""
        sources = self._sources.get(uid, [e.source for e in draft.evidence])
        return _by_id(sources), self._previous(uid, sources.values())

    @property
    def authority_order(self) -> tuple[Authority, ...]:
        return self._order

    def history_of(
        self, uid: str, sources: Mapping[str, SourceRecord]
    ) -> dict[URIRef, tuple[SourceRecord, ...]]:
        """For each cited message, the turns before it in its chat (see
        :data:`HISTORY_WINDOW`)."""
        return {
            r.iri: self._sources.history(uid, r, HISTORY_WINDOW, HISTORY_WINDOW)
            for r in set(sources.values())
        }

    def user_names(self, uid: str, account: str) -> tuple[str, ...]:
        """What the user goes by: the account name, and the names and aliases their own
        entity took (a self-introduction, a nickname)."""
        graph, me = UserGraphs(uid).kg, self_entity(uid)
        names = [account]
        for predicate in (KGM.name, KGM.alias):
            names += [str(q.object) for q in self._store.quads(graph, me, predicate)]
        return tuple(dict.fromkeys(names))

    def _previous(self, uid: str, records: Any) -> dict[URIRef, SourceRecord]:
        out = {}
        for record in records:
            before = self._sources.previous_message(uid, record)
            if before is not None:
                out[record.iri] = before
        return out


#: how many turns before (and after) a cited message grounding reads: whom its pronouns and
#: first names mean, who its speaker said they are (a self-introduction may come late)
HISTORY_WINDOW = 40


def _clash(index: int, plan: DraftPlan) -> Work:
    """A draft that types a known entity (tied to it by its own sources or facts) with a
    class disjoint with the entity's is refused whole: the type is a claim too, and one the
    entity's evidence contradicts. Nothing is written, so no second entity and no retype."""
    violations = tuple(plan.clashes)
    reasons = tuple(v.message for v in violations)
    return Work([], [], ItemResult(index, Outcome.REFUSED, reasons=reasons, violations=violations))


def _prefs(uid: str) -> URIRef:
    return node_iri(uid, NodeKind.PREFERENCES, "write")


def _by_id(sources: Mapping[str, SourceRecord]) -> dict[str, SourceRecord]:
    out = dict(sources)
    for record in sources.values():
        out[str(record.iri)] = record
    return out


def _field(loc: Sequence[int | str]) -> str:
    """``steps[2]`` for pydantic's ``("steps", 2)``: named as the tools name a field.

    >>> _field(("claims", 0, "predicate"))
    'claims[0].predicate'
    """
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else part
    return out or "draft"
