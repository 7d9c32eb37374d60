"""Derived memories go through the write gate: planning and grounding, the pre-pass,
contradictions, the user's write mode, validation and the decision feed — one mechanism.

What a :class:`~kgmem.memory.DraftMemory` cannot say travels beside it as a
:class:`Derivation`: the ``kgm:derivedFrom`` edges to the memories a draft was derived from.
A :class:`~kgmem.memory.decider.Decider` subclass adds them to the change right before the
decision records it, so the decision carries them and reverting it removes them with the rest.
A routine's steps and triggers are the draft's own, stored as any procedure's are.

The pre-pass ignores the derivation's own inputs: a fact its inputs state is not thereby
"already known" (else every derived fact would be discarded into one of its inputs), while a
fact another memory states is (DISCARD or MERGE into that memory, which then also gets the
``derivedFrom`` edges, since it now holds what the inputs say).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from rdflib import URIRef

from kgmem.memory.decider import Actor, Decider, GateDeps, ItemResult, Outcome, Work, WriteMode
from kgmem.memory.decisions import Action
from kgmem.memory.entities import self_entity
from kgmem.memory.grounding_types import SUPPORT_CONFIDENCE_CAPS
from kgmem.memory.model import DraftMemory, EvidenceDraft, SupportKind
from kgmem.memory.planning import DraftPlan
from kgmem.memory.prepass import ExistingClaim
from kgmem.memory.records import EvidenceRecord
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.stages.resolve import PassResolver
from kgmem.pipeline.worklist import EntityBinding
from kgmem.store import Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF

__all__ = [
    "DERIVED_CAP",
    "Derivation",
    "DerivationWriter",
    "Written",
    "derived_evidence",
    "one_line",
]

#: The most a derived memory's confidence may be: what the gate allows *derived* support.
DERIVED_CAP = SUPPORT_CONFIDENCE_CAPS[SupportKind.DERIVED]


def derived_evidence(records: Iterable[EvidenceRecord]) -> tuple[EvidenceDraft, ...]:
    """The inputs' evidence as evidence of a derived draft: once per source and quote, with
    *derived* support (the gate grounds each quote again in its source)."""
    out: dict[tuple[str, str], EvidenceDraft] = {}
    for item in records:
        if item.quote:
            key = (str(item.source), item.quote)
            out.setdefault(
                key, EvidenceDraft(source=key[0], quote=key[1], support=SupportKind.DERIVED)
            )
    return tuple(out.values())


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks the cut).

    >>> one_line("Tag,   then build", 12)
    'Tag, then b\u2026'
    """
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "\u2026"


@dataclass(frozen=True)
class Derivation:
    """What a derived draft says beyond the draft itself.

    ``about``, when given, is what the memory is about (a routine has no claims to say it);
    ``bindings`` tie the entity names of the draft's claims to the entities the inputs'
    claims name.
    """

    inputs: tuple[URIRef, ...]
    reason: str
    about: tuple[URIRef, ...] = ()
    bindings: Mapping[str, EntityBinding] = field(default_factory=dict)

    def quads(self, memory: URIRef, graph: URIRef) -> list[Quad]:
        return [Quad(memory, KGM.derivedFrom, i, graph) for i in self.inputs if i != memory]


class _DerivingDecider(Decider):
    """The gate's decider, adding a derivation's quads and reason to whatever it decides."""

    def __init__(
        self,
        deps: GateDeps,
        uid: str,
        draft: DraftMemory,
        plan: DraftPlan,
        mode: WriteMode,
        existing: list[ExistingClaim],
        derivation: Derivation,
    ) -> None:
        super().__init__(deps, uid, 0, draft, plan, Actor.CONSOLIDATION, mode, existing)
        self.derivation = derivation

    def refresh(self, target: URIRef) -> Work:
        """Fold the draft into ``target``, a memory derived earlier (MERGE): the new
        evidence joins, excerpt, body and steps are the draft's (its triggers join), and
        confidence never rises."""
        old = self._read(target)
        known = {(e.source, e.span) for e in old.evidence}
        evidence = tuple(e for e in self.plan.evidence if (e.source, e.span) not in known)
        new = replace(
            self._with_procedure(old),
            evidence=old.evidence + evidence,
            excerpt=self.draft.excerpt,
            body=self.draft.body,
            confidence=min(old.confidence, self._confidence()),
        )
        self._replace(old, new)
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
    ) -> Work:
        graph = self.graphs.quarantine if action is Action.QUARANTINE else self.graphs.kg
        self.add += self.derivation.quads(memory, graph)
        self.reasons.insert(0, self.derivation.reason)
        return super()._finish(
            action,
            memory,
            outcome,
            superseded=superseded,
            weakened=weakened,
            contradicts=contradicts,
        )


@dataclass(frozen=True)
class Written:
    """One derivation's outcome: the gate's item result, and whether it made a new memory."""

    result: ItemResult
    created: bool = False


class DerivationWriter:
    """Decides, validates and commits derived drafts for one store, like the gate's
    :meth:`~kgmem.memory.WriteGate.draft` (one transaction per draft)."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, ports: PassPorts) -> None:
        self._store, self._queries, self._ports = store, queries, ports

    def write(
        self,
        uid: str,
        draft: DraftMemory,
        derivation: Derivation,
        *,
        refresh: URIRef | None = None,
    ) -> Written:
        """Run ``draft`` through the gate (or fold it into ``refresh``) and commit it if the
        change validates."""
        with self._store.transaction() as tx:
            work = self._decide(uid, draft, derivation, refresh)
            work = self._ports.gate.validated(uid, 0, work)
            if work.result.outcome is Outcome.REFUSED:
                # in the feed once: each run derives the same draft again
                gate = self._ports.gate
                return Written(
                    gate.refusal(uid, draft, work.result, Actor.CONSOLIDATION, tx, once=True)
                )
            tx.add(*work.change_add)
            tx.remove(*work.change_remove)
        memory = work.result.memory
        created = memory is not None and refresh is None and _creates(work, memory)
        return Written(work.result, created)

    def _decide(
        self, uid: str, draft: DraftMemory, derivation: Derivation, refresh: URIRef | None
    ) -> Work:
        gate = self._ports.gate
        resolver = PassResolver(self._store, self._queries, derivation.bindings)
        plan, effective = gate.plan(uid, draft, self._account(uid), resolver=resolver)
        if derivation.about:
            plan.about = list(derivation.about)
        if not plan.grounded:
            reasons = tuple(plan.refusals) or ("no evidence",)
            return Work([], [], ItemResult(0, Outcome.REFUSED, reasons=reasons))
        existing = gate.existing(uid, plan, effective, exclude=derivation.inputs)
        decider = _DerivingDecider(
            gate.deps(), uid, draft, plan, gate.mode(uid), existing, derivation
        )
        return decider.run() if refresh is None else decider.refresh(refresh)

    def _account(self, uid: str) -> str:
        """The user's own name as their entity holds it, so "I" adds no second name."""
        kg = UserGraphs(uid).kg
        for quad in self._store.quads(kg, self_entity(uid), KGM.name):
            return str(quad.object)
        return uid


def _creates(work: Work, memory: URIRef) -> bool:
    return any(
        q.subject == memory and q.predicate == RDF.type and q.object == KGM.Memory
        for q in work.change_add
    )
