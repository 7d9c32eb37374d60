"""Validate (SHACL + code): the pass's instance patch and schema delta, tested together.

The union of every decided draft's change is validated with the pass's schema delta by the
same :class:`~kgmem.ontology.ValidationService` the foreground gate uses (shapes, disjoint
types, functional properties, domains and ranges, the delta itself). A violation is traced to
the drafts whose change wrote its focus node. Where a deterministic repair exists it is made
and recorded (an entity the pass typed with two disjoint classes keeps only the types it
had before); otherwise those drafts are rejected with the violation's message. The rest is
validated again, so what reaches commit conforms as a whole. A refused delta rejects the
drafts that use its terms (the next pass may decide them anew). Each rejected draft's
refusal is a decision in the feed, written at commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, JsonValue
from rdflib import URIRef
from rdflib.term import Node

from kgmem.ontology import Violation, ViolationKind, is_delta_term
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.refusals import refusal_quads
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.stages.reconcile import Decided, Reconciled, pass_delta
from kgmem.pipeline.worklist import Dropped, worklist
from kgmem.store import Changeset, from_nquads, to_nquads
from kgmem.vocab import RDF

__all__ = ["ValidateStage", "Validated", "changeset_of"]


class Validated(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    accepted: tuple[Decided, ...] = ()
    rejected: tuple[Dropped, ...] = ()
    repaired: tuple[Dropped, ...] = ()  # drafts accepted after a deterministic repair
    delta_at: datetime | None = None  # None: the pass writes no schema delta
    #: the rejected drafts' refusal decisions for the feed (N-Quads), written at commit
    refusals: str = ""

    def to_json(self) -> JsonValue:
        value: JsonValue = self.model_dump(mode="json")
        return value


def changeset_of(decided: Sequence[Decided]) -> Changeset:
    """The union of the drafts' changes (their statements are disjoint by reconcile)."""
    add = [q for d in decided for q in from_nquads(d.add)]
    remove = [q for d in decided for q in from_nquads(d.remove)]
    return Changeset.of(list(dict.fromkeys(add)), list(dict.fromkeys(remove)))


class ValidateStage:
    name = StageName.VALIDATE

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE) or {})
        accepted = list(reconciled.decided)
        rejected: list[Dropped] = []
        repairs: list[Dropped] = []
        at = reconciled.delta_at
        patch = pass_delta(ctx.uid, state, at)
        while accepted:
            report = self._ports.validation.validate(ctx.uid, changeset_of(accepted), patch)
            if report.conforms:
                break
            repaired = _repair(accepted, report.violations)
            if repaired is not None:
                accepted, notes = repaired
                repairs += [
                    Dropped(key=k, stage=self.name, code="repaired", message=m) for k, m in notes
                ]
                continue
            schema = [v for v in report.violations if v.kind is ViolationKind.SCHEMA]
            if schema and patch is not None:
                culprits = _using_delta(ctx.uid, accepted)
                why = "; ".join(v.message for v in schema)
                patch, at = None, None
            else:
                culprits = _writers(accepted, report.violations)
                why = ""
            if not culprits:  # nothing to trace it to: the pass cannot commit any of it
                culprits = {d.key for d in accepted}
            for decided in accepted:
                if decided.key in culprits:
                    message = why or _messages(decided, report.violations)
                    rejected.append(
                        Dropped(key=decided.key, stage=self.name, code="invalid", message=message)
                    )
            accepted = [d for d in accepted if d.key not in culprits]
        drafts = worklist(state, StageName.RECONCILE) if rejected else None
        refusals = [
            q
            for r in rejected
            if drafts is not None
            for q in refusal_quads(ctx, drafts.draft(r.key), (r.message,))
        ]
        out = Validated(
            accepted=tuple(accepted),
            rejected=tuple(rejected),
            repaired=tuple(repairs),
            delta_at=at,
            refusals=to_nquads(refusals),
        )
        return state.with_output(self.name, out.to_json())


def _repair(
    accepted: Sequence[Decided], violations: Sequence[Violation]
) -> tuple[list[Decided], list[tuple[str, str]]] | None:
    """The one deterministic repair: an entity the pass types with two disjoint classes
    keeps only the types it had before the pass (the pass's own typings of it are dropped:
    they contradict each other or what is known). None when no violation is of that kind
    or nothing the pass added can be dropped."""
    drop: set[tuple[Node, Node]] = set()
    for v in violations:
        if v.kind is ViolationKind.DISJOINT and v.proof is not None:
            for cls in (v.proof.a_path[0], v.proof.b_path[0]):
                drop.add((v.focus, cls))
    if not drop:
        return None
    fixed: list[Decided] = []
    notes: list[tuple[str, str]] = []
    for decided in accepted:
        quads = from_nquads(decided.add)
        kept = [q for q in quads if not (q.predicate == RDF.type and (q.subject, q.object) in drop)]
        if len(kept) != len(quads):
            gone = sorted({str(q.object) for q in quads if q not in kept})
            notes.append((decided.key, f"dropped disjoint types it added: {', '.join(gone)}"))
            decided = decided.model_copy(update={"add": to_nquads(kept)})
        fixed.append(decided)
    return (fixed, notes) if notes else None


def _written(decided: Decided) -> set[Node]:
    return {q.subject for q in from_nquads(decided.add)}


def _writers(accepted: Sequence[Decided], violations: Sequence[Violation]) -> set[str]:
    foci = {v.focus for v in violations}
    return {d.key for d in accepted if _written(d) & foci}


def _messages(decided: Decided, violations: Sequence[Violation]) -> str:
    written = _written(decided)
    return "; ".join(dict.fromkeys(v.message for v in violations if v.focus in written))


def _using_delta(uid: str, accepted: Sequence[Decided]) -> set[str]:
    """The drafts whose change uses a term of the user's own namespace (the delta's)."""

    def uses(decided: Decided) -> bool:
        quads = from_nquads(decided.add)
        terms = {q.predicate for q in quads} | {q.object for q in quads}
        return any(isinstance(t, URIRef) and is_delta_term(uid, t) for t in terms)

    return {d.key for d in accepted if uses(d)}
