"""Whether a pass may run now, and why: the rules, apart from how processes are probed.

A running pass is *dead*, and any worker may take it over at its stage, as soon as either

- its owner process is gone: it ran on this host and its pid is free, exited or now
  another process's (another start time), or the host has rebooted since; or
- its owner stopped beating: ``nextAttemptAt`` (the last heartbeat plus a few heartbeat
  intervals) has passed. A record written without heartbeats carries the end of its
  15-minute lease there instead: the last resort, when nothing better is known.

A live owner's pass is never taken over, however long its stage runs (a slow model call
included): its heartbeat thread keeps ``nextAttemptAt`` ahead of the clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from kgmem.pipeline.processes import Processes
from kgmem.pipeline.records import PassRecord, PassStatus

__all__ = ["PassCondition", "Verdict", "judge"]


class PassCondition(StrEnum):
    """A pass's state as a person reads it: its status, with *running* split into a live
    owner's pass and a *dead* one that waits to be taken over."""

    QUEUED = "queued"
    RUNNING = "running"
    DEAD = "dead"
    PARKED = "parked"
    WAITING = "waiting"
    COMMITTED = "committed"
    ABANDONED = "abandoned"


_BY_STATUS = {
    PassStatus.QUEUED: PassCondition.QUEUED,
    PassStatus.PARKED: PassCondition.PARKED,
    PassStatus.WAITING: PassCondition.WAITING,
    PassStatus.COMMITTED: PassCondition.COMMITTED,
    PassStatus.ABANDONED: PassCondition.ABANDONED,
}


@dataclass(frozen=True)
class Verdict:
    """What a worker may do with a pass at the time it was judged."""

    condition: PassCondition
    #: When a worker may (next) run it: for a live running pass, when it is presumed dead
    #: if its owner falls silent; None for a pass that never runs again (or waits for a model)
    next_attempt_at: datetime | None
    #: Why a running pass is dead
    reason: str | None = None

    def may_run(self, now: datetime) -> bool:
        """A worker may claim the pass at ``now``."""
        runnable = self.condition in (
            PassCondition.QUEUED,
            PassCondition.PARKED,
            PassCondition.DEAD,
        )
        return runnable and self.next_attempt_at is not None and self.next_attempt_at <= now


def judge(record: PassRecord, now: datetime, processes: Processes) -> Verdict:
    """The pass ``record`` as of ``now``; ``processes`` tells whether its owner still runs."""
    due = record.next_attempt_at
    if record.status is not PassStatus.RUNNING:
        if record.status.finished or record.status is PassStatus.WAITING:
            due = None
        return Verdict(_BY_STATUS[record.status], due)
    owner = record.owner
    if owner is not None and processes.alive(owner) is False:
        at = now if due is None else min(due, now)
        return Verdict(PassCondition.DEAD, at, f"its process is gone ({owner.describe()})")
    if due is None or due <= now:
        if record.heartbeat_at is None:
            why = "its lease ran out and it never sent a heartbeat"
        else:
            why = f"no heartbeat since {record.heartbeat_at.isoformat()}"
        return Verdict(PassCondition.DEAD, now if due is None else due, why)
    return Verdict(PassCondition.RUNNING, due)
