"""The runner and liveness: a slow live pass keeps its pass, a worker presumed dead that wakes
up writes nothing, an interrupted run lets go of its pass. Real stores, fake stages, one
stage held open by the test."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from kgmem.clock import FixedClock
from kgmem.errors import PassHeld
from kgmem.pipeline import (
    AnyStage,
    Checkpoints,
    PassContext,
    PassRecord,
    PassRef,
    PassRunner,
    PassState,
    PassStatus,
    StageName,
)
from kgmem.store import OxigraphStore, QueryRegistry
from tests.pipeline.fakes import CONTRIBUTIONS, T0, UID, Calls, Rig, fake_stages, settings_for
from tests.pipeline.faults import Killed, KillingCheckpoints


@dataclass
class HeldStage:
    """A whole stage that runs until the test lets it go: a model call that takes long."""

    name: StageName
    calls: Calls
    entered: threading.Event = field(default_factory=threading.Event)
    go: threading.Event = field(default_factory=threading.Event)

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        self.calls.stages[self.name] += 1
        self.entered.set()
        assert self.go.wait(30)
        return state.with_output(self.name, {"seen": len(state.contributions)})


def _with_held(calls: Calls, held: HeldStage) -> list[AnyStage]:
    return [held if s.name is held.name else s for s in fake_stages(calls)]


def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


@dataclass
class Background:
    """``runner.run`` on a thread of its own."""

    runner: PassRunner
    pass_id: str
    result: list[PassRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        self.result.append(self.runner.run(UID, self.pass_id))

    def join(self) -> PassRecord:
        self.thread.join(timeout=30)
        [record] = self.result
        return record


def test_a_live_slow_pass_is_not_taken_over(
    store: OxigraphStore, queries: QueryRegistry, home: Path
) -> None:
    clock, calls, settings = FixedClock(T0), Calls(), settings_for(home)
    ledger = Checkpoints(store, queries)
    held = HeldStage(StageName.RESOLVE, calls)
    owner = PassRunner(
        _with_held(calls, held), ledger, clock, settings, heartbeat=timedelta(milliseconds=20)
    )
    pass_id = owner.start(UID, CONTRIBUTIONS)
    running = Background(owner, pass_id)
    assert held.entered.wait(30)

    clock.advance(timedelta(minutes=20))  # one call longer than the old 15-minute lease
    _wait_for(lambda: ledger.record(UID, pass_id).heartbeat_at == clock.now())
    other_calls = Calls()
    other = PassRunner(fake_stages(other_calls), ledger, clock, settings)

    assert other.due() == []
    assert other.verdict(ledger.record(UID, pass_id)).condition.value == "running"
    with pytest.raises(PassHeld):
        other.run(UID, pass_id)
    held.go.set()
    record = running.join()

    assert record.status is PassStatus.COMMITTED
    assert calls.stages[StageName.RESOLVE] == 1 and sum(other_calls.stages.values()) == 0
    assert len(ledger.outbox(UID)) == 1


def test_a_worker_presumed_dead_that_wakes_up_writes_nothing(
    store: OxigraphStore, queries: QueryRegistry, home: Path
) -> None:
    clock, calls, settings = FixedClock(T0), Calls(), settings_for(home)
    ledger = Checkpoints(store, queries)
    rig = Rig(store, queries, settings, clock)
    held = HeldStage(StageName.RESOLVE, calls)
    # its heartbeat never comes within the test: it looks like a frozen process
    frozen = PassRunner(
        _with_held(calls, held), ledger, clock, settings, heartbeat=timedelta(hours=1)
    )
    pass_id = frozen.start(UID, CONTRIBUTIONS)
    running = Background(frozen, pass_id)
    assert held.entered.wait(30)

    clock.advance(timedelta(hours=4))  # four missed heartbeats: dead, though it still runs
    taker_calls = Calls()
    taker = PassRunner(fake_stages(taker_calls), ledger, clock, settings)
    assert taker.due() == [PassRef(UID, pass_id)]
    taken = taker.run(UID, pass_id)
    held.go.set()
    woken = running.join()

    assert taken.status is PassStatus.COMMITTED and woken.status is PassStatus.COMMITTED
    assert taker_calls.stages[StageName.RESOLVE] == 1  # resumed at the stage it died in
    assert taker_calls.stages[StageName.CLASSIFY] == 0 and taker_calls.items == {}
    assert calls.stages[StageName.RECONCILE] == 0  # the woken worker went no further
    assert len(ledger.outbox(UID)) == 1 and len(rig.kg()) == 9  # one commit


def test_an_interrupted_run_lets_go_and_its_pass_is_due_at_its_stage_at_once(
    store: OxigraphStore, queries: QueryRegistry, home: Path
) -> None:
    settings = settings_for(home)
    killing = KillingCheckpoints(store, queries, StageName.CLASSIFY.value)
    rig = Rig(store, queries, settings, checkpoints=killing)
    runner = rig.runner()
    pass_id = runner.start(UID, CONTRIBUTIONS)
    with pytest.raises(Killed):  # not a stage failure: a shutdown, a cancelled worker
        runner.run(UID, pass_id)

    record = rig.ledger.record(UID, pass_id)
    assert (record.status, record.stage, record.claim) == (
        PassStatus.QUEUED,
        StageName.RESOLVE,
        None,
    )
    fresh = Rig(store, queries, settings, rig.clock)
    assert fresh.runner().due() == [PassRef(UID, pass_id)]
    assert fresh.runner().run(UID, pass_id).status is PassStatus.COMMITTED
    assert fresh.calls.stages[StageName.CLASSIFY] == 0 and fresh.calls.items == {}
