"""Running the realistic suite's cases on both paths, and judging them.

One case runs as its own user (new, empty): its conversation ingested first-hand and its
setup drafted through the gate (``correctness_core.prepare``), then its proposal decided by

- the foreground gate (path ``draft``): ``services.gate.draft`` on the proposal as written
  (a draft the gate's format refuses, a field it does not know, is refused with the field);
- a consolidation pass (path ``consolidation``) whose recorded model answers the proposal as
  its extraction (``correctness_pass.render``, ``run_parts``): its claims as extracted
  claims, a procedure (title, steps, triggers and quotes, no claims) as an extracted
  procedure, whose steps the pass grounds with the gate's own check. What neither carries
  (a body, tags, a claim's ``valid_from``) is lost, as it would be; a proposal with nothing
  a model could extract (no claim, no steps, no typed entity) is *broken* on this path
  (counted apart and listed, never scored).

Judgement (:func:`judge`): the expectations of the unreliable-author suite (``keep``,
``refuse``, ``catch``, ``fold``, ``separate``) as ``correctness_core.judge`` has them, and

- ``close``: the proposal is active and the last setup memory's valid time is closed
  (superseded or outdated, or a ``valid_until``);
- ``stand``: the last setup memory is still active and open, whatever became of the proposal;
- ``hold``: pending, refused or quarantined, with a reason; never active, never folded.

``also`` adds checks, scored on their own (``extra_checks_passed``; a case is right in the
tables only when its expectation and its checks hold):

- ``confirmed``: the kept memory's evidence keeps both the user's confirmation and the agent
  message it confirms;
- ``steps``: the context packet for the proposal's title (intent execute) shows its memory
  as the procedure, with the proposal's steps in order, and its triggers (in any order);
- ``in_feed``: the decisions feed gained a decision with a reason for it, a refusal too;
- ``adjudicated``: approving a pending proposal activates nothing the ontology does not
  declare.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from correctness_core import _resolve, aligned, prepare
from correctness_core import judge as correctness_judge
from correctness_pass import (
    CaseModel,
    Fate,
    Part,
    item_result,
    render,
    run_parts,
)
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.errors import KgmemError
from kgmem.memory import MemoryStatus, SourceType
from kgmem.memory.gate import ItemResult, Outcome
from kgmem.memory.planning import expand_term
from kgmem.ontology import TermKind
from kgmem.pipeline import Consolidation

CLOSED = {MemoryStatus.SUPERSEDED, MemoryStatus.OUTDATED}


@dataclass(frozen=True)
class Judged:
    """One case's verdict on one path."""

    id: str
    section: str  # a conversation's kind, or "locomo"
    phenomenon: str  # a..j, or "locomo"
    variant: str
    mode: str
    expect: str
    path: str
    outcome: str  # an Outcome value, "aligned", "failed" or "broken"
    ok: bool  # the expectation holds
    extras: bool | None = None  # its ``also`` checks hold (None: it has none)
    why: str = ""

    @property
    def right(self) -> bool:
        """The expectation and every ``also`` check hold."""
        return self.ok and self.extras is not False


def verdict(
    c: dict[str, Any],
    path: str,
    outcome: str,
    ok: bool,
    why: str = "",
    extras: bool | None = None,
) -> Judged:
    if extras is None and c.get("also") and outcome != "broken":
        extras = False  # never checked: the case failed before
    return Judged(
        c["id"],
        c.get("kind", "locomo"),
        c["phenomenon"],
        c["variant"],
        c["mode"],
        c["expect"],
        path,
        outcome,
        ok,
        extras,
        "" if ok and extras is not False else (why or outcome),
    )


# -- judging ------------------------------------------------------------------------------


def _record(services: Services, uid: str, memory: URIRef | None) -> Any:
    if memory is None:
        return None
    try:
        return services.lifecycle.get(uid, memory)
    except KgmemError:
        return None


def judge(
    services: Services, uid: str, c: dict[str, Any], item: ItemResult, last: URIRef | None
) -> bool:
    """Whether ``item`` is what ``c`` expects (``last``: the last setup memory)."""
    expect, o = c["expect"], item.outcome
    if expect == "close":
        old = _record(services, uid, last)
        closed = old is not None and (old.status in CLOSED or old.valid_until is not None)
        return o is Outcome.ACTIVE and closed
    if expect == "stand":
        old = _record(services, uid, last)
        return (
            old is not None
            and old.status is MemoryStatus.ACTIVE
            and old.valid_until is None
            and last not in item.superseded
        )
    if expect == "hold":
        held = {Outcome.PENDING, Outcome.REFUSED, Outcome.QUARANTINED}
        return o in held and any(r.strip() for r in item.reasons)
    ok = correctness_judge(services, uid, expect, item, last)
    return ok or (expect == "catch" and aligned(services, uid, c, item))


def also(
    services: Services,
    uid: str,
    c: dict[str, Any],
    item: ItemResult,
    before: set[URIRef],
) -> list[str]:
    """The ``also`` checks of ``c`` that fail, each with why (``before``: the decisions in
    the feed before the proposal)."""
    failed = []
    record = _record(services, uid, item.memory)
    for name in c.get("also", []):
        why = _ALSO[name](services, uid, c, item, record, before)
        if why:
            failed.append(f"{name}: {why}")
    return failed


def _confirmed(
    services: Services, uid: str, c: dict[str, Any], item: ItemResult, record: Any, _: Any
) -> str:
    if record is None or record.status is not MemoryStatus.ACTIVE:
        return "nothing kept"
    confirms = [e for e in record.evidence if e.confirms is not None]
    agent = [e for e in record.evidence if e.source_type is SourceType.AGENT_MESSAGE]
    if not confirms or not agent:
        return "the evidence does not keep both the confirmation and the agent message"
    return ""


def _steps(
    services: Services, uid: str, c: dict[str, Any], item: ItemResult, record: Any, _: Any
) -> str:
    wanted = list(c["proposal"].get("steps", []))
    return steps_shown(services, uid, c["proposal"]["title"], item.memory, wanted, c["proposal"])


def steps_shown(
    services: Services,
    uid: str,
    task: str,
    memory: URIRef | None,
    steps: Sequence[str],
    draft: dict[str, Any],
) -> str:
    """Why the context packet for ``task`` does not show ``memory`` as its procedure with
    ``steps`` (and the draft's triggers, when packets carry them); "" when it does."""
    if memory is None:
        return "nothing kept"
    packet = services.retrieval.retrieve_memory(uid, task, "execute")
    procedure = packet.procedure
    if procedure is None or procedure.id != str(memory):
        return "the packet's procedure is another memory or none"
    if list(procedure.steps) != list(steps):
        return f"the packet shows steps {list(procedure.steps)!r}"
    shown = getattr(procedure, "triggers", None)  # a set: their order means nothing
    if shown is not None and sorted(shown) != sorted(set(draft.get("triggers", []))):
        return f"the packet shows triggers {list(shown)!r}"
    return ""


def _in_feed(
    services: Services,
    uid: str,
    c: dict[str, Any],
    item: ItemResult,
    record: Any,
    before: set[URIRef],
) -> str:
    new = [d for d in services.gate.decisions.feed(uid, 1000) if d.iri not in before]
    if item.outcome is not Outcome.REFUSED:
        new = [d for d in new if d.target == item.memory]
    if not any(d.reason.strip() for d in new):
        return f"no decision with a reason for this {item.outcome.value} proposal in the feed"
    return ""


def _adjudicated(
    services: Services, uid: str, c: dict[str, Any], item: ItemResult, record: Any, _: Any
) -> str:
    if record is None:
        return ""
    if record.status is MemoryStatus.PENDING:
        try:
            services.lifecycle.approve(uid, record.iri)
        except KgmemError:
            return ""  # the approval waits for the vocabulary: adjudicated
        record = services.lifecycle.get(uid, record.iri)
    if record.status is not MemoryStatus.ACTIVE:
        return ""
    effective = services.ontology.effective(uid)
    used = [c.predicate for c in record.claims] + [expand_term(str(t)) for t in record.needs_terms]
    declared = {TermKind.PROPERTY, TermKind.CLASS}
    undeclared = sorted({str(t) for t in used if effective.info(t).kind not in declared})
    return f"active with undeclared terms {undeclared}" if undeclared else ""


_ALSO = {
    "confirmed": _confirmed,
    "steps": _steps,
    "in_feed": _in_feed,
    "adjudicated": _adjudicated,
}


def _feed(services: Services, uid: str) -> set[URIRef]:
    return {d.iri for d in services.gate.decisions.feed(uid, 1000)}


# -- the two paths ------------------------------------------------------------------------


def draft_one(
    services: Services, uid: str, draft: dict[str, Any], keys: dict[str, str] | None = None
) -> ItemResult:
    """``draft`` through the gate; a draft the gate's format refuses is a refusal naming the
    field."""
    try:
        [item] = services.gate.draft(uid, [_resolve(draft, keys or {}, uid)]).items
    except KgmemError as exc:
        return ItemResult(0, Outcome.REFUSED, reasons=(f"the draft format refused it: {exc}",))
    return item


def run_draft_case(services: Services, uid: str, c: dict[str, Any], now: datetime) -> Judged:
    """``c`` as user ``uid`` through the foreground gate, judged."""
    prepared = prepare(services, uid, c, now)
    if isinstance(prepared, str):
        return verdict(c, "draft", "broken", False, prepared)
    keys, last = prepared
    before = _feed(services, uid)
    item = draft_one(services, uid, c["proposal"], keys)
    return _verdict(services, uid, c, item, last, before, "draft")


def _verdict(
    services: Services,
    uid: str,
    c: dict[str, Any],
    item: ItemResult,
    last: URIRef | None,
    before: set[URIRef],
    path: str,
) -> Judged:
    ok = judge(services, uid, c, item, last)
    why = "; ".join(item.reasons)
    outcome = item.outcome.value
    if ok and c["expect"] == "catch" and not correctness_judge(services, uid, "catch", item, last):
        outcome = "aligned"
    failed = also(services, uid, c, item, before) if c.get("also") else []
    if failed:
        why = "; ".join(failed) + (f" [{why}]" if why else "")
    extras = None if not c.get("also") else not failed
    return verdict(c, path, outcome, ok, why, extras)


def rendered(c: dict[str, Any]) -> list[Part] | str:
    """The proposal as the model's answer, or why a model could extract nothing of it."""
    try:
        return render(c)
    except ValueError as exc:
        return str(exc)


def run_pass_case(
    services: Services,
    pipeline: Consolidation,
    model: CaseModel,
    uid: str,
    c: dict[str, Any],
    now: datetime,
) -> Judged:
    """``c`` as user ``uid`` through a consolidation pass whose model answers its proposal."""
    prepared = prepare(services, uid, c, now)
    if isinstance(prepared, str):
        return verdict(c, "consolidation", "broken", False, prepared)
    keys, last = prepared
    parts = rendered(c)
    if isinstance(parts, str):
        return verdict(c, "consolidation", "broken", False, parts)
    before = _feed(services, uid)
    fates = run_parts(pipeline, model, uid, c, keys, parts)
    head = next((n for n, p in enumerate(parts) if not p.typing), 0)
    if fates[head].outcome == "failed":
        return verdict(c, "consolidation", "failed", False, fates[head].why)
    item = item_result(services, uid, fates[head])
    if c["expect"] == "catch" and item.outcome in {Outcome.DISCARDED, Outcome.MERGED}:
        typed = [
            item_result(services, uid, f) for p, f in zip(parts, fates, strict=True) if p.typing
        ]
        caught = next(
            (t for t in typed if correctness_judge(services, uid, "catch", t, last)), None
        )
        item = caught or item
    return _verdict(services, uid, c, item, last, before, "consolidation")


def memory_of(fate: Fate) -> URIRef | None:
    """The memory a pass's part became (or was folded into), if any."""
    decided = fate.decided
    return None if decided is None or decided.memory is None else URIRef(decided.memory)
