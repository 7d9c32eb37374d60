"""Claims: one worker holds a pass, its writes are fenced, and taking over a dead pass is
atomic (racing workers: exactly one wins). Real stores, real processes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from kgmem.errors import PassHeld, PassLost, PassNotDue
from kgmem.pipeline import (
    Checkpoints,
    Claim,
    Claims,
    ItemResult,
    LocalProcesses,
    PassRef,
    PassStatus,
    StageName,
)
from kgmem.store import OxigraphStore, QueryRegistry
from tests.pipeline.fakes import CONTRIBUTIONS, T0, UID
from tests.pipeline.owners import ClaimingAs, identity_of, sleeper
from tests.pipeline.test_checkpoints import assert_conforms

ALIVE_FOR = timedelta(seconds=40)


@pytest.fixture
def ledger(store: OxigraphStore, queries: QueryRegistry) -> Checkpoints:
    ledger = Checkpoints(store, queries)
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    return ledger


@pytest.fixture
def claims(store: OxigraphStore, queries: QueryRegistry) -> Claims:
    return Claims(store, queries, LocalProcesses())


def test_a_claim_records_owner_token_heartbeat_and_when_it_is_presumed_dead(
    ledger: Checkpoints, claims: Claims, store: OxigraphStore
) -> None:
    claim = claims.claim(UID, "p1", T0, ALIVE_FOR)

    assert claim is not None and claim.owner == LocalProcesses().current()
    record = ledger.record(UID, "p1")
    assert record.status is PassStatus.RUNNING
    assert (record.owner, record.claim) == (claim.owner, claim.token)
    assert record.heartbeat_at == T0 and record.next_attempt_at == T0 + ALIVE_FOR
    assert claims.due(UID, T0 + ALIVE_FOR - timedelta(seconds=1)) == []
    assert_conforms(store)


def test_a_live_owners_pass_is_refused_to_everyone_else(
    ledger: Checkpoints, claims: Claims, store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        owner = identity_of(child)
        assert Claims(store, queries, ClaimingAs(owner)).claim(UID, "p1", T0, ALIVE_FOR)
        at = T0 + timedelta(seconds=30)
        with pytest.raises(PassHeld) as held:
            claims.claim(UID, "p1", at, ALIVE_FOR)
        assert held.value.owner == owner.describe()
        assert held.value.presumed_dead_at == T0 + ALIVE_FOR
        assert claims.due(UID, at) == []
        assert ledger.record(UID, "p1").owner == owner


def test_a_dead_owners_pass_is_due_and_claimed_at_once(
    ledger: Checkpoints, claims: Claims, store: OxigraphStore, queries: QueryRegistry
) -> None:
    with sleeper() as child:
        owner = identity_of(child)
        assert Claims(store, queries, ClaimingAs(owner)).claim(UID, "p1", T0, ALIVE_FOR)
        ledger.begin_stage(UID, "p1", StageName.CLASSIFY, T0)
    at = T0 + timedelta(seconds=1)  # far inside its heartbeat bound, and its lease
    assert claims.due(UID, at) == [PassRef(UID, "p1")]
    assert claims.due(None, at) == [PassRef(UID, "p1")]

    taken = claims.claim(UID, "p1", at, ALIVE_FOR)

    assert taken is not None and taken.owner == LocalProcesses().current()
    record = ledger.record(UID, "p1")
    assert (record.owner, record.claim, record.stage) == (
        taken.owner,
        taken.token,
        StageName.CLASSIFY,
    )


def test_a_parked_pass_is_not_claimed_before_its_backoff(
    ledger: Checkpoints, claims: Claims
) -> None:
    ledger.park(UID, "p1", StageName.GROUND, ("E", "x"), T0, lambda _: T0 + timedelta(seconds=30))
    with pytest.raises(PassNotDue):
        claims.claim(UID, "p1", T0 + timedelta(seconds=29), ALIVE_FOR)
    assert claims.claim(UID, "p1", T0 + timedelta(seconds=30), ALIVE_FOR) is not None


def test_a_finished_pass_is_never_claimed(ledger: Checkpoints, claims: Claims) -> None:
    ledger.finish(UID, "p1", PassStatus.ABANDONED, T0)
    assert claims.claim(UID, "p1", T0 + timedelta(days=1), ALIVE_FOR) is None
    assert ledger.record(UID, "p1").claim is None


def _presumed_dead(claims: Claims) -> tuple[Claim, Claim]:
    """A claim that fell silent, and the claim that took the pass over from it."""
    first = claims.claim(UID, "p1", T0, ALIVE_FOR)
    second = claims.claim(UID, "p1", T0 + ALIVE_FOR, ALIVE_FOR)
    assert first is not None and second is not None and first.token != second.token
    return first, second


def test_a_worker_that_was_taken_over_writes_nothing(ledger: Checkpoints, claims: Claims) -> None:
    first, second = _presumed_dead(claims)
    at = T0 + ALIVE_FOR
    item = ItemResult(value=1)

    with pytest.raises(PassLost):
        ledger.bank_item(UID, "p1", StageName.EXTRACT, "a", item, at, token=first.token)
    with pytest.raises(PassLost):
        ledger.begin_stage(UID, "p1", StageName.GROUND, at, token=first.token)
    assert not claims.beat(first, at, ALIVE_FOR)
    claims.release(first, at)  # lets go of nothing: the pass is the second claim's

    assert ledger.banked_items(UID, "p1", StageName.EXTRACT) == {}
    assert ledger.record(UID, "p1").claim == second.token
    ledger.bank_item(UID, "p1", StageName.EXTRACT, "a", item, at, token=second.token)
    assert ledger.banked_items(UID, "p1", StageName.EXTRACT) == {"a": item}


def test_a_beat_moves_the_presumed_death_of_a_running_pass_only(
    ledger: Checkpoints, claims: Claims
) -> None:
    claim = claims.claim(UID, "p1", T0, ALIVE_FOR)
    assert claim is not None
    assert claims.beat(claim, T0 + timedelta(seconds=30), ALIVE_FOR)
    record = ledger.record(UID, "p1")
    assert record.heartbeat_at == T0 + timedelta(seconds=30)
    assert record.next_attempt_at == T0 + timedelta(seconds=70)

    backoff = T0 + timedelta(minutes=2)
    ledger.park(UID, "p1", StageName.GROUND, ("E", "x"), T0, lambda _: backoff, token=claim.token)
    assert claims.beat(claim, T0 + timedelta(seconds=40), ALIVE_FOR)  # still ours...
    assert ledger.record(UID, "p1").next_attempt_at == backoff  # ...but parked keeps backoff


def test_release_requeues_an_interrupted_pass_at_once_and_keeps_its_owner(
    ledger: Checkpoints, claims: Claims, store: OxigraphStore
) -> None:
    claim = claims.claim(UID, "p1", T0, ALIVE_FOR)
    assert claim is not None
    ledger.begin_stage(UID, "p1", StageName.RESOLVE, T0, token=claim.token)

    claims.release(claim, T0 + timedelta(seconds=5))

    record = ledger.record(UID, "p1")
    assert (record.status, record.stage, record.claim) == (
        PassStatus.QUEUED,
        StageName.RESOLVE,
        None,
    )
    assert record.owner == claim.owner and record.heartbeat_at == T0  # history
    assert claims.due(UID, T0 + timedelta(seconds=5)) == [PassRef(UID, "p1")]
    assert_conforms(store)


@pytest.mark.parametrize("round_", range(5))
def test_racing_workers_take_a_dead_pass_over_exactly_once(
    ledger: Checkpoints, store: OxigraphStore, queries: QueryRegistry, round_: int
) -> None:
    with sleeper() as child:
        dead = Claims(store, queries, ClaimingAs(identity_of(child)))
        assert dead.claim(UID, "p1", T0, ALIVE_FOR) is not None
    workers = 8
    start = threading.Barrier(workers)
    won: list[Claim] = []
    refused: list[PassHeld] = []

    def take() -> None:
        claims = Claims(store, queries, LocalProcesses())
        start.wait()
        try:
            claim = claims.claim(UID, "p1", T0 + timedelta(seconds=1), ALIVE_FOR)
        except PassHeld as exc:
            refused.append(exc)
        else:
            assert claim is not None
            won.append(claim)

    threads = [threading.Thread(target=take) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert len(won) == 1 and len(refused) == workers - 1
    assert ledger.record(UID, "p1").claim == won[0].token
