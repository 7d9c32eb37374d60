"""``kgmem consolidate``: run a consolidation pass in the foreground, stage by stage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import click

from kgmem.cli.common import local_services
from kgmem.cli.progress import Lane, shown
from kgmem.config import load_settings
from kgmem.pipeline.consolidation import Consolidation, ConsolidationStatus, PassReport
from kgmem.pipeline.liveness import PassCondition
from kgmem.pipeline.records import PassRecord, PassStatus
from kgmem.pipeline.stages import StageName

__all__ = ["consolidate"]


@click.command()
@click.option("--user", "uid", default=None, help="Whose memory (default: the default user).")
@click.option(
    "--now", is_flag=True, help="Do not wait for chats to go idle: take every message now."
)
@click.option("--history", is_flag=True, help="Show what waits and the latest passes; run nothing.")
@click.option(
    "--retry",
    is_flag=True,
    help="Take again what abandoned passes held (every one not retried yet, or --pass), now.",
)
@click.option(
    "--pass",
    "passes",
    multiple=True,
    metavar="ID",
    help="With --retry: this abandoned pass (its id, or the start history shows); repeatable.",
)
def consolidate(
    uid: str | None, now: bool, history: bool, retry: bool, passes: tuple[str, ...]
) -> None:
    """Run due and ready consolidation passes for one user, showing each stage."""
    settings = load_settings()
    uid = uid or settings.default_user
    if passes and not retry:
        raise click.UsageError("--pass names a pass to retry: give --retry too")
    with local_services(settings, "consolidate") as services:
        consolidation = services.consolidation
        if history:
            _history(consolidation.status(uid))
            return
        if not consolidation.has_model:
            click.echo("no model configured: queued drafts only; raw transcripts wait")
        with shown() as display:
            progress = _stages(display.lane("consolidate"))
            if retry:
                _retry(consolidation, uid, passes, progress)
                return
            records = consolidation.consolidate(uid, now=now, progress=progress)
        if not records:
            _nothing(consolidation.status(uid))
            return
        for record in records:
            click.echo(_summary(record))
        if any(r.status is PassStatus.PARKED for r in records):
            raise SystemExit(1)


def _stages(lane: Lane | None) -> Callable[[str, StageName], None]:
    """Each stage as it starts: a line (``  pass 1a2b3c4d  3/9 extract``) and, on a
    terminal, the lane (``2/9 pass 1a2b3c4d: extract``, stages finished of all)."""

    def progress(pass_id: str, stage: StageName) -> None:
        click.echo(f"  pass {pass_id[:8]}  {stage.order}/9 {stage.value}")
        if lane is not None:
            lane(f"pass {pass_id[:8]}: {stage.value}", stage.order - 1, len(StageName))

    return progress


def _retry(
    consolidation: Consolidation,
    uid: str,
    given: tuple[str, ...],
    progress: Callable[[str, StageName], None],
) -> None:
    known = [r.record.pass_id for r in consolidation.status(uid, limit=10**6).passes]
    chosen = []
    for prefix in given:
        matches = [p for p in known if p.startswith(prefix)]
        if len(matches) != 1:
            found = "no pass" if not matches else f"{len(matches)} passes"
            raise click.BadParameter(f"{found} of {uid} start with {prefix!r}", param_hint="--pass")
        chosen.append(matches[0])
    started = consolidation.retry(uid, chosen)
    if started is None:
        click.echo(f"nothing to retry for {uid}: no abandoned pass holds anything not retried")
        return
    retried = [
        r.record.pass_id[:8]
        for r in consolidation.status(uid, 10**6).passes
        if r.record.retried_as == started
    ]
    click.echo(
        f"retrying pass{'es' if len(retried) > 1 else ''} {', '.join(retried)} as pass "
        f"{started[:8]} ({len(consolidation.checkpoints.contributions(uid, started))} "
        "contributions)"
    )
    record = consolidation.run(uid, started, progress)
    click.echo(_summary(record))
    if record.status is PassStatus.PARKED:
        raise SystemExit(1)


def _nothing(status: ConsolidationStatus) -> None:
    """Nothing ran: say what waits, and which unfinished passes hold what, and until when."""
    click.echo(
        f"nothing to consolidate for {status.uid} ({status.waiting_sources} sources and "
        f"{status.waiting_drafts} drafts not yet taken)"
    )
    for report in status.passes:
        if not report.record.status.finished:
            click.echo(f"  {_holding(report)}")


def _history(status: ConsolidationStatus) -> None:
    model = status.model or "none (raw transcripts wait)"
    click.echo(f"user {status.uid}: model {model}")
    waiting = f"waiting: {status.waiting_sources} sources, {status.waiting_drafts} queued drafts"
    unfinished = [r for r in status.passes if not r.record.status.finished]
    if unfinished:
        drafts, sources = sum(r.drafts for r in unfinished), sum(r.sources for r in unfinished)
        waiting += f"; in unfinished passes: {drafts} drafts, {sources} sources"
    click.echo(waiting)
    for report in status.passes:
        record, verdict = report.record, report.verdict
        stage = record.stage.value if record.stage else "-"
        ended = _at(record.finished_at)
        state = verdict.condition.value + (f" ({verdict.reason})" if verdict.reason else "")
        owner = record.owner.describe() if record.owner else "-"
        click.echo(
            f"pass {record.pass_id[:8]}: {state}  stage {stage}  started {_at(record.started_at)}"
            f"  finished {ended}  attempts {record.attempts}  recoveries {record.recoveries}"
            f"  drafts {report.drafts}  sources {report.sources}  owner {owner}"
            f"  heartbeat {_at(record.heartbeat_at)}  next attempt {_at(verdict.next_attempt_at)}"
            + (f"  error {record.error}" if record.error else "")
        )
        if record.abandon_reason:
            click.echo(f"  abandoned: {record.abandon_reason}")
        if record.retried_as:
            click.echo(f"  retried as pass {record.retried_as[:8]}")


def _holding(report: PassReport) -> str:
    """``pass 1a2b3c4d: dead at resolve (its process is gone (pid 7 on h)); holds 3 drafts
    and 0 sources; next attempt 2026-...``"""
    record, verdict = report.record, report.verdict
    stage = record.stage.value if record.stage else "extract"
    line = f"pass {record.pass_id[:8]}: {verdict.condition.value} at {stage}"
    if verdict.reason:
        line += f" ({verdict.reason})"
    elif record.owner and verdict.condition is PassCondition.RUNNING:
        line += f" in {record.owner.describe()}, heartbeat {_at(record.heartbeat_at)}"
    line += f"; holds {report.drafts} drafts and {report.sources} sources"
    return line + f"; next attempt {_at(verdict.next_attempt_at)}"


def _at(when: datetime | None) -> str:
    return "-" if when is None else when.isoformat()


def _summary(record: PassRecord) -> str:
    line = f"pass {record.pass_id[:8]}: {record.status.value.removeprefix('pass').lower()}"
    if record.error:
        stage = record.error_stage.value if record.error_stage else "?"
        line += f" (at {stage}: {record.error})"
    return line
