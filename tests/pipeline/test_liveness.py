"""Liveness: which process owns a pass, and when a running pass is dead. Real processes (a
sleeping child, killed or not) on this host; records on a real store."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import replace
from datetime import timedelta

import pytest

from kgmem.pipeline import (
    Checkpoints,
    Claims,
    LocalProcesses,
    PassCondition,
    PassRecord,
    PassStatus,
    StageName,
    judge,
    pass_iri,
)
from kgmem.pipeline.edits import OpsEdit, at_literal
from kgmem.store import OxigraphStore, QueryRegistry, UserGraphs
from kgmem.vocab import KGM
from tests.pipeline.fakes import CONTRIBUTIONS, T0, UID
from tests.pipeline.owners import ClaimingAs, identity_of, sleeper

ALIVE_FOR = timedelta(seconds=40)


def test_this_process_is_alive_and_named_by_pid_start_time_host_and_boot() -> None:
    processes = LocalProcesses()
    me = processes.current()
    assert me.pid == os.getpid() and me.started is not None and me.boot
    assert processes.alive(me) is True
    assert me.describe().startswith(f"pid {me.pid} on ")


def test_a_killed_and_reaped_process_is_gone() -> None:
    processes = LocalProcesses()
    with sleeper() as child:
        owner = identity_of(child)
        assert processes.alive(owner) is True
    assert processes.alive(owner) is False  # killed and reaped on the way out


def test_a_killed_process_its_parent_has_not_reaped_is_gone() -> None:
    processes = LocalProcesses()
    with sleeper() as child:
        owner = identity_of(child)
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while processes.alive(owner) and time.monotonic() < deadline:
            time.sleep(0.01)
        # a zombie: /proc still lists its pid and start time, but it runs no more
        assert (LocalProcesses().identity(child.pid) or owner).started == owner.started
        assert processes.alive(owner) is False


def test_a_reused_pid_with_another_start_time_is_not_the_owner() -> None:
    with sleeper() as child:
        owner = identity_of(child)
        assert owner.started is not None
        reused = replace(owner, started=owner.started + 1)
        assert LocalProcesses().alive(reused) is False


def test_a_process_of_an_earlier_boot_is_gone() -> None:
    me = LocalProcesses().current()
    assert LocalProcesses().alive(replace(me, boot="00000000-earlier-boot")) is False


def test_another_hosts_process_cannot_be_judged_here() -> None:
    me = LocalProcesses().current()
    assert LocalProcesses().alive(replace(me, host=f"not-{me.host}")) is None


# -- running passes judged -----------------------------------------------------------------


def _claimed_by(store: OxigraphStore, queries: QueryRegistry, owner: Claims) -> PassRecord:
    ledger = Checkpoints(store, queries)
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    assert owner.claim(UID, "p1", T0, ALIVE_FOR) is not None
    ledger.begin_stage(UID, "p1", StageName.RESOLVE, T0)
    return ledger.record(UID, "p1")


def test_a_live_owner_with_a_fresh_heartbeat_keeps_its_pass(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        record = _claimed_by(store, queries, Claims(store, queries, ClaimingAs(identity_of(child))))
        verdict = judge(record, T0 + ALIVE_FOR - timedelta(seconds=1), LocalProcesses())
        assert verdict.condition is PassCondition.RUNNING and verdict.reason is None
        assert verdict.next_attempt_at == T0 + ALIVE_FOR  # presumed dead then, if silent
        assert not verdict.may_run(T0 + ALIVE_FOR - timedelta(seconds=1))


def test_a_pass_whose_process_is_gone_is_dead_at_once(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        owner = identity_of(child)
        record = _claimed_by(store, queries, Claims(store, queries, ClaimingAs(owner)))
    verdict = judge(record, T0 + timedelta(seconds=1), LocalProcesses())
    assert verdict.condition is PassCondition.DEAD
    assert verdict.reason == f"its process is gone ({owner.describe()})"
    assert verdict.next_attempt_at == T0 + timedelta(seconds=1)  # now, not at ALIVE_FOR
    assert verdict.may_run(T0 + timedelta(seconds=1))


def test_a_pass_whose_pid_was_reused_is_dead_at_once(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        owner = identity_of(child)
        assert owner.started is not None
        impostor = replace(owner, started=owner.started - 1)  # the pid's earlier holder
        record = _claimed_by(store, queries, Claims(store, queries, ClaimingAs(impostor)))
        verdict = judge(record, T0, LocalProcesses())
        assert verdict.condition is PassCondition.DEAD and verdict.may_run(T0)


def test_a_stale_heartbeat_makes_a_pass_dead_though_its_process_lives(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        owner = Claims(store, queries, ClaimingAs(identity_of(child)))
        record = _claimed_by(store, queries, owner)
        verdict = judge(record, T0 + ALIVE_FOR, LocalProcesses())
        assert verdict.condition is PassCondition.DEAD
        assert verdict.reason == f"no heartbeat since {T0.isoformat()}"


def test_another_hosts_pass_is_judged_by_its_heartbeat_alone(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    me = LocalProcesses().current()
    elsewhere = replace(me, host=f"not-{me.host}", pid=1)
    record = _claimed_by(store, queries, Claims(store, queries, ClaimingAs(elsewhere)))
    early, late = T0 + timedelta(seconds=39), T0 + ALIVE_FOR
    assert judge(record, early, LocalProcesses()).condition is PassCondition.RUNNING
    assert judge(record, late, LocalProcesses()).condition is PassCondition.DEAD


def test_a_record_written_without_heartbeats_waits_for_its_lease(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    """A pass an older kgmem left running: no owner, no heartbeat, the end of its 15-minute
    lease in nextAttemptAt. Nothing better is known, so the lease decides (the last resort)."""
    ledger = Checkpoints(store, queries)
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    node = pass_iri(UID, "p1")
    with store.transaction() as tx:
        edit = OpsEdit(store, UserGraphs(UID).ops)
        edit.set(node, KGM.passStatus, PassStatus.RUNNING.iri)
        edit.set(node, KGM.nextAttemptAt, at_literal(T0 + timedelta(minutes=15)))
        edit.apply(tx)
    record = ledger.record(UID, "p1")
    assert record.owner is None and record.heartbeat_at is None
    before = judge(record, T0 + timedelta(minutes=14), LocalProcesses())
    after = judge(record, T0 + timedelta(minutes=15), LocalProcesses())
    assert before.condition is PassCondition.RUNNING
    assert after.condition is PassCondition.DEAD
    assert after.reason == "its lease ran out and it never sent a heartbeat"


@pytest.mark.parametrize(
    ("status", "condition"),
    [("QUEUED", PassCondition.QUEUED), ("PARKED", PassCondition.PARKED)],
)
def test_passes_that_are_not_running_are_judged_by_their_status(
    store: OxigraphStore, queries: QueryRegistry, status: str, condition: PassCondition
) -> None:
    ledger = Checkpoints(store, queries)
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    if status == "PARKED":
        ledger.park(
            UID, "p1", StageName.GROUND, ("E", "x"), T0, lambda _: T0 + timedelta(seconds=30)
        )
    verdict = judge(ledger.record(UID, "p1"), T0, LocalProcesses())
    assert verdict.condition is condition
    assert verdict.may_run(T0) is (status == "QUEUED")  # parked: after its backoff
