"""``kgmem consolidate``: run a consolidation pass in the foreground, stage by stage."""

from __future__ import annotations

from datetime import datetime

import click

from kgmem.cli.common import local_services
from kgmem.config import load_settings
from kgmem.pipeline.consolidation import ConsolidationStatus, PassReport
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
def consolidate(uid: str | None, now: bool, history: bool) -> None:
    """Run due and ready consolidation passes for one user, showing each stage."""
    settings = load_settings()
    uid = uid or settings.default_user
    with local_services(settings, "consolidate") as services:
        consolidation = services.consolidation
        if history:
            _history(consolidation.status(uid))
            return
        if not consolidation.has_model:
            click.echo("no model configured: queued drafts only; raw transcripts wait")

        def progress(pass_id: str, stage: StageName) -> None:
            click.echo(f"  pass {pass_id[:8]}  {stage.order}/9 {stage.value}")

        records = consolidation.consolidate(uid, now=now, progress=progress)
        if not records:
            _nothing(consolidation.status(uid))
            return
        for record in records:
            click.echo(_summary(record))
        if any(r.status is PassStatus.PARKED for r in records):
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
