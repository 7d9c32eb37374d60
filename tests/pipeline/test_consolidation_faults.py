"""Faults in a real consolidation pass: killed at every stage boundary (and after one banked
item), the pass resumes on a reopened store and ends exactly as an uninterrupted run; a stage
that raises parks the pass at that stage and a later run resumes there."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from kgmem.clock import FixedClock
from kgmem.config import Settings, load_settings
from kgmem.errors import ModelCallError
from kgmem.pipeline import (
    ExtractClaims,
    PassStatus,
    StageName,
)
from tests.pipeline.faults import Killed, KillingCheckpoints
from tests.pipeline.passes import (
    SESSION_1,
    T1,
    UID,
    G,
    consolidation,
    fingerprint,
    open_services,
    say,
    session_one_reply,
)
from tests.pipeline.scripted import ScriptedEngine

ROOT = Path(__file__).resolve().parents[2]


def _settings(home: Path) -> Settings:
    return load_settings(env={"KGMEM_HOME": str(home)})


def _run(home: Path, at: str | None) -> tuple[object, str]:
    """Session 1 consolidated once; killed at ``at`` and resumed on a reopened store."""
    clock = FixedClock(T1)
    services = open_services(_settings(home), clock)
    engine = ScriptedEngine({ExtractClaims: [session_one_reply()]})
    say(services, "c1", SESSION_1)
    clock.advance(timedelta(minutes=10))
    killing = None if at is None else KillingCheckpoints(services.store, services.queries, at)
    pipeline = consolidation(services, engine, killing)
    pass_id = pipeline.start(UID)
    assert pass_id is not None
    if at is None:
        pipeline.run(UID, pass_id)
    else:
        with pytest.raises(Killed):
            pipeline.run(UID, pass_id)
        services.close()
        services = open_services(_settings(home), clock, fresh=False)
        resumed = consolidation(services, engine).run(UID, pass_id)
        assert resumed.status is PassStatus.COMMITTED, resumed.error
    try:
        record = consolidation(services, engine).checkpoints.record(UID, pass_id)
        assert record.status is PassStatus.COMMITTED
        assert services.store.count(G.proposal(pass_id)) == 0
        assert consolidation(services, None).checkpoints.dirty_entities(UID) == set()
        assert len(engine.calls(ExtractClaims)) == 1  # a resume never asks the model again
        return fingerprint(services), pass_id
    finally:
        services.close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> object:
    found = _run(tmp_path_factory.mktemp("reference"), None)[0]
    # session 1's two lies are refused, once each, in the feed
    assert isinstance(found, tuple) and len(found[2]) == 2
    return found


@pytest.mark.parametrize(
    "at", ["item:extract", "item:ground", "item:classify", *(s.value for s in StageName)]
)
def test_kill_at_every_boundary_then_resume_equals_an_uninterrupted_run(
    at: str, tmp_path: Path, reference: object
) -> None:
    result, _ = _run(tmp_path, at)
    assert result == reference


def test_a_failing_stage_parks_the_pass_there_and_a_later_run_resumes(
    settings: Settings,
) -> None:
    clock = FixedClock(T1)
    services = open_services(settings, clock)
    try:
        engine = ScriptedEngine({ExtractClaims: [ModelCallError("extract", "timed out")]})
        say(services, "c1", SESSION_1)
        clock.advance(timedelta(minutes=10))
        pipeline = consolidation(services, engine)
        [parked] = pipeline.consolidate(UID)
        assert parked.status is PassStatus.PARKED and parked.stage is StageName.EXTRACT
        assert parked.error is not None and "timed out" in parked.error
        assert pipeline.consolidate(UID) == []  # not due before its backoff
        clock.advance(timedelta(minutes=5))
        engine.add(ExtractClaims, session_one_reply())
        [done] = pipeline.consolidate(UID)
        assert done.pass_id == parked.pass_id and done.status is PassStatus.COMMITTED
    finally:
        services.close()


@pytest.mark.integration
@pytest.mark.parametrize("stage", [StageName.RESOLVE, StageName.VALIDATE])
def test_kill_9_of_a_real_process_then_resume_equals_an_uninterrupted_run(
    stage: StageName, tmp_path: Path, reference: object
) -> None:
    home = tmp_path / "home"
    command = [sys.executable, "-m", "tests.pipeline.kill_pass_worker", str(home), stage.value]
    with subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as worker:
        assert worker.stdout is not None
        started = worker.stdout.readline().split()
        boundary = worker.stdout.readline().split()
        worker.kill()  # SIGKILL: no cleanup, no flush; the store lock dies with the process
        worker.wait(timeout=30)
    assert started[0] == "pass" and boundary == ["boundary", stage.value]
    assert worker.returncode == -signal.SIGKILL

    clock = FixedClock(T1 + timedelta(minutes=10))
    services = open_services(_settings(home), clock, fresh=False)
    try:
        engine = ScriptedEngine()  # extract is banked: the model is not asked again
        pipeline = consolidation(services, engine)
        interrupted = pipeline.checkpoints.record(UID, started[1])
        assert interrupted.status is PassStatus.RUNNING
        assert interrupted.stage is stage.following
        assert interrupted.owner is not None and interrupted.owner.pid == worker.pid
        # its process is gone: taken over at once, not after a lease (the clock stands still)
        [record] = pipeline.consolidate(UID)
        assert record.pass_id == started[1] and record.status is PassStatus.COMMITTED
        assert engine.requests == []
        assert fingerprint(services) == reference
        assert services.store.count(G.proposal(started[1])) == 0
    finally:
        services.close()
