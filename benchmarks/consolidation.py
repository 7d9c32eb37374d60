"""Background consolidation at scale: one pass of 200 claims over N memories, time per stage.

    .venv/bin/python benchmarks/consolidation.py [--memories 10000,100000] [--claims 200]
                                                 [--repeat 3] [--profile FILE]

For each N, an on-disk store (as the server runs it, built by ``build_services``) is filled
with N active memories by ``batch_draft``'s bulk loader; their history messages are marked
as taken by N/50 committed passes (one per history chat), as earlier passes would have left
them. Each pass covers 200 claims said in fresh user messages (ingested before the pass, not
timed), in rounds of 20 claims over 18 messages of one chat: 10 new facts (half about "I",
a third on known entities), 3 restatements of stored memories (discards), 2 restatements
plus a new claim (merges), 1 or 2 with words as the predicate ("works at") that classify
must match to a label, in odd rounds a new fact of the previous round said again (deferred:
two drafts of one pass must not create one claim), and 1 with an invented quote (refused
at grounding). A pass also takes the drafts the previous pass deferred (queued again at its
commit), so ``claims in`` is a few more than 200.

Two ways in, each run as a warm-up pass and ``--repeat`` timed passes:

- conversation: the chats are extracted by a scripted model (``kgmem.pipeline.scripted``)
  that answers each chat's claims at once, so extraction costs only the parsing; any other
  model question (a classify tie, a resolve tie, undeclared terms) gets a fixed answer and
  is counted;
- queued: the same messages' claims handed over as queued drafts (``Consolidation.queue``,
  one draft per message), consolidated without a model.

Every stage of ``default_stages`` is wrapped in a proxy of the same shape that times its own
code (``stage ms``); the pass's ``progress`` callback times each stage as the runner runs it
(``wall ms``: the stage plus its checkpoint writes, and for commit the store commit). Prints
one table per N and way in (median of the timed passes), the outcome mix, and last
``consolidation_claims_per_s=<claims/s of the conversation pass at the largest N>``.
``--profile FILE`` writes cProfile stats of one more pass of each way at the largest N (not
in the timings; read them with ``python -m pstats FILE``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["HF_HUB_OFFLINE"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's kgmem first

import argparse
import cProfile
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from batch_draft import (
    CURIES,
    GRAPHS,
    RELATIONS,
    START,
    USER,
    Relation,
    World,
    build,
    ntriples,
)
from dspy.lm15 import Request

from kgmem.api.services import Services, build_services
from kgmem.config import load_settings
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.sources import source_iri
from kgmem.pipeline import ModelSet, ModelSpec
from kgmem.pipeline.consolidation import Consolidation, default_stages
from kgmem.pipeline.contributions import Contributions
from kgmem.pipeline.edits import at_literal
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.records import PassStatus
from kgmem.pipeline.scripted import ScriptedEngine, claim, claims_reply, prompt_of, quote, reply
from kgmem.pipeline.signatures import AssembleTerms, ClassifyTerm, ExtractClaims, ResolveTieBreak
from kgmem.pipeline.stages import (
    AnyStage,
    CommitPlan,
    CommitStage,
    ItemKey,
    ItemResult,
    ItemStage,
    PassContext,
    PassState,
    Stage,
    StageName,
)
from kgmem.pipeline.stages.reconcile import Reconciled
from kgmem.pipeline.stages.validate import Validated
from kgmem.pipeline.worklist import worklist
from kgmem.store import NodeKind, Quad, RdfFormat, node_iri
from kgmem.vocab import KGM, RDF

ROUND = 20  # claims per round (one chat of 18 messages)
HISTORY_CHAT = 50  # history messages per chat, as batch_draft writes them
#: the predicate as words: each matches exactly one label of the effective ontology
WORDS = {
    "schema:knows": "know",
    "schema:colleague": "colleague",
    "schema:worksFor": "works at",
    "schema:memberOf": "member of",
    "schema:alumniOf": "studied at",
    "schema:homeLocation": "lives in",
}
#: fixed answers to any model question but extraction (counted, never expected here)
FALLBACKS = {
    ClassifyTerm: reply(choice={"term": "none", "reason": "benchmark"}),
    ResolveTieBreak: reply(decision={"candidate": "new", "reason": "benchmark"}),
    AssembleTerms: reply(patch={"decisions": []}),
}
_HEADER = re.compile(r"^=== (S\d+) \| turn (\d+) \|", re.M)


# -- the history: every stored memory's message was taken by a committed pass ------------


def history_quads(world: World) -> Iterator[Quad]:
    """One committed pass per history chat, listing that chat's messages as contributions."""
    ops, status = GRAPHS.ops, PassStatus.COMMITTED.iri
    for chat in range((world.n + HISTORY_CHAT - 1) // HISTORY_CHAT):
        node = node_iri(USER, NodeKind.PASS, f"history{chat:08d}")
        at = at_literal(START + timedelta(minutes=(chat + 1) * HISTORY_CHAT))
        yield Quad(node, RDF.type, KGM.ConsolidationPass, ops)
        yield Quad(node, KGM.passStatus, status, ops)
        yield Quad(node, KGM.startedAt, at, ops)
        yield Quad(node, KGM.finishedAt, at, ops)
        yield Quad(node, KGM.proposalGraph, GRAPHS.proposal(f"history{chat:08d}"), ops)
        for i in range(chat * HISTORY_CHAT, min((chat + 1) * HISTORY_CHAT, world.n)):
            msg = MessageIn(chat=f"history-{chat}", turn=i % HISTORY_CHAT, role="user", text=".")
            yield Quad(node, KGM.contribution, source_iri(USER, msg), ops)


# -- what the user says in a pass --------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    subject: str  # "I" or a person's name
    relation: Relation
    obj: str
    quote: str  # the words of the message that state it (invented: not in the message)
    predicate: str  # a CURIE, or words classify must match to a label


@dataclass(frozen=True)
class Said:
    """One user message and the claims it states."""

    text: str
    claims: tuple[Claim, ...]


def third_person(verb: str) -> str:
    first, _, rest = verb.partition(" ")
    third = {"am": "is", "live": "lives", "know": "knows", "work": "works", "studied": "studied"}
    return f"{third.get(first, first + 's')} {rest}".strip()


def sentence(subject: str, relation: Relation, obj: str) -> str:
    verb = relation.verb if subject == "I" else third_person(relation.verb)
    return f"{subject} {verb} {obj}"


def stated(subject: str, relation: Relation, obj: str, *, words: bool = False) -> Claim:
    predicate = WORDS[relation.curie] if words else relation.curie
    return Claim(subject, relation, obj, sentence(subject, relation, obj), predicate)


def restated(world: World, i: int) -> Claim:
    """Stored memory ``i``'s fact, in its own words."""
    subject, relation, obj = world.fact(i)
    who = "I" if subject is None else world.name("person", subject)
    name = world.name(relation.range, obj)
    return Claim(who, relation, name, world.sentence(i), relation.curie)


def new_fact(world: World, g: int, j: int, stored: int) -> Claim:
    relation = RELATIONS[j % len(RELATIONS)]
    kind, people = relation.range, world.counts["person"]
    subject = "I" if j % 2 == 0 else world.name("person", stored % people)
    known = world.name(kind, (stored * 3) % world.counts[kind])
    return stated(subject, relation, f"New {kind} {g}-{j}" if j % 3 else known)


def round_plan(world: World, picks: Sequence[int], g: int) -> list[Said]:
    """The 18 messages (20 claims) of round ``g`` (counted over every pass of a run);
    ``picks`` orders the stored memories at random, so each round restates others."""

    def stored(k: int) -> int:
        return picks[(g * ROUND + k) % len(picks)]

    out = []
    for j in range(10):  # new facts
        fact = new_fact(world, g, j, stored(j))
        out.append(Said(f"By the way, {fact.quote}.", (fact,)))
    for j in range(10, 13):  # restatements: discards
        known = restated(world, stored(j))
        out.append(Said(f"As I said, {known.quote}.", (known,)))
    for j in range(13, 15):  # a restatement and a new claim: merges
        known = restated(world, stored(j))
        extra = stated("I", RELATIONS[0], f"New person {g}-{j}")
        out.append(Said(f"{known.quote}, and {extra.quote}.", (known, extra)))
    relation = RELATIONS[g % 6]  # words as the predicate
    words = stated("I", relation, f"New {relation.range} {g}-15", words=True)
    out.append(Said(f"Also, {words.quote}.", (words,)))
    if g % 2:  # the previous round's second new fact again: deferred
        again = new_fact(world, g - 1, 1, stored(1 - ROUND))
        out.append(Said(f"Like I told you before, {again.quote}.", (again,)))
    else:  # words as the predicate, on known entities
        relation = RELATIONS[(g // 2 + 3) % 6]
        person = world.name("person", stored(16) % world.counts["person"])
        obj = world.name(relation.range, stored(16) % world.counts[relation.range])
        known_words = stated(person, relation, obj, words=True)
        out.append(Said(f"Oh, and {known_words.quote}.", (known_words,)))
    town, elsewhere = world.name("place", g % 50), world.name("place", (g + 7) % 50)
    relation = RELATIONS[5]  # an invented quote: refused at grounding
    invented = Claim("I", relation, elsewhere, f"I moved to {elsewhere}", relation.curie)
    out.append(Said(f"I live in {town} these days.", (invented,)))
    return out


@dataclass(frozen=True)
class Chat:
    name: str
    said: tuple[Said, ...]

    def messages(self) -> list[MessageIn]:
        return [
            MessageIn(chat=self.name, turn=t, role="user", text=s.text)
            for t, s in enumerate(self.said)
        ]


def pass_plan(world: World, picks: Sequence[int], p: int, claims: int) -> list[Chat]:
    """Pass ``p``'s chats: one per round of 20 claims (``claims // 20``, at least one)."""
    rounds = max(1, claims // ROUND)
    first = p * (rounds + rounds % 2)  # an even first round: no pass repeats an earlier one
    return [
        Chat(f"bench-{world.n}-{g}", tuple(round_plan(world, picks, g)))
        for g in range(first, first + rounds)
    ]


def ingest(services: Services, chats: Sequence[Chat]) -> None:
    services.sources.ingest_messages(USER, [m for chat in chats for m in chat.messages()])


# -- the two ways in ----------------------------------------------------------------------


def extraction(chats: Sequence[Chat]) -> Callable[[Request], str]:
    """The scripted model's answer to ExtractClaims: the claims of the chat it was shown,
    each quoting the source id the segment gave its message."""
    by_text = {chat.said[0].text: chat for chat in chats}

    def answer(request: Request) -> str:
        shown = prompt_of(request)
        chat = next(c for text, c in by_text.items() if text in shown)
        ids = {int(turn): sid for sid, turn in _HEADER.findall(shown)}
        return claims_reply(
            *(
                claim(
                    "user" if c.subject == "I" else c.subject,
                    c.predicate,
                    quote(ids[turn], c.quote),
                    object=c.obj,
                    statement=c.quote,
                )
                for turn, said in enumerate(chat.said)
                for c in said.claims
            )
        )

    return answer


def queued_draft(said: Said, source: str) -> dict[str, Any]:
    entities: dict[str, dict[str, Any]] = {}
    for c in said.claims:
        entities[c.obj] = {"name": c.obj, "types": [CURIES[c.relation.range]]}
        if c.subject != "I":
            entities[c.subject] = {"name": c.subject, "types": ["schema:Person"]}
    return {
        "kind": "semantic",
        "title": said.claims[0].quote[:200],
        "confidence": 0.9,
        "claims": [
            {"subject": c.subject, "predicate": c.predicate, "object": c.obj} for c in said.claims
        ],
        "entities": list(entities.values()),
        "evidence": [
            {"source": source, "quote": q} for q in dict.fromkeys(c.quote for c in said.claims)
        ],
    }


def queue(pipeline: Consolidation, chats: Sequence[Chat], batch_max: int) -> None:
    drafts = [
        queued_draft(said, str(source_iri(USER, msg)))
        for chat in chats
        for said, msg in zip(chat.said, chat.messages(), strict=True)
    ]
    for start in range(0, len(drafts), batch_max):
        pipeline.queue(USER, drafts[start : start + batch_max])


# -- timing each stage --------------------------------------------------------------------


@dataclass
class StageTimes:
    """Seconds in each stage's own code, and how often it was called (items)."""

    seconds: Counter[StageName] = field(default_factory=Counter)
    calls: Counter[StageName] = field(default_factory=Counter)

    def add(self, stage: StageName, started: float, *, item: bool = False) -> None:
        self.seconds[stage] += time.perf_counter() - started
        self.calls[stage] += item


class TimedStage:
    def __init__(self, inner: Stage, times: StageTimes) -> None:
        self._inner, self._times = inner, times

    @property
    def name(self) -> StageName:
        return self._inner.name

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        started = time.perf_counter()
        try:
            return self._inner.run(ctx, state)
        finally:
            self._times.add(self.name, started, item=True)


class TimedItemStage:
    def __init__(self, inner: ItemStage, times: StageTimes) -> None:
        self._inner, self._times = inner, times

    @property
    def name(self) -> StageName:
        return self._inner.name

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]:
        started = time.perf_counter()
        try:
            return self._inner.items(ctx, state)
        finally:
            self._times.add(self.name, started)

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult:
        started = time.perf_counter()
        try:
            return self._inner.run_item(ctx, state, item)
        finally:
            self._times.add(self.name, started, item=True)


class TimedCommitStage:
    def __init__(self, inner: CommitStage, times: StageTimes) -> None:
        self._inner, self._times = inner, times

    @property
    def name(self) -> StageName:
        return self._inner.name

    def plan(self, ctx: PassContext, state: PassState) -> CommitPlan:
        started = time.perf_counter()
        try:
            return self._inner.plan(ctx, state)
        finally:
            self._times.add(self.name, started, item=True)


def timed(stage: AnyStage, times: StageTimes) -> AnyStage:
    """``stage`` behind a proxy of the same shape (checked in the runner's order)."""
    if isinstance(stage, CommitStage):
        return TimedCommitStage(stage, times)
    if isinstance(stage, ItemStage):
        return TimedItemStage(stage, times)
    return TimedStage(stage, times)


@dataclass
class Way:
    """One way into consolidation on one store: its pipeline, timers and model."""

    name: str
    pipeline: Consolidation
    times: StageTimes
    engine: ScriptedEngine | None


def way_in(services: Services, name: str, engine: ScriptedEngine | None) -> Way:
    models = ModelSet()
    if engine is not None:
        models = ModelSet(memory=ModelSpec("openai/scripted", engine=engine, num_retries=0))
    ports = PassPorts(
        services.ontology, services.validation, services.sources, services.gate, models
    )
    times = StageTimes()
    stages = default_stages(ports, Contributions(services.store, services.queries))
    pipeline = Consolidation(
        services.store,
        services.queries,
        services.clock,
        services.settings,
        ports,
        stages=[timed(s, times) for s in stages],
    )
    return Way(name, pipeline, times, engine)


# -- one pass -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PassTiming:
    claims: int
    start_ms: float
    wall_ms: dict[StageName, float]
    stage_ms: dict[StageName, float]
    items: dict[StageName, int]
    outcomes: Counter[str]
    refusals: Counter[str]

    @property
    def total_ms(self) -> float:
        return sum(self.wall_ms.values())

    @property
    def claims_per_s(self) -> float:
        return self.claims / (self.total_ms / 1000)


def one_pass(way: Way, profile: cProfile.Profile | None) -> PassTiming:
    pipeline, times = way.pipeline, way.times
    times.seconds.clear()
    times.calls.clear()
    started = time.perf_counter()
    pass_id = pipeline.start(USER, now=True)
    start_ms = (time.perf_counter() - started) * 1000
    if pass_id is None:
        raise RuntimeError(f"{way.name}: nothing was ready for a pass")
    marks: list[tuple[StageName, float]] = []

    def progress(_: str, stage: StageName) -> None:
        marks.append((stage, time.perf_counter()))

    if profile is not None:
        profile.enable()
    record = pipeline.run(USER, pass_id, progress=progress)
    ended = time.perf_counter()
    if profile is not None:
        profile.disable()
    if record.status is not PassStatus.COMMITTED:
        raise RuntimeError(f"{way.name}: pass {record.status.value}: {record.error}")
    ends = [at for _, at in marks[1:]] + [ended]
    wall = {stage: (end - at) * 1000 for (stage, at), end in zip(marks, ends, strict=True)}
    state = pipeline.checkpoints.state(USER, pass_id)
    extracted = worklist(state, StageName.GROUND)
    claims = sum(len(d.draft.claims) for d in extracted.drafts) + len(extracted.dropped)
    outcomes, refusals = outcome_mix(state)
    return PassTiming(
        claims,
        start_ms,
        wall,
        {stage: s * 1000 for stage, s in times.seconds.items()},
        dict(times.calls),
        outcomes,
        refusals,
    )


def outcome_mix(state: PassState) -> tuple[Counter[str], Counter[str]]:
    """Drafts by outcome (what was committed, deferred, refused), and refusals by
    stage and code."""
    reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE) or {})
    validated = Validated.model_validate(state.output(StageName.VALIDATE) or {})
    outcomes: Counter[str] = Counter(d.outcome.value for d in validated.accepted)
    outcomes["deferred"] = len(reconciled.deferred)
    refusals: Counter[str] = Counter()
    for drop in worklist(state, StageName.RECONCILE).dropped:
        if "/claim" not in drop.key:  # a draft's refusal (claim-level reasons follow it)
            refusals[f"{drop.stage.value}:{drop.code}"] += 1
    for drop in (*reconciled.dropped, *validated.rejected):
        refusals[f"{drop.stage.value}:{drop.code}"] += 1
    outcomes["refused"] = sum(refusals.values())
    return outcomes, refusals


# -- one store ----------------------------------------------------------------------------


@dataclass
class Result:
    n: int
    ways: dict[str, list[PassTiming]]
    warmups: dict[str, PassTiming]
    model_calls: Counter[str]


def run(n: int, claims: int, repeat: int, profile: cProfile.Profile | None) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(env={"KGMEM_HOME": tmp})
        services = build_services(settings)
        try:
            world = World(n)
            seconds = build(services, world)
            started = time.perf_counter()
            services.store.load(
                ntriples(list(history_quads(world))),
                RdfFormat.NTRIPLES,
                GRAPHS.ops,
                replace=False,
                bulk=True,
            )
            seconds += time.perf_counter() - started
            print(f"  built {n} memories ({services.store.count()} quads) in {seconds:.1f} s")
            contributions = Contributions(services.store, services.queries)
            if contributions.pending_sources(USER):
                raise RuntimeError("history messages are not marked taken")
            return passes(services, world, claims, repeat, profile)
        finally:
            services.close()


def passes(
    services: Services, world: World, claims: int, repeat: int, profile: cProfile.Profile | None
) -> Result:
    """The conversation passes first (so the queued way's messages, which wait for a model,
    are never extracted), then the queued ones. Each way: a warm-up pass, ``repeat`` timed
    passes, and with ``profile`` one more pass under the profiler (not in the timings)."""
    engine = ScriptedEngine()
    for signature, answer in FALLBACKS.items():
        engine.add(signature, *[answer] * 10000)
    conversation = way_in(services, "conversation", engine)
    queued = way_in(services, "queued", None)
    result = Result(world.n, {}, {}, Counter())
    picks = random.Random(world.n).sample(range(world.n), world.n)
    p = 0
    for way in (conversation, queued):
        timings = []
        for k in range(repeat + 1 + (profile is not None)):
            chats = pass_plan(world, picks, p, claims)
            p += 1
            ingest(services, chats)
            if way.engine is not None:
                way.engine.add(ExtractClaims, *[extraction(chats)] * len(chats))
            else:
                queue(way.pipeline, chats, services.settings.batch_max)
            timing = one_pass(way, profile if k > repeat else None)
            if k == 0:
                result.warmups[way.name] = timing
            elif k <= repeat:
                timings.append(timing)
        result.ways[way.name] = timings
    for signature in (ExtractClaims, *FALLBACKS):
        result.model_calls[signature.__name__] = len(engine.calls(signature))
    return result


# -- report -------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def print_way(name: str, timings: list[PassTiming], warmup: PassTiming) -> tuple[float, float]:
    total = median([t.total_ms for t in timings])
    rate = median([t.claims_per_s for t in timings])
    print(f"\n  {name}: median of {len(timings)} passes (warm-up {warmup.total_ms:.0f} ms)")
    print(f"  {'stage':<10} {'items':>6} {'stage ms':>9} {'wall ms':>9} {'share':>6}")
    for stage in StageName:
        wall = median([t.wall_ms.get(stage, 0.0) for t in timings])
        own = median([t.stage_ms.get(stage, 0.0) for t in timings])
        items = int(median([t.items.get(stage, 0) for t in timings]))
        print(f"  {stage.value:<10} {items:>6} {own:>9.1f} {wall:>9.1f} {wall / total:>6.1%}")
    print(f"  {'pass':<10} {'':>6} {'':>9} {total:>9.1f} {1:>6.0%}")
    print(f"  start (what is ready): {median([t.start_ms for t in timings]):.1f} ms")
    claims = timings[0].claims
    print(f"  claims in: {claims}; {rate:.1f} claims/s")
    print(f"  outcomes (drafts, first timed pass): {dict(sorted(timings[0].outcomes.items()))}")
    print(f"  refused (stage:code): {dict(sorted(timings[0].refusals.items()))}")
    return total, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", default="10000,100000")
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", type=Path)
    args = parser.parse_args()
    sizes = [int(s) for s in args.memories.split(",")]
    rows = []
    for n in sizes:
        print(f"N={n}")
        profile = cProfile.Profile() if args.profile and n == sizes[-1] else None
        result = run(n, args.claims, max(1, args.repeat), profile)
        row: list[float] = [n]
        for name, timings in result.ways.items():
            row += print_way(name, timings, result.warmups[name])
        print(f"  model calls (conversation): {dict(result.model_calls)}")
        rows.append(row)
        if profile is not None:
            profile.dump_stats(args.profile)
            print(f"  profile (one more pass of each way): {args.profile}")
    print(f"\n{'memories':>10}  {'conv ms':>8}  {'claims/s':>8}  {'queued ms':>9}  {'claims/s':>8}")
    for n, conv_ms, conv_rate, queued_ms, queued_rate in rows:
        conv, queued = (
            f"{conv_ms:>8.0f}  {conv_rate:>8.1f}",
            f"{queued_ms:>9.0f}  {queued_rate:>8.1f}",
        )
        print(f"{n:>10.0f}  {conv}  {queued}")
    print(f"consolidation_claims_per_s={rows[-1][2]:.1f}")


if __name__ == "__main__":
    main()
