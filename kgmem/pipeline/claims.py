"""Claiming a pass: which worker runs it, its heartbeat, and the fence on its writes.

A worker claims a pass before it runs it. One store transaction reads the record, judges it
(:func:`~kgmem.pipeline.liveness.judge`) and, when the pass may run, writes the worker's
process identity, a fresh claim token, the heartbeat and the time the worker is presumed
dead (``nextAttemptAt``)::

    <pass> kgm:passStatus kgm:passRunning ; kgm:claimToken "9f0c..." ;
        kgm:ownerHost "worker-1" ; kgm:ownerPid 4242 ; kgm:ownerStartTicks 81234 ;
        kgm:ownerBootId "5e1d..." ; kgm:heartbeatAt ... ; kgm:nextAttemptAt ... .

The transaction holds the store's write lock from the read to the commit (and the on-disk
store admits one process), so two workers that judge the same dead pass at once are
serialised: the second reads the first one's fresh claim and is refused (:class:`PassHeld`).
Every later write of the run is fenced by the token (:func:`fence`), so a worker that was
presumed dead and wakes up writes nothing. Owner and last heartbeat stay on the record
after the run, as history; the token goes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import PassHeld, PassLost, PassNotDue, PassNotFound
from kgmem.pipeline.edits import OpsEdit, at_literal
from kgmem.pipeline.liveness import PassCondition, Verdict, judge
from kgmem.pipeline.processes import Processes, ProcessIdentity
from kgmem.pipeline.records import PassRecord, PassRef, PassStatus, pass_iri, read_pass
from kgmem.store import (
    GraphKind,
    Query,
    QueryRegistry,
    Term,
    TripleStore,
    UserGraphs,
    parse_graph,
)
from kgmem.vocab import KGM

__all__ = ["Claim", "Claims", "fence"]


@dataclass(frozen=True)
class Claim:
    """One worker's hold on one pass, from its claim until it lets go."""

    uid: str
    pass_id: str
    token: str
    owner: ProcessIdentity


def fence(edit: OpsEdit, node: URIRef, token: str | None) -> None:
    """Refuse the edit unless the claim ``token`` still holds the pass (None: unfenced)."""
    if token is not None and edit.values(node, KGM.claimToken) != [Literal(token)]:
        raise PassLost(str(node).rsplit("/", 1)[-1])


class Claims:
    """Which passes may run, and the claims, heartbeats and releases of them, judged with
    ``processes``."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, processes: Processes) -> None:
        self._store, self._queries, self._processes = store, queries, processes

    @property
    def processes(self) -> Processes:
        return self._processes

    def due(self, uid: str | None, now: datetime) -> list[PassRef]:
        """Passes a worker may claim at ``now``, for one user or for all: queued, parked past
        their backoff, and running but dead (owner process gone, or silent too long)."""
        refs = self._refs(self._queries["pipeline/due"], uid, {"now": at_literal(now)})
        for ref in self._refs(self._queries["pipeline/running"], uid, {}):
            if ref not in refs and self.verdict(ref, now).condition is PassCondition.DEAD:
                refs.append(ref)
        return refs

    def verdict(self, ref: PassRef | PassRecord, now: datetime) -> Verdict:
        """What a worker may do with the pass at ``now``."""
        record = ref if isinstance(ref, PassRecord) else self._record(ref.uid, ref.pass_id)
        return judge(record, now, self._processes)

    def claim(self, uid: str, pass_id: str, at: datetime, alive_for: timedelta) -> Claim | None:
        """Take the pass for this process, presumed alive until ``at + alive_for`` unless it
        beats again. None when the pass never runs again (finished, or waiting for a model);
        :class:`PassNotDue` before its backoff, :class:`PassHeld` while a live owner runs it."""
        node = pass_iri(uid, pass_id)
        with self._store.transaction() as tx:
            record = self._record(uid, pass_id)
            verdict = judge(record, at, self._processes)
            if verdict.next_attempt_at is None:
                return None
            if verdict.condition is PassCondition.RUNNING:
                raise PassHeld(pass_id, _owner_of(record), verdict.next_attempt_at)
            if not verdict.may_run(at):
                raise PassNotDue(pass_id, verdict.next_attempt_at)
            claim = Claim(uid, pass_id, secrets.token_hex(16), self._processes.current())
            edit = OpsEdit(self._store, UserGraphs(uid).ops)
            edit.set(node, KGM.passStatus, PassStatus.RUNNING.iri)
            edit.set(node, KGM.claimToken, Literal(claim.token))
            _write_owner(edit, node, claim.owner)
            edit.set(node, KGM.heartbeatAt, at_literal(at))
            edit.set(node, KGM.nextAttemptAt, at_literal(at + alive_for))
            edit.apply(tx)
        return claim

    def beat(self, claim: Claim, at: datetime, alive_for: timedelta) -> bool:
        """Record a heartbeat of a running pass; False once the claim no longer holds it."""
        node = pass_iri(claim.uid, claim.pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(claim.uid).ops)
            if edit.values(node, KGM.claimToken) != [Literal(claim.token)]:
                return False
            if edit.values(node, KGM.passStatus) == [PassStatus.RUNNING.iri]:
                # parked (between a failure and the release) keeps its backoff time
                edit.set(node, KGM.heartbeatAt, at_literal(at))
                edit.set(node, KGM.nextAttemptAt, at_literal(at + alive_for))
                edit.apply(tx)
        return True

    def release(self, claim: Claim, at: datetime) -> None:
        """Let go of the pass. A pass still running here was interrupted (an exception that
        is not a stage failure, a shutdown): it is queued again at its stage, due at once."""
        node = pass_iri(claim.uid, claim.pass_id)
        with self._store.transaction() as tx:
            edit = OpsEdit(self._store, UserGraphs(claim.uid).ops)
            if edit.values(node, KGM.claimToken) != [Literal(claim.token)]:
                return  # taken over: the pass is another worker's now
            edit.set(node, KGM.claimToken, None)
            if edit.values(node, KGM.passStatus) == [PassStatus.RUNNING.iri]:
                edit.set(node, KGM.passStatus, PassStatus.QUEUED.iri)
                edit.set(node, KGM.nextAttemptAt, at_literal(at))
            edit.apply(tx)

    def _refs(self, query: Query, uid: str | None, bindings: dict[str, Term]) -> list[PassRef]:
        if uid is not None:
            bindings["graph"] = UserGraphs(uid).ops
        refs = []
        for row in self._store.select(query, bindings):
            parsed = parse_graph(str(row["graph"]))
            if parsed.kind is GraphKind.OPS and parsed.uid is not None:
                refs.append(PassRef(parsed.uid, str(row["pass"]).rsplit("/", 1)[-1]))
        return refs

    def _record(self, uid: str, pass_id: str) -> PassRecord:
        bindings = {"graph": UserGraphs(uid).ops, "pass": pass_iri(uid, pass_id)}
        rows = self._store.select(self._queries["pipeline/passes"], bindings)
        if not rows:
            raise PassNotFound(uid, pass_id)
        return read_pass(uid, pass_id, rows[0])


def _owner_of(record: PassRecord) -> str:
    return "an unknown worker" if record.owner is None else record.owner.describe()


def _write_owner(edit: OpsEdit, node: URIRef, owner: ProcessIdentity) -> None:
    edit.set(node, KGM.ownerHost, Literal(owner.host))
    edit.set(node, KGM.ownerPid, Literal(owner.pid, datatype=XSD.integer))
    started = None if owner.started is None else Literal(owner.started, datatype=XSD.integer)
    edit.set(node, KGM.ownerStartTicks, started)
    edit.set(node, KGM.ownerBootId, None if owner.boot is None else Literal(owner.boot))
