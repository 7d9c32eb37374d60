"""Background consolidation as a service: queue drafts, start passes, sweep, report status.

A pass covers what is ready for a user (see :class:`~kgmem.pipeline.contributions.Contributions`)
and runs the nine stages through the :class:`~kgmem.pipeline.runner.PassRunner`. The sweep
starts a pass for every user with ready contributions and no unfinished pass, then runs
every due pass (new, parked past its backoff, or left running by a worker that died: its
process gone, or its heartbeat stopped) with bounded concurrency — one pass per user at a
time, so a user's passes never decide against each other's uncommitted work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from rdflib import URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import PassHeld, PassNotDue, PassNotFound, RetryRefused
from kgmem.memory.model import DraftMemory
from kgmem.pipeline.checkpoints import Checkpoints
from kgmem.pipeline.contributions import Contributions, is_queued_draft
from kgmem.pipeline.liveness import Verdict
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.periodic import Periodic, PeriodicReport
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.processes import Processes
from kgmem.pipeline.records import PassRecord, PassStatus
from kgmem.pipeline.runner import PassRunner
from kgmem.pipeline.stages import AnyStage, StageName
from kgmem.pipeline.stages.assemble import AssembleStage
from kgmem.pipeline.stages.author import AuthorStage
from kgmem.pipeline.stages.classify import ClassifyStage
from kgmem.pipeline.stages.commit import PassCommitStage
from kgmem.pipeline.stages.extract import ExtractStage
from kgmem.pipeline.stages.ground import GroundStage
from kgmem.pipeline.stages.reconcile import ReconcileStage
from kgmem.pipeline.stages.resolve import ResolveStage
from kgmem.pipeline.stages.validate import ValidateStage
from kgmem.store import GraphKind, QueryRegistry, TripleStore, users_with

__all__ = ["Consolidation", "ConsolidationStatus", "PassReport", "default_stages"]

Progress = Callable[[str, StageName], None]


def default_stages(ports: PassPorts, contributions: Contributions) -> list[AnyStage]:
    """The nine stages, in order, built on the write path's own services."""
    return [
        ExtractStage(ports, contributions),
        GroundStage(ports),
        ClassifyStage(ports),
        ResolveStage(ports),
        AssembleStage(ports),
        ReconcileStage(ports),
        ValidateStage(ports),
        PassCommitStage(ports, contributions),
        AuthorStage(ports),
    ]


@dataclass(frozen=True)
class PassReport:
    """One pass as status and history show it: its record, what may happen to it now (a
    running pass whose worker died is *dead*, due at once), and what it holds."""

    record: PassRecord
    verdict: Verdict
    drafts: int  # queued drafts among its contributions
    sources: int  # conversation sources among them


@dataclass(frozen=True)
class ConsolidationStatus:
    uid: str
    model: str | None  # the memory group's model, None: raw transcripts wait
    waiting_sources: int  # not taken by any pass yet
    waiting_drafts: int
    passes: tuple[PassReport, ...]


class Consolidation:
    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        clock: Clock,
        settings: Settings,
        ports: PassPorts,
        *,
        stages: Sequence[AnyStage] | None = None,
        checkpoints: Checkpoints | None = None,
        backoff: timedelta = timedelta(seconds=30),
        heartbeat: timedelta = timedelta(seconds=10),
        processes: Processes | None = None,
    ) -> None:
        self._store, self._clock, self._settings, self._ports = store, clock, settings, ports
        self.contributions = Contributions(store, queries)
        self.checkpoints = checkpoints or Checkpoints(store, queries)
        self.runner = PassRunner(
            stages or default_stages(ports, self.contributions),
            self.checkpoints,
            clock,
            settings,
            backoff=backoff,
            heartbeat=heartbeat,
            processes=processes,
        )
        self._periodic = Periodic(store, queries, ports)

    # -- input -------------------------------------------------------------------------

    def queue(self, uid: str, payloads: Sequence[Mapping[str, Any] | DraftMemory]) -> list[URIRef]:
        """Hand drafts to the next pass instead of the foreground gate (checked the same
        way: a bad batch is refused before anything is written)."""
        drafts = self._ports.gate.parse(payloads)
        return self.contributions.queue(uid, drafts, self._clock.now())

    # -- passes ------------------------------------------------------------------------

    @property
    def has_model(self) -> bool:
        return self._ports.models.configured(ModelGroup.MEMORY)

    def start(self, uid: str, *, now: bool = False) -> str | None:
        """Start a pass over what is ready for ``uid`` (``now``: chats count as idle);
        None when nothing is ready or an unfinished pass of ``uid`` exists."""
        if self._unfinished(uid):
            return None
        idle = timedelta(0) if now else timedelta(seconds=self._settings.idle_threshold_seconds)
        ready = self.contributions.ready(uid, self._clock.now(), idle, model=self.has_model)
        if not ready:
            return None
        return self.runner.start(uid, ready)

    def run(self, uid: str, pass_id: str, progress: Progress | None = None) -> PassRecord:
        """Run one pass until it ends or parks."""
        try:
            record = self.runner.run(uid, pass_id, progress=progress)
        except (PassNotDue, PassHeld):  # not due after all, or another worker was first
            return self.checkpoints.record(uid, pass_id)
        if record.status is PassStatus.COMMITTED or record.stage is StageName.AUTHOR:
            self._refresh_ontology(uid, pass_id)
        return record

    def _refresh_ontology(self, uid: str, pass_id: str) -> None:
        """A committed schema delta changes the user's ontology: rebuild it. Otherwise the
        cached one only learns the terms the pass used (rebuilding reads the whole graph)."""
        committed = self.checkpoints.state(uid, pass_id).output(StageName.COMMIT)
        if not isinstance(committed, dict) or committed.get("delta") is not False:
            self._ports.ontology.invalidate(uid)
            return
        terms = committed.get("terms")
        if isinstance(terms, list):
            self._ports.ontology.note_terms(uid, [URIRef(str(t)) for t in terms])

    def retry(self, uid: str, pass_ids: Sequence[str] = ()) -> str | None:
        """Queue one pass over the contributions of ``uid``'s abandoned passes (``pass_ids``,
        or every one not retried yet) that still exist; each retried pass names it
        (``retried_as``). Returns its id, None when there is nothing to retry. Refused while
        another pass of ``uid`` is under way, or for a pass that is not abandoned or was
        retried already, and while no model is configured for the conversation sources they
        hold (a pass without one would take them unread)."""
        passes = self.checkpoints.passes(uid, limit=10**6)
        if any(not r.status.finished for r in passes):
            raise RetryRefused(None, "a consolidation pass is under way: retry once it ends")
        abandoned = {r.pass_id: r for r in passes if r.status is PassStatus.ABANDONED}
        for pass_id in pass_ids:
            found = abandoned.get(pass_id)
            if found is None:
                known = any(r.pass_id == pass_id for r in passes)
                if not known:
                    raise PassNotFound(uid, pass_id)
                raise RetryRefused(pass_id, "only an abandoned pass is retried")
            if found.retried_as is not None:
                raise RetryRefused(pass_id, f"retried already, as pass {found.retried_as}")
        chosen = list(pass_ids) or [p for p, r in abandoned.items() if r.retried_as is None]
        taken = dict.fromkeys(
            c
            for pass_id in chosen
            for c in self.checkpoints.contributions(uid, pass_id)
            if self.contributions.exists(uid, c)
        )
        if not taken:  # nothing chosen, or all of it forgotten since
            return None
        if not self.has_model and any(not is_queued_draft(c) for c in taken):
            # a pass with no model takes raw sources and extracts nothing from them
            raise RetryRefused(
                chosen[0] if len(chosen) == 1 else None,
                "no model is configured, and the passes hold conversation sources a retry "
                "would take without reading: configure model_memory (or model_primary) first",
            )
        return self.runner.start(uid, list(taken), retries=chosen)

    def consolidate(
        self, uid: str, *, now: bool = False, progress: Progress | None = None
    ) -> list[PassRecord]:
        """Run ``uid``'s due passes, then a new pass over what is ready (the foreground
        ``kgmem consolidate``)."""
        records = [self.run(r.uid, r.pass_id, progress) for r in self.runner.due(uid)]
        started = self.start(uid, now=now)
        if started is not None:
            records.append(self.run(uid, started, progress))
        return records

    def sweep(self) -> list[PassRecord]:
        """Start passes for every user with ready contributions, then run every due pass,
        at most ``concurrency`` users at a time."""
        for uid in self.users():
            self.start(uid)
        due: dict[str, list[str]] = {}
        for ref in self.runner.due():
            due.setdefault(ref.uid, []).append(ref.pass_id)
        if not due:
            return []

        def one_user(uid: str) -> list[PassRecord]:
            return [self.run(uid, pass_id) for pass_id in due[uid]]

        with ThreadPoolExecutor(max_workers=max(1, self._settings.concurrency)) as pool:
            results = list(pool.map(one_user, sorted(due)))
        return [record for records in results for record in records]

    def periodic(self, uid: str) -> PeriodicReport:
        """Periodic consolidation for ``uid``: repeated episodes become a routine, references
        sharing an entity a semantic fact (see :mod:`kgmem.pipeline.periodic`). Nothing while
        a pass of ``uid`` is unfinished, so it never decides against a pass's uncommitted work.
        """
        if self._unfinished(uid):
            return PeriodicReport(uid)
        return self._periodic.run(uid)

    # -- status ------------------------------------------------------------------------

    def users(self) -> list[str]:
        """Every user with sources or an ops graph (where queued drafts and passes live)."""
        return users_with(self._store.graphs(), GraphKind.SOURCES, GraphKind.OPS)

    def status(self, uid: str, limit: int = 20) -> ConsolidationStatus:
        spec = self._ports.models.spec(ModelGroup.MEMORY)
        waiting = self.contributions.waiting(uid)
        return ConsolidationStatus(
            uid,
            None if spec is None else spec.model,
            waiting["sources"],
            waiting["drafts"],
            tuple(self._report(r) for r in self.checkpoints.passes(uid, limit)),
        )

    def _report(self, record: PassRecord) -> PassReport:
        taken = self.checkpoints.contributions(record.uid, record.pass_id)
        drafts = sum(1 for c in taken if is_queued_draft(c))
        return PassReport(record, self.runner.verdict(record), drafts, len(taken) - drafts)

    def _unfinished(self, uid: str) -> bool:
        return any(not r.status.finished for r in self.checkpoints.passes(uid, limit=50))
