"""Resets as jobs: a reset runs on a thread of its own while the server answers, and its job
says which step it is at, what it dropped and what waits for consolidation again.

Jobs live in the server's memory (the latest :data:`KEPT` of them): a restart forgets them.
A reset interrupted by a crash loses nothing it should keep: its drop is one store commit
(done or not), and the projections and the vault are levelled with the store at the next
start. One reset of a user runs at a time; another user's runs beside it.
"""

from __future__ import annotations

import logging
import secrets
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from kgmem.api.services import RESET_STEPS, Services
from kgmem.errors import JobNotFound, ResetRunning

__all__ = ["KEPT", "WARNING", "ResetJob", "ResetJobs"]

log = logging.getLogger("kgmem.api")

KEPT = 100  # finished jobs kept to be asked about

WARNING = (
    "A reset cannot be undone: it drops every memory, entity, page and decision derived for "
    "the user (their chats, notes and task records stay, and are consolidated again). Take a "
    "backup first (kgmem backup, or POST /api/admin/backup)."
)


@dataclass
class ResetJob:
    id: str
    user: str
    requested_by: str
    started_at: datetime
    status: str = "running"  # running | done | failed
    step: str = "starting"
    steps_done: int = 0
    steps_total: int = len(RESET_STEPS)
    finished_at: datetime | None = None
    report: dict[str, Any] | None = None
    error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "id": self.id,
                "user": self.user,
                "requested_by": self.requested_by,
                "status": self.status,
                "step": self.step,
                "steps_done": self.steps_done,
                "steps_total": self.steps_total,
                "started_at": self.started_at.isoformat(),
                "finished_at": None if self.finished_at is None else self.finished_at.isoformat(),
                "report": self.report,
                "error": self.error,
            }


class ResetJobs:
    def __init__(self, services: Services) -> None:
        self._services = services
        self._jobs: dict[str, ResetJob] = {}
        self._running: dict[str, Future[None]] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="kgmem-reset")

    def start(self, uid: str, requested_by: str) -> ResetJob:
        """Start resetting ``uid`` now; :class:`ResetRunning` while a reset of theirs runs."""
        with self._lock:
            for job in self._jobs.values():
                if job.user == uid and job.status == "running":
                    raise ResetRunning(uid, job.id)
            job = ResetJob(secrets.token_hex(8), uid, requested_by, self._services.clock.now())
            self._jobs[job.id] = job
            self._forget_old()
            self._running[job.id] = self._pool.submit(self._run, job)
        return job

    def get(self, job_id: str) -> ResetJob:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        return job

    def wait(self, job_id: str, timeout: float = 600.0) -> ResetJob:
        """The job once it ended (tests and the CLI; the routes answer at once)."""
        job = self.get(job_id)
        with self._lock:
            running = self._running.get(job_id)
        if running is not None:
            running.result(timeout)
        return job

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _run(self, job: ResetJob) -> None:
        def progress(step: str) -> None:
            with job._lock:
                job.steps_done = RESET_STEPS.index(step)
                job.step = step

        try:
            report = self._services.reset_user(job.user, progress)
        except Exception as exc:  # the job says so; the server goes on
            log.exception("reset of %s failed", job.user)
            with job._lock:
                job.status, job.error = "failed", f"{type(exc).__name__}: {exc}"
                job.finished_at = self._services.clock.now()
            return
        with job._lock:
            job.status, job.step, job.steps_done = "done", "done", len(RESET_STEPS)
            job.report = {
                "graphs": list(report.graphs),
                "triples": report.triples,
                "sources_waiting": report.sources,
                "queued_drafts_kept": report.queued,
            }
            job.finished_at = self._services.clock.now()

    def _forget_old(self) -> None:
        ended = [j for j in self._jobs.values() if j.status != "running"]
        for job in ended:
            self._running.pop(job.id, None)
        for job in sorted(ended, key=lambda j: j.started_at)[: max(0, len(ended) - KEPT)]:
            del self._jobs[job.id]
