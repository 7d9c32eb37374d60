"""#22 item 9: a worker killed during consolidation hid the queued drafts for up to 15 minutes
(the pass lease). The pass showed "running", a rerun said "0 drafts not yet taken", and the
history gave no next attempt time. A pass whose process died is dead at once: the next sweep
(or ``kgmem consolidate``) resumes it at the stage it died in, and every queued draft is
committed exactly once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from kgmem.api.services import build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.memory.listing import MemoryList
from kgmem.memory.model import MemoryStatus
from kgmem.pipeline import PassCondition, PassStatus, StageName
from tests.pipeline.passes import SESSION_1, T1, UID, G, consolidation, open_services, say
from tests.regressions.dead_pass_worker import drafts
from tests.test_cli import kgmem

pytestmark = pytest.mark.integration  # real worker and CLI processes

ROOT = Path(__file__).resolve().parents[2]
TITLES = ["Alice knows Robert", "Alice works at Acme", "Robert lives in Paris"]


@dataclass(frozen=True)
class Killed:
    pass_id: str
    pid: int
    at: float  # time.monotonic() of the SIGKILL


def _kill_mid_stage(home: Path, stage: StageName, clock: str) -> Killed:
    """Run the worker until it is in the middle of ``stage``, then SIGKILL it."""
    command = [sys.executable, "-m", "tests.regressions.dead_pass_worker", str(home), stage, clock]
    with subprocess.Popen(
        command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as worker:
        assert worker.stdout is not None
        started = worker.stdout.readline().split()
        paused = worker.stdout.readline().split()
        worker.kill()  # SIGKILL: no cleanup, no release, the store lock dies with it
        at = time.monotonic()
        worker.wait(timeout=30)
    assert started[0] == "pass" and paused == ["item", stage.value]
    assert worker.returncode == -signal.SIGKILL
    return Killed(started[1], worker.pid, at)


def _committed_titles(home: Path, clock: FixedClock) -> list[str]:
    services = open_services(load_settings(env={"KGMEM_HOME": str(home)}), clock, fresh=False)
    try:
        listing = MemoryList(services.store, services.queries)
        found = [m for status in MemoryStatus for m in listing.memories(UID, status=status)]
        return sorted(m.title for m in found)
    finally:
        services.close()


def test_a_dead_pass_is_resumed_by_the_next_sweep(tmp_path: Path) -> None:
    home = tmp_path / "home"
    killed = _kill_mid_stage(home, StageName.CLASSIFY, "fixed")
    # One second after the worker's last heartbeat: far inside its heartbeat bound and its
    # lease, so only its process being gone can make the pass due.
    clock = FixedClock(T1 + timedelta(seconds=1))
    services = open_services(load_settings(env={"KGMEM_HOME": str(home)}), clock, fresh=False)
    try:
        pipeline = consolidation(services, None)
        before = pipeline.status(UID)
        [dead] = before.passes
        assert dead.record.pass_id == killed.pass_id
        assert dead.record.status is PassStatus.RUNNING  # as the killed worker left it
        assert dead.record.stage is StageName.CLASSIFY
        assert dead.verdict.condition is PassCondition.DEAD
        assert dead.verdict.reason is not None and f"pid {killed.pid} on " in dead.verdict.reason
        assert dead.verdict.next_attempt_at == clock.now()
        assert (before.waiting_drafts, dead.drafts) == (0, 3)  # held by the dead pass, shown

        [resumed] = pipeline.sweep()
        took = time.monotonic() - killed.at

        assert resumed.pass_id == killed.pass_id and resumed.status is PassStatus.COMMITTED
        assert resumed.owner is not None and resumed.owner.pid != killed.pid
        started = {
            c.stage: c.started_at for c in pipeline.checkpoints.checkpoints(UID, killed.pass_id)
        }
        # resumed at the stage it died in: the stages before it were not begun again
        assert started[StageName.EXTRACT] == started[StageName.GROUND] == T1
        assert started[StageName.CLASSIFY] == clock.now() == started[StageName.AUTHOR]
        assert pipeline.contributions.pending_drafts(UID) == []
        assert services.store.count(G.proposal(killed.pass_id)) == 0
        assert pipeline.sweep() == []
    finally:
        services.close()
    assert _committed_titles(home, clock) == TITLES  # each draft exactly once
    print(f"\nkill to resumed and committed: {took:.2f} s")
    assert took < 60


def test_kgmem_consolidate_shows_the_dead_pass_and_resumes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    killed = _kill_mid_stage(home, StageName.GROUND, "system")

    history = kgmem(home, "consolidate", "--user", "alice", "--history")
    assert history.returncode == 0, history.stderr
    lines = history.stdout.splitlines()
    assert (
        lines[1] == "waiting: 2 sources, 0 queued drafts; in unfinished passes: 3 drafts, 0 sources"
    )
    [line] = lines[2:]
    assert line.startswith(
        f"pass {killed.pass_id[:8]}: dead (its process is gone (pid {killed.pid} on "
    )
    assert "  stage ground  " in line and "  drafts 3  " in line
    assert f"  owner pid {killed.pid} on " in line
    assert "  heartbeat 20" in line and "  next attempt 20" in line

    run = kgmem(home, "consolidate", "--user", "alice")
    took = time.monotonic() - killed.at

    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert out[1] == f"  pass {killed.pass_id[:8]}  2/9 ground"  # resumed where it died
    assert out[-1] == f"pass {killed.pass_id[:8]}: committed"
    assert _committed_titles(home, FixedClock()) == TITLES
    print(f"\nkill to resumed by kgmem consolidate: {took:.2f} s")


def test_a_rerun_says_which_pass_holds_the_drafts_and_until_when(tmp_path: Path) -> None:
    home = tmp_path / "home"
    services = build_services(load_settings(env={"KGMEM_HOME": str(home)}))
    try:
        source, _ = say(services, "c1", SESSION_1)
        pipeline = consolidation(services, None)
        pipeline.queue(UID, drafts(source))
        pass_id = pipeline.start(UID)
        assert pass_id is not None
        now = services.clock.now()
        due = now + timedelta(hours=1)
        failure = ("ModelCallError", "timed out")
        pipeline.checkpoints.park(UID, pass_id, StageName.GROUND, failure, now, lambda _: due)
    finally:
        services.close()

    rerun = kgmem(home, "consolidate", "--user", "alice")

    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.splitlines()[1:] == [
        "nothing to consolidate for alice (2 sources and 0 drafts not yet taken)",
        f"  pass {pass_id[:8]}: parked at ground; holds 3 drafts and 0 sources; "
        f"next attempt {due.isoformat()}",
    ]
