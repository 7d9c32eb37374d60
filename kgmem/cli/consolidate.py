"""``kgmem consolidate``: run a consolidation pass in the foreground, stage by stage."""

from __future__ import annotations

import click

from kgmem.cli.common import local_services
from kgmem.config import load_settings
from kgmem.pipeline.consolidation import ConsolidationStatus
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
            waiting = consolidation.contributions.waiting(uid)
            click.echo(
                f"nothing to consolidate for {uid} "
                f"({waiting['sources']} sources and {waiting['drafts']} drafts not yet taken)"
            )
            return
        for record in records:
            click.echo(_summary(record))
        if any(r.status is PassStatus.PARKED for r in records):
            raise SystemExit(1)


def _history(status: ConsolidationStatus) -> None:
    model = status.model or "none (raw transcripts wait)"
    click.echo(f"user {status.uid}: model {model}")
    click.echo(f"waiting: {status.waiting_sources} sources, {status.waiting_drafts} queued drafts")
    for record in status.passes:
        stage = record.stage.value if record.stage else "-"
        ended = record.finished_at.isoformat() if record.finished_at else "-"
        click.echo(
            f"{_summary(record)}  stage {stage}  started {record.started_at.isoformat()}"
            f"  finished {ended}  attempts {record.attempts}  recoveries {record.recoveries}"
        )


def _summary(record: PassRecord) -> str:
    line = f"pass {record.pass_id[:8]}: {record.status.value.removeprefix('pass').lower()}"
    if record.error:
        stage = record.error_stage.value if record.error_stage else "?"
        line += f" (at {stage}: {record.error})"
    return line
