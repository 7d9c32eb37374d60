"""Small fake stages for runner and checkpoint tests: deterministic, countable, breakable.

They use the real contract (stages.py) and write to a real store: extract banks one item per
contribution, ground writes shells into the proposal graph, commit writes one entity per
contribution into the user's kg graph. Nothing here depends on the pass id, so two runs over
the same contributions leave the same kg graph.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rdflib import Literal, URIRef

from kgmem.clock import FixedClock
from kgmem.config import Settings, load_settings
from kgmem.pipeline import (
    AnyStage,
    Checkpoints,
    CommitPlan,
    ItemKey,
    ItemResult,
    PassContext,
    PassRunner,
    PassState,
    RecoverFn,
    StageName,
    rebuild_from_contributions,
)
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    stable_node,
)
from kgmem.vocab import KGM, RDF, SDO

UID = "alice"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
CONTRIBUTIONS = tuple(
    URIRef(f"https://w3id.org/kgmem/user/{UID}/msg/m{n}") for n in ("1", "2", "3")
)


def entity_for(contribution: str) -> URIRef:
    return stable_node(UID, NodeKind.ENTITY, contribution)


@dataclass
class Calls:
    """How often each stage (and each item of an item stage) ran."""

    stages: Counter[StageName] = field(default_factory=Counter)
    items: Counter[str] = field(default_factory=Counter)


@dataclass
class FakeExtract:
    """An item stage: one claim per contribution; ``fail_items[key]`` failures first."""

    calls: Calls
    fail_items: dict[str, int] = field(default_factory=dict)
    name: StageName = StageName.EXTRACT

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]:
        return sorted(state.contributions)

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult:
        self.calls.items[item] += 1
        if self.fail_items.get(item, 0) > 0:
            self.fail_items[item] -= 1
            raise RuntimeError(f"cannot read {item}")
        return ItemResult(value={"claim": f"about {item}"}, dirty=(str(entity_for(item)),))


@dataclass
class FakeStage:
    """A whole stage that notes it ran; fails ``failures`` times first."""

    name: StageName
    calls: Calls
    failures: int = 0

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        self.calls.stages[self.name] += 1
        if self.failures > 0:
            self.failures -= 1
            raise ValueError(f"{self.name} broke")
        if self.name is StageName.GROUND:
            shells = [
                Quad(entity_for(c), RDF.type, KGM.Shell, ctx.proposal) for c in state.contributions
            ]
            ctx.store.commit(Changeset.of(shells))
        return state.with_output(self.name, {"seen": len(state.contributions)})


@dataclass
class FakeCommit:
    """Plans one entity per extracted claim into the kg graph."""

    calls: Calls
    failures: int = 0
    name: StageName = StageName.COMMIT

    def plan(self, ctx: PassContext, state: PassState) -> CommitPlan:
        self.calls.stages[self.name] += 1
        if self.failures > 0:
            self.failures -= 1
            raise ValueError("commit broke")
        claims = state.output(StageName.EXTRACT)
        assert isinstance(claims, dict)
        kg = UserGraphs(ctx.uid).kg
        quads = []
        for contribution, claim in sorted(claims.items()):
            assert isinstance(claim, dict)
            entity = entity_for(contribution)
            quads += [
                Quad(entity, RDF.type, SDO.Thing, kg),
                Quad(entity, SDO.name, Literal(str(claim["claim"])), kg),
                Quad(entity, SDO.subjectOf, URIRef(contribution), kg),
            ]
        return CommitPlan(Changeset.of(quads), state.with_output(self.name, len(quads)))


def fake_stages(
    calls: Calls,
    *,
    fail: dict[StageName, int] | None = None,
    fail_items: dict[str, int] | None = None,
) -> list[AnyStage]:
    fail = fail or {}
    stages: list[AnyStage] = []
    for name in StageName:
        if name is StageName.EXTRACT:
            stages.append(FakeExtract(calls, dict(fail_items or {})))
        elif name is StageName.COMMIT:
            stages.append(FakeCommit(calls, fail.get(name, 0)))
        else:
            stages.append(FakeStage(name, calls, fail.get(name, 0)))
    return stages


def settings_for(home: Path, **overrides: object) -> Settings:
    return load_settings(env={"KGMEM_HOME": str(home)}, **overrides)


@dataclass
class Rig:
    """A runner over a real store with fake stages, a fixed clock and call counters."""

    store: TripleStore
    queries: QueryRegistry
    settings: Settings
    clock: FixedClock = field(default_factory=lambda: FixedClock(T0))
    calls: Calls = field(default_factory=Calls)
    checkpoints: Checkpoints | None = None

    def runner(
        self,
        *,
        fail: dict[StageName, int] | None = None,
        fail_items: dict[str, int] | None = None,
        recover: RecoverFn = rebuild_from_contributions,
    ) -> PassRunner:
        checkpoints = self.checkpoints or Checkpoints(self.store, self.queries)
        stages = fake_stages(self.calls, fail=fail, fail_items=fail_items)
        return PassRunner(stages, checkpoints, self.clock, self.settings, recover=recover)

    @property
    def ledger(self) -> Checkpoints:
        return self.checkpoints or Checkpoints(self.store, self.queries)

    def kg(self) -> set[Quad]:
        return set(self.store.quads(UserGraphs(UID).kg))
