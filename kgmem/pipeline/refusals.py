"""A pass's refusals as decisions in the feed, as the foreground gate records them.

At the gate every refused draft is a ``refuse`` decision: no target, no change, the draft
named by title, kind and hash, with its reasons. A pass refuses drafts at several stages
(extract: a claim citing a source it was not shown, one no draft can hold; ground: no claim
grounded, a procedure's step no quote states; classify: a negated or self-contradictory
typing; reconcile; validate), and each such refusal is recorded the same way, marked with
its pass (``kgm:inPass``) and written with the pass at commit, never before.

A stage that refuses a whole draft makes the decision when it drops it: a drop of an item
stage carries it in :attr:`~kgmem.pipeline.worklist.Dropped.decision`, reconcile and
validate keep theirs in their outputs. The stage's output is banked, so a resumed pass
reuses the decision it made and never adds a second one; a drop of less than a draft (one
claim of several, an unsupported alias) or of no proposal (sources waiting for a model)
carries none.
"""

from __future__ import annotations

from collections.abc import Sequence

from kgmem.memory.decider import Actor
from kgmem.memory.decisions import Decisions, RefusedDraft
from kgmem.memory.model import DraftMemory
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.worklist import Dropped, PassDraft, worklist
from kgmem.store import Quad, from_nquads, to_nquads

__all__ = ["refusal_quads", "refused", "stage_refusals"]


def refusal_quads(
    ctx: PassContext, entry: PassDraft | DraftMemory | RefusedDraft, reasons: Sequence[str]
) -> list[Quad]:
    """The decision refusing ``entry``'s draft (or the proposal it names) in this pass, as
    the foreground gate records one."""
    draft = entry.draft if isinstance(entry, PassDraft) else entry
    decisions = Decisions(ctx.store, ctx.queries)
    return decisions.refusal(
        ctx.uid,
        draft,
        reasons,
        Actor.CONSOLIDATION.value,
        ctx.clock.now(),
        in_pass=ctx.pass_iri,
    )[1]


def refused(
    ctx: PassContext,
    dropped: Dropped,
    entry: PassDraft | DraftMemory | RefusedDraft,
    reasons: Sequence[str] = (),
) -> Dropped:
    """``dropped``, which refuses ``entry`` whole, with its decision (``reasons``: the
    drop's message when none are given)."""
    quads = refusal_quads(ctx, entry, reasons or (dropped.message,))
    return dropped.model_copy(update={"decision": to_nquads(quads)})


def stage_refusals(state: PassState) -> list[Quad]:
    """The decisions of the drafts the item stages refused (those before reconcile), once
    each, for the commit."""
    dropped = worklist(state, StageName.RECONCILE).dropped
    return [q for d in dropped if d.decision for q in from_nquads(d.decision)]
