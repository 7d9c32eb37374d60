"""The consolidation path of the unreliable-author suite: the proposal as the memory model's
answer, through a real consolidation pass.

Per case, as its own user, the case's world is prepared exactly as on the draft path
(:func:`correctness_core.prepare`: declared terms, sources ingested first-hand, setup through
the gate). Then one pass runs over the case's conversation with
``Consolidation.consolidate(uid, now=True)`` - the nine stages extract, ground, classify,
resolve, assemble, reconcile, validate, commit, author - on a recorded model
(:class:`CaseModel`, a :class:`kgmem.pipeline.scripted.ScriptedEngine`):

- ``ExtractClaims`` answers the proposal rendered as model output (:func:`render`): its
  claims, its procedure if it has steps (title, steps, triggers, the entities it names as
  ``about``, its quotes), then one typing claim (``rdf:type``) per type the proposal gives an
  entity, each with the proposal's quotes (and support) citing the sources by the ids the
  segment shows (``S1``...; a source the segment holds back, such as a recall tool's result,
  by its IRI). Subjects, objects and values are the proposal's; ``delta:<name>`` is written
  ``<name>`` (the model never sees the user's namespace); a source cited as
  ``chat:<chat>#<turn>`` is the segment's id of that turn, as one cited by key; the title is
  the claim's ``statement``; an entity's aliases are the claim's subject/object aliases.
  What an extracted claim or procedure cannot carry is lost: a claim's ``valid_from`` (the
  pass takes the time the cited source was said), a body, tags;
- every other signature answers neutrally (:func:`kgmem.pipeline.scripted.neutral_replies`):
  a term only when named exactly as the surface, a tie is a new entity, every undeclared
  term deferred, pages by the deterministic renderer.

A draft that reconcile defers is queued and decided by the next pass (at most
``FOLLOW_UPS`` more). Each claim of the answer becomes one pass draft (key
``chat:<chat>#<index>``; a procedure ``chat:<chat>#p<index>``), whose fate is read from the
pass's checkpoints: dropped at extract, ground or classify, refused at reconcile, rejected at
validate (all *refused*), or decided and committed (the gate's outcome, with the committed
memory's needs-terms, superseded and contradicted memories). A pass that parks or is
abandoned is ``failed``.

The verdict uses the draft path's :func:`correctness_core.judge` on the draft of the
proposal's claim (or procedure), and like the draft path counts an improvised predicate
stored only as a declared term as caught (outcome ``aligned``,
:func:`correctness_core.aligned`). One addition for ``catch``: when the mislabel is a type
(the typing claim is caught: refused, or pending on a vocabulary proposal) and the claim
itself only folds into what is known (discarded or merged), the proposal is caught.
"""

from __future__ import annotations

import os

# before DSPy (and litellm) load: nothing may reach the network
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from correctness_core import ALIGNED, Verdict, aligned, judge, prepare, verdict
from dspy.lm15 import Request
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.memory.entities import name_key
from kgmem.memory.gate import ItemResult, Outcome
from kgmem.memory.model import DraftMemory
from kgmem.pipeline import (
    Consolidation,
    ExtractClaims,
    ModelSet,
    ModelSpec,
    PassPorts,
    PassRecord,
    PassState,
    PassStatus,
    StageName,
)
from kgmem.pipeline.scripted import ScriptedEngine, claims_reply, inputs_of, neutral_replies
from kgmem.pipeline.stages.reconcile import Decided, Reconciled
from kgmem.pipeline.stages.validate import Validated
from kgmem.pipeline.worklist import worklist

FOLLOW_UPS = 2
_HEADER = re.compile(r"^=== (S\d+) \| turn (\d+) \|", re.M)


# -- the proposal as model output -------------------------------------------------------


@dataclass(frozen=True)
class Part:
    """One item of the model's answer: the proposal's claim or procedure, or a type it
    gives an entity."""

    chat: str
    index: int  # position in the answer for its chat (among its claims, or its procedures)
    typing: bool
    claim: dict[str, Any]  # ExtractedClaim (or ExtractedProcedure) JSON; sources "$<key>"
    procedure: bool = False

    @property
    def key(self) -> str:
        """The pass draft it becomes."""
        return f"chat:{self.chat}#{'p' if self.procedure else ''}{self.index:03d}"


def part(
    parts: Sequence[Part], chat: str, claim: dict[str, Any], *, typing: bool, procedure: bool
) -> Part:
    """``claim`` as the next part of the answer for ``chat`` after ``parts``."""
    index = sum(p.chat == chat and p.procedure == procedure for p in parts)
    return Part(chat, index, typing, claim, procedure)


def _term(text: str) -> str:
    return text.removeprefix("delta:")


def _aliases(proposal: dict[str, Any], name: str | None) -> list[str]:
    if name is None:
        return []
    return [
        a
        for e in proposal.get("entities", [])
        if name_key(e["name"]) == name_key(name)
        for a in e.get("aliases", [])
    ]


def _procedures(proposal: dict[str, Any], evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A proposal with steps as the procedure a model extracts (ExtractedProcedure JSON)."""
    if not proposal.get("steps"):
        return []
    procedure = {
        "title": proposal.get("title", ""),
        "steps": list(proposal["steps"]),
        "triggers": list(proposal.get("triggers", [])),
        "about": [e["name"] for e in proposal.get("entities", [])],
        "evidence": evidence,
        "confidence": proposal.get("confidence", 0.8),
    }
    return [procedure]


def render(c: dict[str, Any]) -> list[Part]:
    """The proposal of ``c`` as the claims and procedure a model answers (see the module
    docstring)."""
    proposal = c["proposal"]
    evidence = [
        {"source": e["source"], "quote": e.get("quote"), "support": e.get("support", "explicit")}
        for e in proposal.get("evidence", [])
    ]
    base = {
        "kind": proposal.get("kind", "semantic"),
        "occurred_at": proposal.get("occurred_at"),
        "evidence": evidence,
        "confidence": proposal.get("confidence", 0.8),
    }
    claims = []
    for cl in proposal.get("claims", []):
        claims.append(
            base
            | {
                "subject": cl["subject"],
                "predicate": _term(cl["predicate"]),
                "object": cl.get("object"),
                "value": cl.get("value"),
                "negated": bool(cl.get("negated", False)),
                "statement": proposal.get("title", ""),
                "subject_aliases": _aliases(proposal, cl["subject"]),
                "object_aliases": _aliases(proposal, cl.get("object")),
            }
        )
    typings = [
        base
        | {
            "subject": e["name"],
            "predicate": "rdf:type",
            "object": _term(t),
            "value": None,
            "negated": False,
            "statement": f"{e['name']} is a {_term(t)}",
        }
        for e in proposal.get("entities", [])
        for t in e.get("types", [])
    ]
    procedures = _procedures(proposal, evidence)
    if not claims + procedures + typings:
        raise ValueError(f"{c['id']}: the proposal has no claim, no steps and no typed entity")
    chat_of = {s["key"]: s.get("chat", "c1") for s in c["sources"]}
    first = next(iter(chat_of.values()), "c1")
    cited = [e["source"][1:] for e in evidence if str(e["source"]).startswith("$")]
    named = [
        str(e["source"]).removeprefix("chat:").rpartition("#")[0]
        for e in evidence
        if str(e["source"]).startswith("chat:")
    ]
    chats = set(chat_of.values())
    chat = next((chat_of[k] for k in cited if k in chat_of), None)
    chat = chat or next((n for n in named if n in chats), first)
    parts: list[Part] = []
    for cl in claims:
        parts.append(part(parts, chat, cl, typing=False, procedure=False))
    for pr in procedures:
        parts.append(part(parts, chat, pr, typing=False, procedure=True))
    for cl in typings:
        parts.append(part(parts, chat, cl, typing=True, procedure=False))
    return parts


class CaseModel:
    """The recorded memory model of the consolidation path: ``ExtractClaims`` answers the
    current case's parts for the conversation a segment shows; every other signature
    answers neutrally."""

    def __init__(self) -> None:
        self.engine = ScriptedEngine(standing=neutral_replies())
        self.engine.stand(ExtractClaims, self._extract)
        self._parts: list[Part] = []
        self._turns: dict[str, int] = {}  # source key -> turn
        self._chats: dict[int, str] = {}  # turn -> chat
        self._iris: dict[str, str] = {}  # source key -> IRI

    def script(self, c: dict[str, Any], keys: dict[str, str], parts: list[Part]) -> None:
        self._parts = parts
        self._turns = {s["key"]: n for n, s in enumerate(c["sources"])}
        self._chats = {n: s.get("chat", "c1") for n, s in enumerate(c["sources"])}
        self._iris = keys

    def _extract(self, request: Request) -> str:
        shown = {int(t): sid for sid, t in _HEADER.findall(inputs_of(request).get("segment", ""))}
        if not shown:
            return claims_reply()
        chat = self._chats.get(min(shown), "")
        mine = [p for p in self._parts if p.chat == chat]
        answer = [
            p.claim | {"evidence": [self._cite(e, shown) for e in p.claim["evidence"]]}
            for p in mine
        ]
        claims = [a for a, p in zip(answer, mine, strict=True) if not p.procedure]
        procedures = [a for a, p in zip(answer, mine, strict=True) if p.procedure]
        return claims_reply(*claims, procedures=procedures)

    def _cite(self, evidence: dict[str, Any], shown: dict[int, str]) -> dict[str, Any]:
        source = str(evidence["source"])
        key = source[1:] if source.startswith("$") else None
        if key is not None and key in self._turns:
            turn = self._turns[key]
            source = shown.get(turn, self._iris.get(key, source))
        elif (turn := self._chat_turn(source)) is not None:
            source = shown.get(turn, source)
        return evidence | {"source": source}

    def _chat_turn(self, source: str) -> int | None:
        """The turn ``chat:<chat>#<turn>`` names, when it is one of the case's messages."""
        chat, _, turn = source.removeprefix("chat:").rpartition("#")
        if not source.startswith("chat:") or not turn.isdigit():
            return None
        return int(turn) if self._chats.get(int(turn)) == chat else None


def consolidation(services: Services, model: CaseModel) -> Consolidation:
    """A pipeline on the write path's own services, with ``model`` as the memory model."""
    spec = ModelSpec("openai/scripted", engine=model.engine, num_retries=0)
    ports = PassPorts(
        services.ontology,
        services.validation,
        services.sources,
        services.gate,
        ModelSet(memory=spec),
    )
    return Consolidation(services.store, services.queries, services.clock, services.settings, ports)


# -- what the pass did with each part ---------------------------------------------------


@dataclass
class Fate:
    """What the pass (and its follow-ups) did with one part."""

    outcome: str = ""  # an Outcome value, or "failed"; "" while undecided
    decided: Decided | None = None
    why: str = ""


@dataclass
class _Trace:
    """Which pass draft is which part, across a pass and its follow-ups."""

    keys: dict[str, int]  # pass draft key -> part index
    fates: list[Fate]
    waiting: list[tuple[DraftMemory, int]] = field(default_factory=list)  # deferred drafts

    def follow(self, pipeline: Consolidation, uid: str, record: PassRecord) -> None:
        state = pipeline.checkpoints.state(uid, record.pass_id)
        extracted = worklist(state, before=StageName.GROUND)
        for entry in extracted.drafts:
            for n, (draft, part) in enumerate(self.waiting):
                if entry.key not in self.keys and entry.draft == draft:
                    self.keys[entry.key] = part
                    del self.waiting[n]
                    break
        if record.status is not PassStatus.COMMITTED:
            why = f"pass {record.status.value} at {record.error_stage}: {record.error}"
            for fate in self.fates:
                if not fate.outcome:
                    fate.outcome, fate.why = "failed", why
            return
        self._read(state)

    def _read(self, state: PassState) -> None:
        work = worklist(state)
        reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE) or {})
        validated = Validated.model_validate(state.output(StageName.VALIDATE) or {})
        refusals = {d.key: f"{d.stage}: {d.code}: {d.message}" for d in work.dropped}
        refusals |= {d.key: f"reconcile: {d.message}" for d in reconciled.dropped}
        refusals |= {d.key: f"validate: {d.message}" for d in validated.rejected}
        accepted = {d.key: d for d in validated.accepted}
        deferred = {d.key: d for d in reconciled.deferred}
        for key, part in self.keys.items():
            fate = self.fates[part]
            if fate.outcome:
                continue
            if key in accepted:
                fate.outcome, fate.decided = accepted[key].outcome.value, accepted[key]
            elif key in refusals:
                fate.outcome, fate.why = Outcome.REFUSED.value, refusals[key]
            elif key in deferred:
                self.waiting.append((deferred[key].stated(), part))  # as queued


def item_result(services: Services, uid: str, fate: Fate) -> ItemResult:
    """The part's fate as the gate's item result, from what the pass committed."""
    decided = fate.decided
    outcome = Outcome(fate.outcome) if fate.outcome != "failed" else Outcome.REFUSED
    if decided is None:
        return ItemResult(0, outcome, reasons=(fate.why,))
    memory = None if decided.memory is None else URIRef(decided.memory)
    if memory is None or outcome in {Outcome.DISCARDED, Outcome.MERGED}:
        return ItemResult(0, outcome, memory, reasons=decided.reasons)
    record = services.lifecycle.get(uid, memory)
    quarantined = outcome is Outcome.QUARANTINED
    return ItemResult(
        0,
        outcome,
        memory,
        reasons=decided.reasons,
        needs_terms=record.needs_terms,
        superseded=record.supersedes,
        weakened=() if quarantined else record.contradicts,
        contradicts=record.contradicts if quarantined else (),
    )


def consolidate_case(
    services: Services,
    pipeline: Consolidation,
    model: CaseModel,
    uid: str,
    c: dict[str, Any],
    now: datetime,
) -> tuple[list[Part], list[Fate], URIRef | None] | str:
    """Prepare ``c`` as user ``uid`` (new, empty), run the pass (and follow-ups) with its
    proposal as the model's answer; the parts, their fates and the last setup memory, or why
    the setup was refused."""
    prepared = prepare(services, uid, c, now)
    if isinstance(prepared, str):
        return prepared
    keys, last = prepared
    parts = render(c)
    return parts, run_parts(pipeline, model, uid, c, keys, parts), last


def run_parts(
    pipeline: Consolidation,
    model: CaseModel,
    uid: str,
    c: dict[str, Any],
    keys: dict[str, str],
    parts: list[Part],
) -> list[Fate]:
    """Run a pass (and its follow-ups) over ``c``'s conversation, prepared for ``uid`` with
    its sources at ``keys``, whose model answers ``parts``; what became of each part."""
    model.script(c, keys, parts)
    trace = _Trace({p.key: n for n, p in enumerate(parts)}, [Fate() for _ in parts])
    for _ in range(1 + FOLLOW_UPS):
        records = pipeline.consolidate(uid, now=True)
        for record in records:
            trace.follow(pipeline, uid, record)
        if not records or not trace.waiting:
            break
    for fate in trace.fates:
        if not fate.outcome:
            fate.outcome = Outcome.REFUSED.value
            fate.why = fate.why or "never extracted: the model was shown none of its sources"
    return trace.fates


def run_pass_case(
    services: Services,
    pipeline: Consolidation,
    model: CaseModel,
    uid: str,
    c: dict[str, Any],
    now: datetime,
) -> Verdict:
    """Run ``c`` as user ``uid`` (new, empty) through a consolidation pass and judge it."""
    done = consolidate_case(services, pipeline, model, uid, c, now)
    if isinstance(done, str):
        return verdict(c, "broken", False, done, "consolidation")
    return judged(services, uid, c, *done)


def judged(
    services: Services,
    uid: str,
    c: dict[str, Any],
    parts: Sequence[Part],
    fates: Sequence[Fate],
    last: URIRef | None,
) -> Verdict:
    """The verdict on ``c`` from what the pass did with its parts (see the module docstring)."""
    head = next((n for n, p in enumerate(parts) if not p.typing), 0)
    if fates[head].outcome == "failed":
        return verdict(c, "failed", False, fates[head].why, "consolidation")
    claim = item_result(services, uid, fates[head])
    ok = judge(services, uid, c["expect"], claim, last)
    if not ok and c["expect"] == "catch" and aligned(services, uid, c, claim):
        return verdict(c, ALIGNED, True, path="consolidation")
    if c["expect"] == "catch" and not ok and claim.outcome in {Outcome.DISCARDED, Outcome.MERGED}:
        typed = [
            item_result(services, uid, f) for p, f in zip(parts, fates, strict=True) if p.typing
        ]
        ok = any(judge(services, uid, "catch", t, last) for t in typed)
    why = "; ".join(claim.reasons)
    notes = [
        f"{p.claim['subject']} a {p.claim['object']}: {f.outcome}"
        for p, f in zip(parts, fates, strict=True)
        if p.typing
    ]
    if notes:
        why += " [types: " + "; ".join(notes) + "]"
    return verdict(c, claim.outcome.value, ok, why, "consolidation")
