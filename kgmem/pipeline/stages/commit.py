"""Commit (code): the validated change, the schema delta and the re-queued drafts, as one plan.

The runner applies the plan in one store transaction together with the pass record, the
projection outbox, the cleared dirty set and the dropped proposal graph
(:meth:`~kgmem.pipeline.Checkpoints.commit_pass`): the pass commits all of this or nothing.
Drafts reconcile deferred are queued again here, in the same transaction, for the next pass
(with only the entity types they state: the next pass infers the rest afresh). The
refusal decisions of every stage that refused a draft (:mod:`kgmem.pipeline.refusals`) reach
the decisions feed here too, so a pass that never commits leaves no refusal behind.
The stage leaves the entities and memories it changed for the author stage.
"""

from __future__ import annotations

from pydantic import JsonValue
from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.pipeline.contributions import Contributions
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.refusals import stage_refusals
from kgmem.pipeline.stages import CommitPlan, PassContext, PassState, StageName
from kgmem.pipeline.stages.reconcile import Reconciled, pass_delta
from kgmem.pipeline.stages.validate import Validated, changeset_of
from kgmem.store import Changeset, NodeKind, Quad, from_nquads, parse_node
from kgmem.vocab import RDF

__all__ = ["PassCommitStage"]


class PassCommitStage:
    name = StageName.COMMIT

    def __init__(self, ports: PassPorts, contributions: Contributions) -> None:
        self._ports, self._contributions = ports, contributions

    def plan(self, ctx: PassContext, state: PassState) -> CommitPlan:
        validated = Validated.model_validate(state.output(StageName.VALIDATE) or {})
        reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE) or {})
        change = changeset_of(validated.accepted)
        add = list(change.add)
        # the refused drafts' decisions: in the feed with the pass, like the gate's
        add += stage_refusals(state)
        add += from_nquads(reconciled.refusals) + from_nquads(validated.refusals)
        patch = pass_delta(ctx.uid, state, validated.delta_at)
        if patch is not None:
            add += self._ports.ontology.plan_delta(ctx.uid, patch).quads
        now = ctx.clock.now()
        for entry in reconciled.deferred:
            add += self._contributions.queue_quads(ctx.uid, entry.stated(), now)[1]
        entities = sorted({str(n) for n in _nodes(change.add, NodeKind.ENTITY)})
        memories = sorted({d.memory for d in validated.accepted if d.memory is not None})
        terms = sorted(
            {str(q.predicate) for q in change.add}
            | {str(q.object) for q in change.add if q.predicate == RDF.type}
        )
        output: dict[str, JsonValue] = {
            "entities": list[JsonValue](entities),
            "memories": list[JsonValue](memories),
            "terms": list[JsonValue](terms),
            "delta": patch is not None,
        }
        after = state.with_output(self.name, output)
        return CommitPlan(Changeset.of(add, change.remove), after)


def _nodes(quads: tuple[Quad, ...], kind: NodeKind) -> set[URIRef]:
    found: set[URIRef] = set()
    for quad in quads:
        for node in (quad.subject, quad.object):
            if isinstance(node, URIRef) and _kind(node) is kind:
                found.add(node)
    return found


def _kind(node: URIRef) -> NodeKind | None:
    try:
        return parse_node(str(node))[1]
    except GraphNameError:
        return None
