"""The pass runner: composes the nine stages; implements none of them.

A pass runs from its record's current stage. Each stage runs inside :func:`stage_boundary`;
a failure parks the pass at that stage with exponential backoff, and the next run resumes
there (an item stage skips the items it already banked). When a stage has failed
``settings.stage_attempts`` times, the pass is rebuilt from its raw contributions once
(through the caller's ``recover``) and abandoned after that; once the commit has happened,
a spent budget on a later stage ends the pass committed, with the error kept.

Crash safety: every step is one store commit (begin a stage, bank an item, complete a stage,
park, commit), so a worker killed anywhere leaves a record a fresh runner resumes from.

Liveness: a run claims its pass first (:mod:`kgmem.pipeline.claims`: owner process and a
claim token, refused while a live worker holds it) and a background thread beats for it every
``heartbeat`` while it runs. A thread, not the item boundaries: one model call may take
minutes, and a stage without items (resolve, assemble, author) may make many; beats at
boundaries would need a bound that long, and a dead pass would wait as long. A pass whose
owner process is gone, or which missed :data:`MISSED_HEARTBEATS` beats, is due at once
(:func:`~kgmem.pipeline.liveness.judge`) and resumed at its stage. A run that ends in any
other way lets go of its pass (an interrupted one is queued again at its stage).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from functools import partial

from rdflib import URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.errors import KgmemError, PassLost, StageOrderError
from kgmem.pipeline.boundary import StageFailure, stage_boundary
from kgmem.pipeline.checkpoints import Checkpoints
from kgmem.pipeline.claims import Claim, Claims
from kgmem.pipeline.heartbeat import Heartbeat
from kgmem.pipeline.liveness import Verdict
from kgmem.pipeline.processes import LocalProcesses, Processes
from kgmem.pipeline.records import PassRecord, PassRef, PassStatus, pass_iri
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
    "MISSED_HEARTBEATS",
    "PassRunner",
    "RecoverFn",
    "rebuild_from_contributions",
]

_log = logging.getLogger(__name__)

#: Heartbeats a running pass may miss before it is presumed dead (whatever its process)
MISSED_HEARTBEATS = 4

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
        heartbeat: timedelta = timedelta(seconds=10),
        processes: Processes | None = None,
    ) -> None:
        self._stages = _by_name(stages)
        self._checkpoints, self._clock, self._settings = checkpoints, clock, settings
        self._recover, self._backoff, self._heartbeat = recover, backoff, heartbeat
        self._claims = Claims(checkpoints.store, checkpoints.queries, processes or LocalProcesses())

    def start(
        self, uid: str, contributions: Sequence[URIRef], *, retries: Sequence[str] = ()
    ) -> str:
        """Queue a pass over ``contributions`` (those of the abandoned passes ``retries``);
        returns its id (its proposal graph is ``urn:kgmem:user:{uid}:proposal:{id}``)."""
        pass_id = secrets.token_hex(16)
        self._checkpoints.create(uid, pass_id, contributions, self._clock.now(), retries=retries)
        return pass_id

    def due(self, uid: str | None = None) -> list[PassRef]:
        """Passes to run now: queued, parked past their backoff, or running but dead (their
        owner process gone, or silent past its heartbeats)."""
        return self._claims.due(uid, self._clock.now())

    def verdict(self, ref: PassRef | PassRecord) -> Verdict:
        """What a worker may do with the pass now (:func:`~kgmem.pipeline.liveness.judge`)."""
        return self._claims.verdict(ref, self._clock.now())

    def run(
        self,
        uid: str,
        pass_id: str,
        *,
        progress: Callable[[str, StageName], None] | None = None,
    ) -> PassRecord:
        """Claim the pass and run it from its current stage until it ends or parks; returns
        its record. ``progress(pass_id, stage)`` is told each stage as it starts. Raises
        :class:`~kgmem.errors.PassNotDue` before its backoff and
        :class:`~kgmem.errors.PassHeld` while a live worker runs it."""
        alive_for = self._heartbeat * MISSED_HEARTBEATS
        claim = self._claims.claim(uid, pass_id, self._clock.now(), alive_for)
        if claim is None:
            return self._checkpoints.record(uid, pass_id)
        try:
            with Heartbeat(self._claims, claim, self._clock, self._heartbeat, alive_for):
                self._run_claimed(claim, progress)
        except PassLost:
            _log.warning("pass %s of %s was taken over; this worker stops", pass_id, uid)
        finally:
            self._release(claim)
        return self._checkpoints.record(uid, pass_id)

    def _run_claimed(self, claim: Claim, progress: Callable[[str, StageName], None] | None) -> None:
        record = self._checkpoints.record(claim.uid, claim.pass_id)
        if record.attempts >= self._settings.stage_attempts:
            self._exhausted(record, claim)  # a worker stopped between parking and this
            return
        state = self._checkpoints.state(claim.uid, claim.pass_id)
        stage: StageName | None = record.stage or StageName.EXTRACT
        attempt = record.attempts
        while stage is not None:
            if progress is not None:
                progress(claim.pass_id, stage)
            ok, state = self._run_stage(claim, stage, state, attempt)
            if not ok:
                self._after_failure(claim)
                return
            stage, attempt = stage.following, 0

    def _release(self, claim: Claim) -> None:
        try:
            self._claims.release(claim, self._clock.now())
        except KgmemError:  # the store went away: the pass is found dead and resumed later
            _log.exception("could not release pass %s of %s", claim.pass_id, claim.uid)

    # -- one stage -----------------------------------------------------------------------

    def _run_stage(
        self, claim: Claim, name: StageName, state: PassState, attempt: int
    ) -> tuple[bool, PassState]:
        uid, pass_id = claim.uid, claim.pass_id
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
        self._checkpoints.begin_stage(uid, pass_id, name, self._clock.now(), token=claim.token)
        result = state
        with stage_boundary(name, partial(self._park, claim)) as outcome:
            result = self._execute(self._stages[name], ctx, state, claim.token)
        return outcome.failure is None, result

    def _execute(
        self, stage: AnyStage, ctx: PassContext, state: PassState, token: str
    ) -> PassState:
        uid, pass_id = ctx.uid, ctx.pass_id
        if isinstance(stage, CommitStage):
            plan = partial(stage.plan, ctx, state)
            now = self._clock.now()
            return self._checkpoints.commit_pass(uid, pass_id, plan, now, token=token)
        if isinstance(stage, ItemStage):
            after = state.with_items(stage.name, self._run_items(stage, ctx, state, token))
        else:
            after = stage.run(ctx, state)
        now = self._clock.now()
        self._checkpoints.complete_stage(uid, pass_id, stage.name, after, now, token=token)
        return after

    def _run_items(
        self, stage: ItemStage, ctx: PassContext, state: PassState, token: str
    ) -> dict[ItemKey, ItemResult]:
        banked = self._checkpoints.banked_items(ctx.uid, ctx.pass_id, stage.name)
        results: dict[ItemKey, ItemResult] = {}
        for item in stage.items(ctx, state):
            if item not in banked:
                banked[item] = stage.run_item(ctx, state, item)
                self._checkpoints.bank_item(
                    ctx.uid,
                    ctx.pass_id,
                    stage.name,
                    item,
                    banked[item],
                    self._clock.now(),
                    token=token,
                )
            results[item] = banked[item]
        return results

    # -- failures ------------------------------------------------------------------------

    def _park(self, claim: Claim, failure: StageFailure) -> None:
        now = self._clock.now()

        def next_attempt(attempts: int) -> timedelta:
            return self._backoff * (1 << (attempts - 1))

        self._checkpoints.park(
            claim.uid,
            claim.pass_id,
            failure.stage,
            (failure.error_type, failure.message),
            now,
            lambda attempts: now + next_attempt(attempts),
            token=claim.token,
        )

    def _after_failure(self, claim: Claim) -> None:
        record = self._checkpoints.record(claim.uid, claim.pass_id)
        if record.attempts >= self._settings.stage_attempts:
            self._exhausted(record, claim)

    def _exhausted(self, record: PassRecord, claim: Claim) -> None:
        uid, pass_id, now, token = record.uid, record.pass_id, self._clock.now(), claim.token
        if record.stage is not None and record.stage.order > StageName.COMMIT.order:
            # The change is in the user's graph; what is left (pages) is redone later.
            self._checkpoints.finish(uid, pass_id, PassStatus.COMMITTED, now, token=token)
            return
        rebuild = None
        if record.recoveries < MAX_RECOVERIES:
            rebuild = self._recover(record, self._checkpoints.contributions(uid, pass_id))
        if rebuild is None:
            self._checkpoints.finish(
                uid, pass_id, PassStatus.ABANDONED, now, token=token, reason=_why(record)
            )
        else:
            self._checkpoints.restart(uid, pass_id, rebuild, now, token=token)


def _why(record: PassRecord) -> str:
    """Why an exhausted pass is abandoned, as history shows it."""
    stage = record.error_stage or record.stage
    where = f"stage {stage.value}" if stage is not None else "a stage"
    rebuilt = record.recoveries
    after = (
        f", after {rebuilt} rebuild{'s' if rebuilt != 1 else ''} from its contributions"
        if rebuilt
        else " and its recovery gave up"
        if record.recoveries < MAX_RECOVERIES
        else ""
    )
    return (
        f"{where} failed {record.attempts} time{'s' if record.attempts != 1 else ''}{after}; "
        f"last error: {record.error or 'none recorded'}"
    )


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
