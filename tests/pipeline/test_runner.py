"""The pass runner over real stores with fake stages: order, parking, backoff, resume,
recovery, abandonment, the atomic commit, and restart after a kill at every stage boundary."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.errors import PassNotDue, StageOrderError
from kgmem.pipeline import (
    PassRecord,
    PassRef,
    PassRunner,
    PassStatus,
    StageName,
)
from kgmem.store import OxigraphStore, Quad, QueryRegistry, UserGraphs
from tests.pipeline.fakes import (
    CONTRIBUTIONS,
    UID,
    Calls,
    FakeStage,
    Rig,
    entity_for,
    fake_stages,
    settings_for,
)
from tests.pipeline.faults import Killed, KillingCheckpoints
from tests.pipeline.test_checkpoints import assert_conforms

ROOT = Path(__file__).resolve().parents[2]
GRAPHS = UserGraphs(UID)
ENTITIES = {entity_for(c) for c in CONTRIBUTIONS}


@pytest.fixture
def rig(store: OxigraphStore, queries: QueryRegistry, home: Path) -> Rig:
    return Rig(store, queries, settings_for(home))


def reference_kg(queries: QueryRegistry, home: Path) -> set[Quad]:
    """The kg graph an uninterrupted pass leaves, from a store of its own."""
    store = OxigraphStore()
    try:
        rig = Rig(store, queries, settings_for(home))
        runner = rig.runner()
        record = runner.run(UID, runner.start(UID, CONTRIBUTIONS))
        assert record.status is PassStatus.COMMITTED
        return rig.kg()
    finally:
        store.close()


def test_run_goes_through_all_nine_stages_and_commits(rig: Rig, store: OxigraphStore) -> None:
    runner = rig.runner()
    pass_id = runner.start(UID, CONTRIBUTIONS)

    record = runner.run(UID, pass_id)

    assert record.status is PassStatus.COMMITTED
    assert record.finished_at == rig.clock.now()
    assert record.attempts == 1  # #28: history said "attempts 0" for a pass that ran once
    assert rig.calls.stages == {name: 1 for name in StageName if name is not StageName.EXTRACT}
    assert rig.calls.items == {str(c): 1 for c in CONTRIBUTIONS}
    assert {q.subject for q in rig.kg()} == ENTITIES
    assert len(rig.kg()) == 9
    assert store.count(GRAPHS.proposal(pass_id)) == 0
    assert [c.stage for c in rig.ledger.checkpoints(UID, pass_id)] == list(StageName)
    assert [c.attempts for c in rig.ledger.checkpoints(UID, pass_id)] == [1] * 9
    [entry] = rig.ledger.outbox(UID)
    assert entry.nodes == ENTITIES and entry.added == 9
    assert rig.ledger.dirty_entities(UID) == set()
    assert runner.due() == []
    assert_conforms(store)


def test_runner_refuses_stages_out_of_order(rig: Rig) -> None:
    stages = fake_stages(Calls())
    stages[1], stages[2] = stages[2], stages[1]

    with pytest.raises(StageOrderError, match="in order"):
        PassRunner(stages, rig.ledger, rig.clock, rig.settings)


def test_runner_refuses_a_commit_stage_that_cannot_plan(rig: Rig) -> None:
    stages = fake_stages(Calls())
    stages[7] = FakeStage(StageName.COMMIT, Calls())

    with pytest.raises(StageOrderError, match="only the commit stage"):
        PassRunner(stages, rig.ledger, rig.clock, rig.settings)


def test_failing_stage_parks_with_its_name_and_backs_off(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.CLASSIFY: 2})
    pass_id = runner.start(UID, CONTRIBUTIONS)

    record = runner.run(UID, pass_id)

    assert record.status is PassStatus.PARKED
    assert (record.stage, record.error_stage) == (StageName.CLASSIFY, StageName.CLASSIFY)
    assert record.attempts == 1
    assert record.error == "classify: ValueError: classify broke"
    assert record.error_type == "ValueError"
    assert record.next_attempt_at == rig.clock.now() + timedelta(seconds=30)
    rig.clock.advance(timedelta(seconds=29))
    assert runner.due(UID) == []
    with pytest.raises(PassNotDue):
        runner.run(UID, pass_id)
    rig.clock.advance(timedelta(seconds=1))
    assert runner.due(UID) == [PassRef(UID, pass_id)]
    assert runner.due() == [PassRef(UID, pass_id)]

    second = runner.run(UID, pass_id)

    assert (second.status, second.attempts) == (PassStatus.PARKED, 2)
    assert second.next_attempt_at == rig.clock.now() + timedelta(seconds=60)


def test_resume_starts_at_the_failed_stage(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.RESOLVE: 1})
    pass_id = runner.start(UID, CONTRIBUTIONS)
    runner.run(UID, pass_id)
    rig.clock.advance(timedelta(seconds=30))

    record = runner.run(UID, pass_id)

    assert record.status is PassStatus.COMMITTED
    before = [StageName.GROUND, StageName.CLASSIFY]
    assert [rig.calls.stages[s] for s in before] == [1, 1]
    assert rig.calls.stages[StageName.RESOLVE] == 2
    assert rig.calls.items == {str(c): 1 for c in CONTRIBUTIONS}
    # each stage's tries: resolve failed once, then went through
    assert [c.attempts for c in rig.ledger.checkpoints(UID, pass_id)][:4] == [1, 1, 1, 2]
    assert record.attempts == 1  # the last stage's: it went through at once


def test_resume_does_not_redo_banked_items(rig: Rig) -> None:
    second = str(CONTRIBUTIONS[1])
    runner = rig.runner(fail_items={second: 1})
    pass_id = runner.start(UID, CONTRIBUTIONS)

    parked = runner.run(UID, pass_id)

    assert (parked.status, parked.stage) == (PassStatus.PARKED, StageName.EXTRACT)
    assert parked.error == f"extract: RuntimeError: cannot read {second}"
    assert rig.ledger.banked_items(UID, pass_id, StageName.EXTRACT).keys() == {
        str(CONTRIBUTIONS[0])
    }
    rig.clock.advance(timedelta(seconds=30))

    record = runner.run(UID, pass_id)

    assert record.status is PassStatus.COMMITTED
    assert rig.calls.items == {str(CONTRIBUTIONS[0]): 1, second: 2, str(CONTRIBUTIONS[2]): 1}
    assert {q.subject for q in rig.kg()} == ENTITIES


def _run_until_settled(rig: Rig, runner: PassRunner, pass_id: str) -> list[PassRecord]:
    """Run whenever due until the pass is not parked; every record seen, in order."""
    seen = []
    for _ in range(20):
        record = runner.run(UID, pass_id)
        seen.append(record)
        if record.status is not PassStatus.PARKED and record.status is not PassStatus.QUEUED:
            return seen
        if record.next_attempt_at is not None:
            rig.clock.current = max(rig.clock.current, record.next_attempt_at)
    raise AssertionError("the pass never settled")


def test_spent_budget_recovers_once_then_abandons(rig: Rig, store: OxigraphStore) -> None:
    recovered: list[tuple[URIRef, ...]] = []

    def recover(record: PassRecord, contributions: tuple[URIRef, ...]) -> tuple[URIRef, ...]:
        recovered.append(contributions)
        return contributions

    runner = rig.runner(fail={StageName.VALIDATE: 100}, recover=recover)
    pass_id = runner.start(UID, CONTRIBUTIONS)

    seen = _run_until_settled(rig, runner, pass_id)

    assert [(r.status, r.attempts) for r in seen] == [
        (PassStatus.PARKED, 1),
        (PassStatus.PARKED, 2),
        (PassStatus.QUEUED, 0),  # rebuilt from the contributions
        (PassStatus.PARKED, 1),
        (PassStatus.PARKED, 2),
        (PassStatus.ABANDONED, 3),
    ]
    assert recovered == [CONTRIBUTIONS]
    assert seen[2].recoveries == 1 and seen[2].stage is StageName.EXTRACT
    assert rig.calls.stages[StageName.VALIDATE] == 6
    assert rig.calls.items == {str(c): 2 for c in CONTRIBUTIONS}
    final = seen[-1]
    assert final.error == "validate: ValueError: validate broke"
    assert final.abandon_reason == (
        "stage validate failed 3 times, after 1 rebuild from its contributions; "
        "last error: validate: ValueError: validate broke"
    )
    assert final.finished_at is not None and final.next_attempt_at is None
    assert rig.kg() == set()
    assert store.count(GRAPHS.proposal(pass_id)) == 0
    assert rig.ledger.dirty_entities(UID) == set()
    assert rig.ledger.outbox(UID) == []
    assert runner.due() == []
    assert_conforms(store)


def test_recover_declining_abandons_at_once(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.GROUND: 100}, recover=lambda record, c: None)
    pass_id = runner.start(UID, CONTRIBUTIONS)

    seen = _run_until_settled(rig, runner, pass_id)

    assert [r.status for r in seen] == [PassStatus.PARKED] * 2 + [PassStatus.ABANDONED]
    assert rig.calls.stages[StageName.GROUND] == 3
    assert seen[-1].abandon_reason is not None
    assert seen[-1].abandon_reason.startswith(
        "stage ground failed 3 times and its recovery gave up"
    )


def test_abandoned_pass_leaves_no_trace_in_the_user_graphs(rig: Rig, store: OxigraphStore) -> None:
    runner = rig.runner(fail={StageName.COMMIT: 100}, recover=lambda record, c: None)
    pass_id = runner.start(UID, CONTRIBUTIONS)
    runner.run(UID, pass_id)
    assert store.count(GRAPHS.proposal(pass_id)) == 3  # ground wrote shells
    assert rig.ledger.dirty_entities(UID) == ENTITIES
    rig.clock.advance(timedelta(seconds=30))

    final = _run_until_settled(rig, runner, pass_id)[-1]

    assert final.status is PassStatus.ABANDONED and final.stage is StageName.COMMIT
    assert store.count(GRAPHS.kg) == 0
    assert GRAPHS.proposal(pass_id) not in store.graphs()
    assert rig.ledger.dirty_entities(UID) == set()


def test_dirty_entities_are_visible_until_commit(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.RECONCILE: 1})
    pass_id = runner.start(UID, CONTRIBUTIONS)

    runner.run(UID, pass_id)

    assert rig.ledger.dirty_entities(UID) == ENTITIES
    assert rig.ledger.dirty_entities(UID, exclude=pass_id) == set()
    rig.clock.advance(timedelta(minutes=1))
    runner.run(UID, pass_id)
    assert rig.ledger.dirty_entities(UID) == set()


def test_spent_budget_after_commit_keeps_the_commit(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.AUTHOR: 100})
    pass_id = runner.start(UID, CONTRIBUTIONS)

    final = _run_until_settled(rig, runner, pass_id)[-1]

    assert final.status is PassStatus.COMMITTED
    assert final.error == "author: ValueError: author broke"
    assert {q.subject for q in rig.kg()} == ENTITIES
    assert rig.calls.stages[StageName.COMMIT] == 1


def test_failed_commit_commits_nothing_and_retries(rig: Rig) -> None:
    runner = rig.runner(fail={StageName.COMMIT: 1})
    pass_id = runner.start(UID, CONTRIBUTIONS)

    parked = runner.run(UID, pass_id)

    assert (parked.status, parked.stage) == (PassStatus.PARKED, StageName.COMMIT)
    assert rig.kg() == set() and rig.ledger.outbox(UID) == []
    rig.clock.advance(timedelta(seconds=30))
    assert runner.run(UID, pass_id).status is PassStatus.COMMITTED
    assert len(rig.kg()) == 9 and len(rig.ledger.outbox(UID)) == 1


@pytest.mark.parametrize("at", ["item", *StageName])
def test_kill_at_a_stage_boundary_then_restart_equals_an_uninterrupted_run(
    at: str, tmp_path: Path, queries: QueryRegistry, home: Path
) -> None:
    path = tmp_path / "store"
    store = OxigraphStore(path)
    rig = Rig(
        store, queries, settings_for(home), checkpoints=KillingCheckpoints(store, queries, at)
    )
    pass_id = rig.runner().start(UID, CONTRIBUTIONS)
    with pytest.raises(Killed):
        rig.runner().run(UID, pass_id)
    store.close()

    reopened = OxigraphStore(path)
    try:
        fresh = Rig(reopened, queries, settings_for(home))
        record = fresh.runner().run(UID, pass_id)

        assert record.status is PassStatus.COMMITTED
        assert fresh.kg() == reference_kg(queries, home)
        assert len(fresh.ledger.outbox(UID)) == 1
        assert reopened.count(GRAPHS.proposal(pass_id)) == 0
        assert fresh.ledger.dirty_entities(UID) == set()
        done = list(StageName)[: StageName(at).order] if at != "item" else []
        assert all(fresh.calls.stages[s] == 0 for s in done)
        assert sum(fresh.calls.items.values()) == (0 if done else len(CONTRIBUTIONS) - 1)
        assert_conforms(reopened)
    finally:
        reopened.close()


@pytest.mark.integration
def test_kill_9_at_a_stage_boundary_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path, queries: QueryRegistry, home: Path
) -> None:
    path = tmp_path / "store"
    command = [sys.executable, "-m", "tests.pipeline.kill_worker", str(path), str(home), "validate"]
    with subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as worker:
        assert worker.stdout is not None
        started = worker.stdout.readline().split()
        boundary = worker.stdout.readline().split()
        worker.kill()  # SIGKILL: no cleanup, no flush, the store lock dies with the process
        worker.wait(timeout=30)
    assert started[0] == "pass" and boundary == ["boundary", "validate"]
    assert worker.returncode == -signal.SIGKILL
    pass_id = started[1]

    store = OxigraphStore(path)
    try:
        rig = Rig(store, queries, settings_for(home))
        interrupted = rig.ledger.record(UID, pass_id)
        assert (interrupted.status, interrupted.stage) == (PassStatus.RUNNING, StageName.COMMIT)
        assert rig.kg() == set()

        record = rig.runner().run(UID, pass_id)

        assert record.status is PassStatus.COMMITTED
        assert rig.kg() == reference_kg(queries, home)
        assert rig.calls.stages[StageName.VALIDATE] == 0
        assert rig.calls.stages[StageName.COMMIT] == 1
        assert len(rig.ledger.outbox(UID)) == 1
    finally:
        store.close()
