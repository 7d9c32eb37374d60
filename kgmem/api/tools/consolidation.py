"""The consolidation tools: what waits and what the latest passes did (with why an abandoned
pass was given up), and retrying abandoned passes, whose contributions no pass takes again
by itself (every pass that lists a source counts as having taken it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import ArgumentError, Fields
from kgmem.pipeline.consolidation import PassReport

__all__ = [
    "HistoryArgs",
    "RetryArgs",
    "consolidation_status",
    "pass_json",
    "retry_consolidation",
]

#: A pass id as kgmem makes one (32 hex digits).
PASS_ID = {"type": "string", "pattern": "^[0-9a-f]{32}$"}


def _at(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat()


def pass_json(report: PassReport) -> dict[str, Any]:
    """One pass as history shows it (``state`` is as of now: a running pass whose worker
    died is ``dead``)."""
    p, verdict = report.record, report.verdict
    return {
        "id": p.pass_id,
        "status": str(p.status.value),
        "state": verdict.condition.value,
        "state_reason": verdict.reason,
        "stage": None if p.stage is None else str(p.stage.value),
        "attempts": p.attempts,
        "recoveries": p.recoveries,
        "started_at": _at(p.started_at),
        "finished_at": _at(p.finished_at),
        "next_attempt_at": _at(verdict.next_attempt_at),
        "owner": None if p.owner is None else {"host": p.owner.host, "pid": p.owner.pid},
        "heartbeat_at": _at(p.heartbeat_at),
        "drafts": report.drafts,
        "sources": report.sources,
        "error": p.error,
        "error_stage": None if p.error_stage is None else str(p.error_stage.value),
        "abandon_reason": p.abandon_reason,
        "retried_as": p.retried_as,
    }


@dataclass(frozen=True)
class HistoryArgs:
    limit: int = 20

    @classmethod
    def parse(cls, raw: object) -> HistoryArgs:
        f = Fields(raw)
        args = cls(f.integer("limit", default=20, low=1, high=200))
        f.done()
        return args


def consolidation_status(
    services: Services, principal: Principal, args: HistoryArgs
) -> dict[str, Any]:
    """What waits for consolidation and the latest passes, newest first."""
    status = services.consolidation.status(principal.uid, args.limit)
    return {
        "model": status.model,
        "waiting_sources": status.waiting_sources,
        "waiting_drafts": status.waiting_drafts,
        "passes": [pass_json(r) for r in status.passes],
    }


@dataclass(frozen=True)
class RetryArgs:
    passes: tuple[str, ...] = ()

    @classmethod
    def parse(cls, raw: object) -> RetryArgs:
        f = Fields(raw)
        given = f.texts("passes", maximum=99, each=32) or ()
        f.done()
        for index, pass_id in enumerate(given):
            if len(pass_id) != 32 or any(c not in "0123456789abcdef" for c in pass_id):
                raise ArgumentError(f"passes[{index}]", "a pass id: 32 hex digits")
        return cls(tuple(dict.fromkeys(given)))


def retry_consolidation(
    services: Services, principal: Principal, args: RetryArgs
) -> dict[str, Any]:
    """Queue one pass over what the abandoned passes (``passes``, or every one not retried
    yet) held; the scheduler runs it (``kgmem consolidate --retry`` runs it at once)."""
    uid = principal.uid
    started = services.consolidation.retry(uid, args.passes)
    if started is None:
        return {"pass": None, "retried": [], "contributions": 0}
    passes = services.consolidation.checkpoints.passes(uid, limit=10**6)
    return {
        "pass": started,
        "retried": sorted(r.pass_id for r in passes if r.retried_as == started),
        "contributions": len(services.consolidation.checkpoints.contributions(uid, started)),
    }
