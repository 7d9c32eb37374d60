"""The pass runner: composes the nine stages; implements none of them.

A pass runs from its record's current stage. Each stage runs inside :func:`stage_boundary`;
a failure parks the pass at that stage with exponential backoff, and the next run resumes
there (an item stage skips the items it already banked). When a stage has failed
``settings.stage_attempts`` times, the pass is rebuilt from its raw contributions once
(through the caller's ``recover``) and abandoned after that; once the commit has happened,
a spent budget on a later stage ends the pass committed, with the error kept.

Crash safety: every step is one store commit (begin a stage, bank an item, complete a stage,
park, commit), so a worker killed anywhere leaves a record a fresh runner resumes from.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from functools import partial

from rdflib import URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import PassNotDue, StageOrderError
from kgmem.pipeline.boundary import StageFailure, stage_boundary
from kgmem.pipeline.checkpoints import Checkpoints, pass_iri
from kgmem.pipeline.records import PassRecord, PassRef, PassStatus
from kgmem.pipeline.stages import (
    AnyStage,
    CommitStage,
    ItemKey,
    ItemResult,
    ItemStage,
    PassContext,
    PassState,
    Stage,
    StageName,
)

__all__ = [
    "MAX_RECOVERIES",
    "PassRunner",
    "RecoverFn",
    "rebuild_from_contributions",
]

#: How often a pass whose budget is spent is rebuilt from its contributions before it is
#: abandoned.
MAX_RECOVERIES = 1

#: Given the exhausted pass and its contributions, the contributions to rebuild it from
#: (re-read, or with a poisonous one left out), or None to abandon it.
RecoverFn = Callable[[PassRecord, tuple[URIRef, ...]], Sequence[URIRef] | None]


def rebuild_from_contributions(
    record: PassRecord, contributions: tuple[URIRef, ...]
) -> Sequence[URIRef] | None:
    """The default recovery: run the same contributions again from extract."""
    return contributions


class PassRunner:
    def __init__(
        self,
        stages: Sequence[AnyStage],
        checkpoints: Checkpoints,
        clock: Clock,
        settings: Settings,
        *,
        recover: RecoverFn = rebuild_from_contributions,
        backoff: timedelta = timedelta(seconds=30),
        lease: timedelta = timedelta(minutes=15),
    ) -> None:
        self._stages = _by_name(stages)
        self._checkpoints, self._clock, self._settings = checkpoints, clock, settings
        self._recover, self._backoff, self._lease = recover, backoff, lease

    def start(self, uid: str, contributions: Sequence[URIRef]) -> str:
        """Queue a pass over ``contributions``; returns its id (its proposal graph is
        ``urn:kgmem:user:{uid}:proposal:{id}``)."""
        pass_id = secrets.token_hex(16)
        self._checkpoints.create(uid, pass_id, contributions, self._clock.now())
        return pass_id

    def due(self, uid: str | None = None) -> list[PassRef]:
        """Passes to run now: queued, parked past their backoff, or running past their lease."""
        return self._checkpoints.due(uid, self._clock.now())

    def run(
        self,
        uid: str,
        pass_id: str,
        *,
        progress: Callable[[str, StageName], None] | None = None,
    ) -> PassRecord:
        """Run the pass from its current stage until it ends or parks; returns its record.
        ``progress(pass_id, stage)`` is told each stage as it starts."""
        record = self._checkpoints.record(uid, pass_id)
        if record.status.finished or record.status is PassStatus.WAITING:
            return record
        due_at = record.next_attempt_at
        if record.status is PassStatus.PARKED and due_at and due_at > self._clock.now():
            raise PassNotDue(pass_id, due_at)
        if record.attempts >= self._settings.stage_attempts:
            return self._exhausted(record)  # a worker stopped between parking and this
        state = self._checkpoints.state(uid, pass_id)
        stage: StageName | None = record.stage or StageName.EXTRACT
        attempt = record.attempts
        while stage is not None:
            if progress is not None:
                progress(pass_id, stage)
            ok, state = self._run_stage(uid, pass_id, stage, state, attempt)
            if not ok:
                return self._after_failure(uid, pass_id)
            stage, attempt = stage.following, 0
        return self._checkpoints.record(uid, pass_id)

    # -- one stage -----------------------------------------------------------------------

    def _run_stage(
        self, uid: str, pass_id: str, name: StageName, state: PassState, attempt: int
    ) -> tuple[bool, PassState]:
        ctx = PassContext(
            uid=uid,
            pass_id=pass_id,
            pass_iri=pass_iri(uid, pass_id),
            store=self._checkpoints.store,
            queries=self._checkpoints.queries,
            clock=self._clock,
            settings=self._settings,
            attempt=attempt,
        )
        now = self._clock.now()
        self._checkpoints.begin_stage(uid, pass_id, name, now, now + self._lease)
        result = state
        with stage_boundary(name, partial(self._park, uid, pass_id)) as outcome:
            result = self._execute(self._stages[name], ctx, state)
        return outcome.failure is None, result

    def _execute(self, stage: AnyStage, ctx: PassContext, state: PassState) -> PassState:
        uid, pass_id = ctx.uid, ctx.pass_id
        if isinstance(stage, CommitStage):
            plan = partial(stage.plan, ctx, state)
            return self._checkpoints.commit_pass(uid, pass_id, plan, self._clock.now())
        if isinstance(stage, ItemStage):
            after = state.with_items(stage.name, self._run_items(stage, ctx, state))
        else:
            after = stage.run(ctx, state)
        self._checkpoints.complete_stage(uid, pass_id, stage.name, after, self._clock.now())
        return after

    def _run_items(
        self, stage: ItemStage, ctx: PassContext, state: PassState
    ) -> dict[ItemKey, ItemResult]:
        banked = self._checkpoints.banked_items(ctx.uid, ctx.pass_id, stage.name)
        results: dict[ItemKey, ItemResult] = {}
        for item in stage.items(ctx, state):
            if item not in banked:
                banked[item] = stage.run_item(ctx, state, item)
                self._checkpoints.bank_item(
                    ctx.uid, ctx.pass_id, stage.name, item, banked[item], self._clock.now()
                )
            results[item] = banked[item]
        return results

    # -- failures ------------------------------------------------------------------------

    def _park(self, uid: str, pass_id: str, failure: StageFailure) -> None:
        now = self._clock.now()

        def next_attempt(attempts: int) -> timedelta:
            return self._backoff * (1 << (attempts - 1))

        self._checkpoints.park(
            uid,
            pass_id,
            failure.stage,
            (failure.error_type, failure.message),
            now,
            lambda attempts: now + next_attempt(attempts),
        )

    def _after_failure(self, uid: str, pass_id: str) -> PassRecord:
        record = self._checkpoints.record(uid, pass_id)
        if record.attempts < self._settings.stage_attempts:
            return record
        return self._exhausted(record)

    def _exhausted(self, record: PassRecord) -> PassRecord:
        uid, pass_id, now = record.uid, record.pass_id, self._clock.now()
        if record.stage is not None and record.stage.order > StageName.COMMIT.order:
            # The change is in the user's graph; what is left (pages) is redone later.
            self._checkpoints.finish(uid, pass_id, PassStatus.COMMITTED, now)
            return self._checkpoints.record(uid, pass_id)
        rebuild = None
        if record.recoveries < MAX_RECOVERIES:
            rebuild = self._recover(record, self._checkpoints.contributions(uid, pass_id))
        if rebuild is None:
            self._checkpoints.finish(uid, pass_id, PassStatus.ABANDONED, now)
        else:
            self._checkpoints.restart(uid, pass_id, rebuild, now)
        return self._checkpoints.record(uid, pass_id)


def _by_name(stages: Sequence[AnyStage]) -> Mapping[StageName, AnyStage]:
    names = [stage.name for stage in stages]
    if names != list(StageName):
        expected = ", ".join(StageName)
        raise StageOrderError(f"expected exactly {expected}, in order; got {names}")
    for stage in stages:
        is_commit = isinstance(stage, CommitStage)
        if is_commit != (stage.name is StageName.COMMIT):
            raise StageOrderError(f"{stage.name}: only the commit stage plans a commit")
        if not is_commit and not isinstance(stage, ItemStage | Stage):
            raise StageOrderError(f"{stage.name}: neither run() nor items()/run_item()")
    return {stage.name: stage for stage in stages}
