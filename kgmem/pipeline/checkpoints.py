"""Consolidation records and checkpoints in a user's ops graph.

Per pass (``https://w3id.org/kgmem/user/{uid}/pass/{id}``)::

    <pass> a kgm:ConsolidationPass ; kgm:passStatus kgm:passParked ;
        kgm:currentStage kgm:groundStage ; kgm:attempts 1 ; kgm:recoveries 0 ;
        kgm:error "ground: ValueError: ..." ; kgm:errorStage kgm:groundStage ;
        kgm:errorType "ValueError" ; kgm:startedAt ... ; kgm:nextAttemptAt ... ;
        kgm:proposalGraph <urn:kgmem:user:{uid}:proposal:{id}> ;
        kgm:contribution <source> ... ; kgm:dirtyEntity <entity> ... ;
        kgm:claimToken "..." ; kgm:ownerHost "..." ; kgm:ownerPid 4242 ; kgm:heartbeatAt ... .
    <pass#ground> a kgm:StageCheckpoint ; kgm:checkpointOf <pass> ; kgm:stage kgm:groundStage ;
        kgm:attempts 1 ; kgm:startedAt ... ; kgm:finishedAt ... ; kgm:payload "{PassState}" .
    <pass#extract-{sha}> a kgm:StageCheckpoint ; kgm:checkpointOf <pass> ;
        kgm:stage kgm:extractStage ; kgm:itemKey "..." ; kgm:payload "{ItemResult}" .

Every write is one store commit; reads go through ``queries/pipeline/*.rq``. A write given
the ``token`` of a claim (see :mod:`kgmem.pipeline.claims`) is refused with
:class:`~kgmem.errors.PassLost` unless that claim still holds the pass.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import PassNotFound, StageFailed
from kgmem.pipeline.claims import fence
from kgmem.pipeline.edits import OpsEdit, at_literal
from kgmem.pipeline.outbox import read_outbox, write_outbox
from kgmem.pipeline.records import (
    CheckpointRecord,
    OutboxRecord,
    PassRecord,
    PassStatus,
    pass_iri,
    read_checkpoint,
    read_pass,
    stage_iri,
)
from kgmem.pipeline.stages import CommitPlan, ItemKey, ItemResult, PassState, StageName
from kgmem.store import (
    Changeset,
    QueryRegistry,
    Term,
    TripleStore,
    UserGraphs,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Checkpoints", "pass_iri", "stage_iri"]


def _int(value: int) -> Literal:
    return Literal(value, datatype=XSD.integer)


class Checkpoints:
    """Reads and writes consolidation records in users' ops graphs."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    @property
    def store(self) -> TripleStore:
        return self._store

    @property
    def queries(self) -> QueryRegistry:
        return self._queries

    # -- reads ---------------------------------------------------------------------------

    def record(self, uid: str, pass_id: str) -> PassRecord:
        bindings = {"graph": UserGraphs(uid).ops, "pass": pass_iri(uid, pass_id)}
        rows = self._store.select(self._queries["pipeline/passes"], bindings)
        if not rows:
            raise PassNotFound(uid, pass_id)
        return read_pass(uid, pass_id, rows[0])

    def passes(self, uid: str, limit: int = 50) -> list[PassRecord]:
        """The user's passes, newest first: history and status."""
        rows = self._store.select(self._queries["pipeline/passes"], {"graph": UserGraphs(uid).ops})
        return [read_pass(uid, str(r["pass"]).rsplit("/", 1)[-1], r) for r in rows[:limit]]

    def contributions(self, uid: str, pass_id: str) -> tuple[URIRef, ...]:
        bindings = {"graph": UserGraphs(uid).ops, "pass": pass_iri(uid, pass_id)}
        rows = self._store.select(self._queries["pipeline/contributions"], bindings)
        return tuple(URIRef(str(r["contribution"])) for r in rows)

    def checkpoints(self, uid: str, pass_id: str) -> list[CheckpointRecord]:
        """The pass's stage checkpoints, in stage order."""
        bindings = {"graph": UserGraphs(uid).ops, "pass": pass_iri(uid, pass_id)}
        rows = self._store.select(self._queries["pipeline/checkpoints"], bindings)
        return sorted((read_checkpoint(r) for r in rows), key=lambda c: c.stage.order)

    def state(self, uid: str, pass_id: str) -> PassState:
        """The state after the last completed stage, or the initial state."""
        done = [c for c in self.checkpoints(uid, pass_id) if c.payload is not None]
        if done and done[-1].payload is not None:
            return PassState.from_json(done[-1].payload)
        return PassState.initial(self.contributions(uid, pass_id))

    def banked_items(self, uid: str, pass_id: str, stage: StageName) -> dict[ItemKey, ItemResult]:
        bindings = {
            "graph": UserGraphs(uid).ops,
            "pass": pass_iri(uid, pass_id),
            "stage": stage.iri,
        }
        rows = self._store.select(self._queries["pipeline/banked_items"], bindings)
        return {str(r["key"]): ItemResult.from_json(str(r["payload"])) for r in rows}

    def dirty_entities(self, uid: str, *, exclude: str | None = None) -> set[URIRef]:
        """Entities touched by the user's unfinished passes (but ``exclude``)."""
        rows = self._store.select(
            self._queries["pipeline/dirty_entities"], {"graph": UserGraphs(uid).ops}
        )
        skip = None if exclude is None else pass_iri(uid, exclude)
        return {URIRef(str(r["entity"])) for r in rows if r["pass"] != skip}

    def outbox(self, uid: str) -> list[OutboxRecord]:
        rows = self._store.select(self._queries["pipeline/outbox"], {"graph": UserGraphs(uid).ops})
        return read_outbox(rows)

    # -- writes --------------------------------------------------------------------------

    def create(
        self,
        uid: str,
        pass_id: str,
        contributions: Iterable[URIRef],
        at: datetime,
        *,
        retries: Iterable[str] = (),
    ) -> None:
        """Record a queued pass, due at ``at`` (taking again the contributions of the
        abandoned passes ``retries``, which say so)."""
        graphs, node = UserGraphs(uid), pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, graphs.ops)
            for retried in retries:
                edit.set(pass_iri(uid, retried), KGM.retriedAs, node)
            edit.add(node, RDF.type, KGM.ConsolidationPass)
            edit.add(node, KGM.startedAt, at_literal(at))
            edit.add(node, KGM.proposalGraph, graphs.proposal(pass_id))
            self._reset(edit, node, contributions, at, recoveries=0)
            edit.apply(tx)

    def begin_stage(
        self, uid: str, pass_id: str, stage: StageName, at: datetime, *, token: str | None = None
    ) -> None:
        """Mark ``stage`` running (when its worker is presumed gone is the claim's business)."""
        node = pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            fence(edit, node, token)
            edit.set(node, KGM.passStatus, PassStatus.RUNNING.iri)
            edit.set(node, KGM.currentStage, stage.iri)
            checkpoint = stage_iri(node, stage)
            if not edit.values(checkpoint, RDF.type):
                edit.add(checkpoint, RDF.type, KGM.StageCheckpoint)
                edit.add(checkpoint, KGM.checkpointOf, node)
                edit.add(checkpoint, KGM.stage, stage.iri)
                edit.add(checkpoint, KGM.attempts, _int(0))
            edit.set(checkpoint, KGM.startedAt, at_literal(at))
            edit.apply(tx)

    def bank_item(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        item: ItemKey,
        result: ItemResult,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        """Bank one finished item and mark the entities it touched dirty."""
        node = pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            fence(edit, node, token)
            checkpoint = stage_iri(node, stage, item)
            edit.forget(checkpoint)
            edit.add(checkpoint, RDF.type, KGM.StageCheckpoint)
            edit.add(checkpoint, KGM.checkpointOf, node)
            edit.add(checkpoint, KGM.stage, stage.iri)
            edit.add(checkpoint, KGM.itemKey, Literal(item))
            edit.add(checkpoint, KGM.payload, Literal(result.to_json()))
            edit.add(checkpoint, KGM.finishedAt, at_literal(at))
            for entity in result.dirty:
                edit.add(node, KGM.dirtyEntity, URIRef(entity))
            edit.apply(tx)

    def complete_stage(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        state: PassState,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        """Bank ``stage``'s resulting state and move to the next stage (or finish committed)."""
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            fence(edit, pass_iri(uid, pass_id), token)
            self._complete(edit, uid, pass_id, stage, state, at)
            edit.apply(tx)

    def commit_pass(
        self,
        uid: str,
        pass_id: str,
        build: Callable[[], CommitPlan],
        at: datetime,
        *,
        token: str | None = None,
    ) -> PassState:
        """Build the commit stage's plan and apply it with the record, the checkpoint, the
        outbox entry, the dropped proposal and the cleared dirty set: one store commit."""
        graphs, node = UserGraphs(uid), pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, graphs.ops)
            fence(edit, node, token)  # in the commit's own transaction: never two commits
            plan = build()
            _check_scope(graphs, plan.changes)
            self._complete(edit, uid, pass_id, StageName.COMMIT, plan.state, at)
            edit.set(node, KGM.dirtyEntity, None)
            write_outbox(edit, node, plan.changes, at)
            edit.drop_graph(graphs.proposal(pass_id))
            edit.apply(tx, plan.changes)
        return plan.state

    def park(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        failure: tuple[str, str],
        at: datetime,
        backoff: Callable[[int], datetime],
        *,
        token: str | None = None,
    ) -> int:
        """Park the pass at ``stage`` with ``failure`` (error type, message); one more failed
        attempt, due again at ``backoff(attempts)``. Returns the stage's failed attempts."""
        node, (error_type, message) = pass_iri(uid, pass_id), failure
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            fence(edit, node, token)
            attempts = _count(edit.values(node, KGM.attempts)) + 1
            edit.set(node, KGM.passStatus, PassStatus.PARKED.iri)
            edit.set(node, KGM.currentStage, stage.iri)
            edit.set(node, KGM.attempts, _int(attempts))
            edit.set(node, KGM.error, Literal(f"{stage.value}: {error_type}: {message}"))
            edit.set(node, KGM.errorStage, stage.iri)
            edit.set(node, KGM.errorType, Literal(error_type))
            edit.set(node, KGM.nextAttemptAt, at_literal(backoff(attempts)))
            checkpoint = stage_iri(node, stage)
            if edit.values(checkpoint, RDF.type):
                edit.set(checkpoint, KGM.attempts, _int(attempts))
            edit.apply(tx)
        return attempts

    def restart(
        self,
        uid: str,
        pass_id: str,
        contributions: Iterable[URIRef],
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        """Rebuild the pass from ``contributions``: every checkpoint and the proposal go, the
        pass is queued at extract with a fresh attempt budget (the last error is kept)."""
        graphs, node = UserGraphs(uid), pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, graphs.ops)
            fence(edit, node, token)
            recoveries = _count(edit.values(node, KGM.recoveries)) + 1
            for checkpoint in edit.subjects(KGM.checkpointOf, node):
                edit.forget(checkpoint)
            edit.drop_graph(graphs.proposal(pass_id))
            self._reset(edit, node, contributions, at, recoveries=recoveries)
            edit.apply(tx)

    def finish(
        self,
        uid: str,
        pass_id: str,
        status: PassStatus,
        at: datetime,
        *,
        token: str | None = None,
        reason: str | None = None,
    ) -> None:
        """End the pass (abandoned, with the ``reason`` why, or committed without its last
        stage)."""
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            fence(edit, pass_iri(uid, pass_id), token)
            if reason is not None:
                edit.set(pass_iri(uid, pass_id), KGM.abandonReason, Literal(reason))
            self._finish(edit, uid, pass_id, status, at)
            edit.apply(tx)

    # -- shared edits --------------------------------------------------------------------

    def _reset(
        self,
        edit: OpsEdit,
        node: URIRef,
        contributions: Iterable[URIRef],
        at: datetime,
        *,
        recoveries: int,
    ) -> None:
        edit.set(node, KGM.passStatus, PassStatus.QUEUED.iri)
        edit.set(node, KGM.currentStage, StageName.EXTRACT.iri)
        edit.set(node, KGM.attempts, _int(0))
        edit.set(node, KGM.recoveries, _int(recoveries))
        edit.set(node, KGM.nextAttemptAt, at_literal(at))
        edit.set(node, KGM.dirtyEntity, None)
        edit.set(node, KGM.contribution, None)
        for contribution in contributions:
            edit.add(node, KGM.contribution, contribution)

    def _complete(
        self,
        edit: OpsEdit,
        uid: str,
        pass_id: str,
        stage: StageName,
        state: PassState,
        at: datetime,
    ) -> None:
        node = pass_iri(uid, pass_id)
        checkpoint = stage_iri(node, stage)
        edit.set(checkpoint, KGM.payload, Literal(state.to_json()))
        edit.set(checkpoint, KGM.finishedAt, at_literal(at))
        for item in edit.subjects(KGM.checkpointOf, node):
            if edit.values(item, KGM.itemKey) and stage.iri in edit.values(item, KGM.stage):
                edit.forget(item)  # folded into the payload
        # kgm:attempts counts tries: the failed ones (each park) and this one, which ended the
        # stage. The pass's budget counts only failures, so its next stage starts at 0; the
        # last stage's tries stay on the finished pass (it ran once: 1, never 0).
        tries = _count(edit.values(node, KGM.attempts)) + 1
        edit.set(checkpoint, KGM.attempts, _int(tries))
        following = stage.following
        if following is None:
            edit.set(node, KGM.attempts, _int(tries))
            self._finish(edit, uid, pass_id, PassStatus.COMMITTED, at, keep=checkpoint)
            return
        edit.set(node, KGM.attempts, _int(0))
        edit.set(node, KGM.currentStage, following.iri)
        if stage.order < StageName.COMMIT.order:
            for entity in state.dirty:
                edit.add(node, KGM.dirtyEntity, URIRef(entity))

    def _finish(
        self,
        edit: OpsEdit,
        uid: str,
        pass_id: str,
        status: PassStatus,
        at: datetime,
        *,
        keep: URIRef | None = None,
    ) -> None:
        node = pass_iri(uid, pass_id)
        edit.set(node, KGM.passStatus, status.iri)
        edit.set(node, KGM.finishedAt, at_literal(at))
        edit.set(node, KGM.nextAttemptAt, None)
        edit.set(node, KGM.dirtyEntity, None)
        # History keeps each stage's times and attempts, and the state of the last stage
        # that finished (it holds every stage's output: what was dropped, and why).
        if keep is None:
            stages = [
                c
                for c in edit.subjects(KGM.checkpointOf, node)
                if edit.values(c, KGM.payload) and not edit.values(c, KGM.itemKey)
            ]
            keep = max(stages, key=lambda c: _order(edit.values(c, KGM.stage)), default=None)
        for checkpoint in edit.subjects(KGM.checkpointOf, node):
            if edit.values(checkpoint, KGM.itemKey):
                edit.forget(checkpoint)
            elif checkpoint != keep:
                edit.set(checkpoint, KGM.payload, None)
        edit.drop_graph(UserGraphs(uid).proposal(pass_id))


def _count(values: list[Term]) -> int:
    return sum(int(str(v)) for v in values)


def _order(stages: list[Term]) -> int:
    return max((StageName.from_iri(str(s)).order for s in stages), default=0)


def _check_scope(graphs: UserGraphs, changes: Changeset) -> None:
    """The commit may write the user's kg, schema, quarantine and ops graphs, nothing else."""
    allowed = {graphs.kg, graphs.schema, graphs.quarantine, graphs.ops}
    touched = {q.graph for q in (*changes.add, *changes.remove)} | set(changes.drop_graphs)
    outside = sorted(touched - allowed)
    if outside:
        raise StageFailed(StageName.COMMIT.value, f"the plan writes outside its scope: {outside}")
