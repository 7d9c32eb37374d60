"""Ground (code): every claim of every draft against its cited sources, one draft an item.

The same :func:`~kgmem.memory.grounding.ground_claim` the foreground gate runs: quotes must
occur verbatim in the cited source and state the claim; agent prose needs independent
support; recall-tool results never count. A claim that fails is removed with its reasons; a
draft left with no claim is dropped with the first refusal's code, and its refusal is a
decision in the feed (:mod:`kgmem.pipeline.refusals`). A draft without claims (a
procedure, a note) is grounded by its quotes, a procedure's steps and triggers by what they
say, with the gate's own :func:`~kgmem.memory.ground_unstructured`: one step no quote
states drops the draft, naming the step. Everything removed is in the stage's worklist, so a
pass can say why each claim did not become memory.
"""

from __future__ import annotations

from kgmem.memory.gate import WriteGate
from kgmem.memory.grounding import ground_claim
from kgmem.memory.planning import grounding_context
from kgmem.memory.unstructured import ground_unstructured
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.refusals import refused
from kgmem.pipeline.stages import ItemKey, ItemResult, PassContext, PassState, StageName
from kgmem.pipeline.worklist import Dropped, PassDraft, Worklist, worklist

__all__ = ["GroundStage"]


class GroundStage:
    name = StageName.GROUND

    def __init__(self, ports: PassPorts) -> None:
        self._gate: WriteGate = ports.gate

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]:
        return worklist(state, self.name).keys()

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult:
        entry = worklist(state, self.name).draft(item)
        if not entry.draft.claims:
            return self._unstructured(ctx, entry)
        draft = entry.draft
        sources, previous = self._gate.sources_of(ctx.uid, draft)
        context = grounding_context(
            draft,
            ctx.uid,
            previous,
            history=self._gate.history_of(ctx.uid, sources),
            user_names=self._gate.user_names(ctx.uid, ctx.uid),
        )
        kept, dropped, reasons = [], [], []
        for index, claim in enumerate(draft.claims):
            result = ground_claim(
                claim,
                draft.evidence,
                sources,
                context,
                authority_order=self._gate.authority_order,
            )
            if result.grounded:
                kept.append(claim)
                continue
            for refusal in result.reasons:
                code, message = refusal.code.value, refusal.message
                key = f"{item}/claim{index}"
                dropped.append(Dropped(key=key, stage=self.name, code=code, message=message))
                reasons.append(f"claim {index}: {message}")  # as the gate words it
        if not kept:
            first = dropped[0].code if dropped else "ungrounded"
            message = "; ".join(d.message for d in dropped) or "no claim is grounded"
            summary = Dropped(key=item, stage=self.name, code=first, message=message)
            summary = refused(ctx, summary, entry, reasons)
            return ItemResult(value=Worklist(dropped=(summary, *dropped)).to_json())
        grounded = entry.model_copy(
            update={"draft": draft.model_copy(update={"claims": tuple(kept)})}
        )
        return ItemResult(value=Worklist(drafts=(grounded,), dropped=tuple(dropped)).to_json())

    def _unstructured(self, ctx: PassContext, entry: PassDraft) -> ItemResult:
        """A draft without claims, by its quotes (a procedure's steps and triggers too)."""
        sources, _ = self._gate.sources_of(ctx.uid, entry.draft)
        quotes = ground_unstructured(entry.draft, sources, self._gate.authority_order)
        if quotes.grounded:
            return ItemResult(value=Worklist(drafts=(entry,)).to_json())
        code = quotes.refusals[0].code.value if quotes.refusals else "ungrounded"
        message = "; ".join(quotes.reasons) or "no evidence"
        dropped = Dropped(key=entry.key, stage=self.name, code=code, message=message)
        dropped = refused(ctx, dropped, entry, quotes.reasons)
        return ItemResult(value=Worklist(dropped=(dropped,)).to_json())
