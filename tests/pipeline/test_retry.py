"""Abandoned passes lose nothing for good: history says why each was given up, and a retry
takes its contributions again in one new pass (which names the passes it retries), refused
while another pass is under way, for a pass not abandoned, or twice for the same pass."""

from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.errors import ModelCallError, PassNotFound, RetryRefused
from kgmem.pipeline.consolidation import Consolidation, PassStatus
from kgmem.pipeline.signatures import ExtractClaims
from tests.pipeline.passes import SESSION_1, UID, consolidation, memories, say, session_one_reply
from tests.pipeline.scripted import ScriptedEngine
from tests.test_cli import kgmem


def _abandon(pipeline: Consolidation, clock: FixedClock) -> str:
    """Run the user's passes until the one over session 1 is abandoned; its id."""
    for _ in range(20):
        for record in pipeline.consolidate(UID, now=True):
            if record.status is PassStatus.ABANDONED:
                return record.pass_id
        clock.advance(timedelta(minutes=10))  # past any backoff
    raise AssertionError("the pass was never abandoned")


def test_an_abandoned_pass_says_why_and_a_retry_takes_its_sources_again(
    services: Services, clock: FixedClock
) -> None:
    down = ModelCallError("openai/scripted", "connection refused")
    engine = ScriptedEngine().add(ExtractClaims, *[down] * 6)  # 3 attempts, rebuilt, 3 more
    pipeline = consolidation(services, engine)
    say(services, "c1", SESSION_1)
    abandoned = _abandon(pipeline, clock)

    status = pipeline.status(UID)
    [report] = status.passes
    record = report.record
    assert record.abandon_reason is not None
    assert record.abandon_reason.startswith("stage extract failed 3 times, after 1 rebuild")
    assert "connection refused" in record.abandon_reason
    assert status.waiting_sources == 0  # taken by the abandoned pass: nothing retries them
    assert pipeline.consolidate(UID, now=True) == []
    assert memories(services) == {}

    engine.add(ExtractClaims, session_one_reply())
    retry = pipeline.retry(UID)
    assert retry is not None
    assert pipeline.checkpoints.contributions(UID, retry) == pipeline.checkpoints.contributions(
        UID, abandoned
    )
    assert pipeline.checkpoints.record(UID, abandoned).retried_as == retry
    with pytest.raises(RetryRefused, match="under way"):  # the retry is queued, not run yet
        pipeline.retry(UID, [abandoned])
    [done] = pipeline.consolidate(UID, now=True)
    assert done.pass_id == retry and done.status is PassStatus.COMMITTED, done.error
    assert "Alice works at Acme" in memories(services)

    assert pipeline.retry(UID) is None  # every abandoned pass is retried
    with pytest.raises(RetryRefused, match=f"retried already, as pass {retry}"):
        pipeline.retry(UID, [abandoned])
    with pytest.raises(RetryRefused, match="only an abandoned pass"):
        pipeline.retry(UID, [retry])
    with pytest.raises(PassNotFound):
        pipeline.retry(UID, ["0" * 32])
    with pytest.raises(PassNotFound):  # another user's pass is no pass of this one
        pipeline.retry("bob", [abandoned])


def test_kgmem_consolidate_retry_from_the_shell(services: Services, clock: FixedClock) -> None:
    down = ModelCallError("openai/scripted", "503 from the model server")
    engine = ScriptedEngine().add(ExtractClaims, *[down] * 6)
    pipeline = consolidation(services, engine)
    say(services, "c1", SESSION_1)
    abandoned = _abandon(pipeline, clock)
    services.close()
    home = services.settings.home

    def shell(*args: str) -> subprocess.CompletedProcess[str]:
        return kgmem(home, "consolidate", "--user", UID, *args)

    shown = shell("--history")
    assert shown.returncode == 0, shown.stderr
    assert f"pass {abandoned[:8]}: abandoned" in shown.stdout
    assert "abandoned: stage extract failed 3 times" in shown.stdout
    assert "503 from the model server" in shown.stdout
    wrong = shell("--pass", abandoned[:8])
    assert wrong.returncode == 2 and "--retry" in wrong.stderr
    none = shell("--retry", "--pass", "ffff")
    assert none.returncode == 2 and "no pass" in none.stderr
    # no model from the shell: a retry would take the raw messages unread, so it is refused
    refused = shell("--retry", "--pass", abandoned[:8])
    assert refused.returncode == 2 and "no model is configured" in refused.stderr
    assert "retried as" not in shell("--history").stdout
    # with a model (on a closed loopback port: the new pass parks at extract, exit 1)
    model = {"KGMEM_MODEL_MEMORY": "openai/m", "KGMEM_MODEL_API_BASE": "http://127.0.0.1:9/v1"}
    ran = kgmem(home, "consolidate", "--user", UID, "--retry", **model)
    assert f"retrying pass {abandoned[:8]} as pass" in ran.stdout, (ran.stdout, ran.stderr)
    assert ran.returncode == 1 and "parked (at extract" in ran.stdout
    # the stage, the model and the reason on one line; a traceback only with --debug
    assert "consolidation stage failed: extract: ModelCallError" in ran.stderr
    assert "[openai/m]" in ran.stderr and "Traceback" not in ran.stderr
    assert "retried as pass" in shell("--history").stdout
    busy = kgmem(home, "consolidate", "--user", UID, "--retry", **model)
    assert busy.returncode == 2 and "under way" in busy.stderr
