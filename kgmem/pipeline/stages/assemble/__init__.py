"""Assemble (model): every undeclared term of the pass decided together, as one schema delta.

The model sees all undeclared terms at once (one ``AssembleTerms`` call, so one concept gets
one term) and answers one decision per term. Nothing of it is trusted:
:func:`~kgmem.pipeline.stages.assemble.check.check_patch` makes it exactly one checked decision per
term (or a deferral that says why), and the resulting
:func:`~kgmem.pipeline.stages.assemble.apply.delta_patch` is planned with
:meth:`~kgmem.ontology.OntologyService.plan_delta`: a term the ontology refuses (a label
that duplicates a known term, a cycle) is deferred and the rest planned again. The decisions
are then applied to the drafts (:func:`~kgmem.pipeline.stages.assemble.apply.apply_decisions`,
which has the table of what each action does to the drafts and to the patch).

Without a model every term is deferred ("no model configured").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from kgmem.errors import ModelOutputError, OntologyError
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import SchemaPatch, TermDecision, UndeclaredTerm
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.stages.assemble.apply import PROPOSER, apply_decisions, delta_patch
from kgmem.pipeline.stages.assemble.check import (
    NO_DECISION,
    CheckedPatch,
    TermNames,
    check_patch,
    defer,
    settle_merges,
    term_surface,
)
from kgmem.pipeline.worklist import Undeclared, Worklist, worklist

if TYPE_CHECKING:
    import dspy

__all__ = [
    "NO_DECISION",
    "NO_MODEL",
    "PROPOSER",
    "AssembleStage",
    "CheckedPatch",
    "apply_decisions",
    "check_patch",
    "delta_patch",
    "term_surface",
]

_log = logging.getLogger(__name__)

NO_MODEL = "no model configured"
_MAX_USES = 10  # claims shown to the model per term


def _uses(term: Undeclared, work: Worklist) -> list[str]:
    """The claims (and typings) of the pass that use ``term``, as the model is shown them."""
    name, lines = term_surface(term), []
    for item in work.drafts:
        draft = item.draft
        for e in draft.entities:
            if term.iri in e.types:
                lines.append(f"{draft.title}: {e.name} is a {name}")
        for c in draft.claims:
            if c.predicate == term.iri:
                target = c.object if c.object is not None else repr(c.value)
                lines.append(f"{draft.title}: {c.subject} | {name} | {target}")
    return lines[:_MAX_USES]


class AssembleStage:
    """The assemble stage (see the module docstring)."""

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports

    @property
    def name(self) -> StageName:
        return StageName.ASSEMBLE

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        work = worklist(state, before=StageName.ASSEMBLE)
        if not work.undeclared:
            return state.with_output(StageName.ASSEMBLE, work.to_json())
        lm = self._ports.models.lm(ModelGroup.MEMORY)
        if lm is None:
            decisions = tuple(defer(term_surface(t), NO_MODEL) for t in work.undeclared)
        else:
            checked = self.decide(ctx.uid, work, lm, ctx.clock.now())
            for note in checked.ignored:
                _log.info("assemble %s: ignored %s", ctx.pass_id, note)
            decisions = checked.decisions
        return state.with_output(StageName.ASSEMBLE, apply_decisions(work, decisions).to_json())

    def decide(self, uid: str, work: Worklist, lm: dspy.LM, at: datetime) -> CheckedPatch:
        """One ``AssembleTerms`` call for every undeclared term of ``work``, checked, and
        planned against the user's schema (refused terms deferred)."""
        from kgmem.pipeline.programs import run_signature
        from kgmem.pipeline.signatures import AssembleTerms

        shown = [
            UndeclaredTerm(
                surface=term_surface(t),
                role=t.role,
                uses=_uses(t, work),
                candidates=list(t.candidates),
            )
            for t in work.undeclared
        ]
        answer = run_signature(AssembleTerms, lm, StageName.ASSEMBLE.value, terms=shown)
        if not isinstance(answer.patch, SchemaPatch):
            raise ModelOutputError(StageName.ASSEMBLE.value, "patch is not a schema patch")
        effective = self._ports.ontology.effective(uid)
        checked = check_patch(uid, work.undeclared, answer.patch, effective)
        planned = self._plan(uid, work, list(checked.decisions), at)
        return CheckedPatch(tuple(planned), checked.ignored)

    def _plan(
        self, uid: str, work: Worklist, decisions: list[TermDecision], at: datetime
    ) -> list[TermDecision]:
        """Defer every decision the ontology refuses; the others plan as one patch."""
        if self._refusal(uid, work, decisions, at) is None:
            return decisions
        # merges add no ops, but the claims they bring decide whether a property is literal
        merges = [d for d in decisions if d.action == "merge"]
        accepted: list[TermDecision] = []
        for index, d in enumerate(decisions):
            if d.action in ("merge", "defer"):
                continue
            reason = self._refusal(uid, work, [*accepted, d, *merges], at)
            if reason is None:
                accepted.append(d)
            else:
                decisions[index] = defer(d.surface, f"refused by the ontology: {reason}")
        return settle_merges(decisions, TermNames(work.undeclared))

    def _refusal(
        self, uid: str, work: Worklist, decisions: Sequence[TermDecision], at: datetime
    ) -> str | None:
        patch = delta_patch(uid, work.model_copy(update={"decisions": tuple(decisions)}), at)
        if patch is None:
            return None
        try:
            self._ports.ontology.plan_delta(uid, patch)
        except OntologyError as exc:
            return str(exc)
        return None
