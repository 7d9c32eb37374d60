"""Checkpoints: the consolidation record, stage and item banks, dirty set, outbox, history."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from pyshacl import validate
from rdflib import Graph, Literal, URIRef

from kgmem.errors import PassNotFound, StageFailed
from kgmem.pipeline import (
    Checkpoints,
    Claims,
    CommitPlan,
    ItemResult,
    LocalProcesses,
    PassRef,
    PassState,
    PassStatus,
    StageName,
    pass_iri,
)
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM, RDF, SDO
from tests.pipeline.fakes import CONTRIBUTIONS, T0, UID, entity_for

ROOT = Path(__file__).resolve().parents[2]
OPS = UserGraphs(UID).ops


@pytest.fixture
def ledger(store: OxigraphStore, queries: QueryRegistry) -> Checkpoints:
    return Checkpoints(store, queries)


def _due(ledger: Checkpoints, uid: str | None, now: datetime) -> list[PassRef]:
    return Claims(ledger.store, ledger.queries, LocalProcesses()).due(uid, now)


def _backoff(attempts: int) -> datetime:
    return T0 + timedelta(seconds=30 * attempts)


def _ops_graph(store: OxigraphStore) -> Graph:
    graph = Graph()
    for quad in store.quads(OPS):
        graph.add((quad.subject, quad.predicate, quad.object))
    return graph


def assert_conforms(store: OxigraphStore) -> None:
    """The ops graph passes shapes/core.ttl and uses only declared kgm: terms."""
    ontology = Graph().parse(ROOT / "ontologies" / "kgmem.ttl")
    shapes = Graph().parse(ROOT / "shapes" / "core.ttl")
    data = _ops_graph(store)
    conforms, _, text = validate(data, shacl_graph=shapes, ont_graph=ontology, inference="none")
    assert conforms, text
    declared = {s for s in ontology.subjects(RDF.type, None)}
    used = {t for triple in data for t in triple if str(t).startswith(str(KGM))}
    assert used - declared == set()


def test_create_records_a_queued_pass_due_now(ledger: Checkpoints) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)

    record = ledger.record(UID, "p1")
    assert record.status is PassStatus.QUEUED
    assert record.stage is StageName.EXTRACT
    assert (record.attempts, record.recoveries) == (0, 0)
    assert record.proposal == URIRef(f"urn:kgmem:user:{UID}:proposal:p1")
    assert record.iri == pass_iri(UID, "p1")
    assert ledger.contributions(UID, "p1") == CONTRIBUTIONS
    assert ledger.state(UID, "p1") == PassState.initial(CONTRIBUTIONS)
    assert _due(ledger, UID, T0) == [PassRef(UID, "p1")]
    assert _due(ledger, UID, T0 - timedelta(seconds=1)) == []


def test_record_of_an_unknown_pass_raises(ledger: Checkpoints) -> None:
    with pytest.raises(PassNotFound) as caught:
        ledger.record(UID, "nope")
    assert caught.value.pass_id == "nope"


def test_banked_items_round_trip_and_mark_dirty(ledger: Checkpoints) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.begin_stage(UID, "p1", StageName.EXTRACT, T0)
    result = ItemResult(value={"claims": [1, "x", None]}, dirty=(str(entity_for("a")),))

    ledger.bank_item(UID, "p1", StageName.EXTRACT, "a", result, T0)

    assert ledger.banked_items(UID, "p1", StageName.EXTRACT) == {"a": result}
    assert ledger.banked_items(UID, "p1", StageName.GROUND) == {}
    assert ledger.dirty_entities(UID) == {entity_for("a")}
    assert ledger.dirty_entities(UID, exclude="p1") == set()
    assert ledger.record(UID, "p1").status is PassStatus.RUNNING


def test_complete_stage_banks_state_and_folds_items(ledger: Checkpoints) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.begin_stage(UID, "p1", StageName.EXTRACT, T0)
    ledger.bank_item(UID, "p1", StageName.EXTRACT, "a", ItemResult(value=1), T0)
    state = PassState.initial(CONTRIBUTIONS).with_output(StageName.EXTRACT, {"a": 1})
    state = state.with_dirty([entity_for("b")])

    ledger.complete_stage(UID, "p1", StageName.EXTRACT, state, T0 + timedelta(seconds=5))

    assert ledger.state(UID, "p1") == state
    assert ledger.banked_items(UID, "p1", StageName.EXTRACT) == {}
    assert ledger.record(UID, "p1").stage is StageName.GROUND
    assert ledger.dirty_entities(UID) == {entity_for("b")}
    [checkpoint] = ledger.checkpoints(UID, "p1")
    assert checkpoint.stage is StageName.EXTRACT and checkpoint.completed
    assert checkpoint.finished_at == T0 + timedelta(seconds=5)


def test_park_counts_attempts_and_schedules_backoff(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.begin_stage(UID, "p1", StageName.CLASSIFY, T0)

    first = ledger.park(UID, "p1", StageName.CLASSIFY, ("ValueError", "bad"), T0, _backoff)
    second = ledger.park(UID, "p1", StageName.CLASSIFY, ("KeyError", "worse"), T0, _backoff)

    record = ledger.record(UID, "p1")
    assert (first, second) == (1, 2)
    assert record.status is PassStatus.PARKED
    assert record.attempts == 2
    assert record.error == "classify: KeyError: worse"
    assert (record.error_stage, record.error_type) == (StageName.CLASSIFY, "KeyError")
    assert record.next_attempt_at == T0 + timedelta(seconds=60)
    assert ledger.checkpoints(UID, "p1")[0].attempts == 2
    assert _due(ledger, UID, T0 + timedelta(seconds=59)) == []
    assert _due(ledger, UID, T0 + timedelta(seconds=60)) == [PassRef(UID, "p1")]
    assert_conforms(store)


def test_due_without_a_user_spans_users(ledger: Checkpoints) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.create("bob", "p2", (), T0 + timedelta(seconds=1))

    assert _due(ledger, None, T0 + timedelta(seconds=1)) == [
        PassRef(UID, "p1"),
        PassRef("bob", "p2"),
    ]
    assert _due(ledger, "bob", T0 + timedelta(seconds=1)) == [PassRef("bob", "p2")]


def test_passes_lists_history_newest_first(ledger: Checkpoints) -> None:
    for n in range(3):
        ledger.create(UID, f"p{n}", (), T0 + timedelta(minutes=n))
    ledger.finish(UID, "p0", PassStatus.ABANDONED, T0 + timedelta(minutes=5))

    history = ledger.passes(UID)

    assert [p.pass_id for p in history] == ["p2", "p1", "p0"]
    assert [p.pass_id for p in ledger.passes(UID, limit=2)] == ["p2", "p1"]
    assert history[2].status is PassStatus.ABANDONED
    assert history[2].finished_at == T0 + timedelta(minutes=5)
    assert ledger.passes("bob") == []


def _plan(uid: str) -> CommitPlan:
    kg = UserGraphs(uid).kg
    entity = entity_for("a")
    changes = Changeset.of([Quad(entity, RDF.type, SDO.Thing, kg)])
    return CommitPlan(changes, PassState.initial(CONTRIBUTIONS))


def test_commit_pass_writes_change_outbox_and_record_together(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    graphs = UserGraphs(UID)
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.bank_item(
        UID, "p1", StageName.EXTRACT, "a", ItemResult(dirty=(str(entity_for("a")),)), T0
    )
    store.commit(Changeset.of([Quad(entity_for("a"), RDF.type, KGM.Shell, graphs.proposal("p1"))]))
    ledger.begin_stage(UID, "p1", StageName.COMMIT, T0)

    ledger.commit_pass(UID, "p1", lambda: _plan(UID), T0)

    assert set(store.quads(graphs.kg)) == {Quad(entity_for("a"), RDF.type, SDO.Thing, graphs.kg)}
    assert store.count(graphs.proposal("p1")) == 0
    assert ledger.dirty_entities(UID) == set()
    assert ledger.record(UID, "p1").stage is StageName.AUTHOR
    [entry] = ledger.outbox(UID)
    assert entry.pass_iri == pass_iri(UID, "p1")
    assert (entry.added, entry.removed) == (1, 0)
    assert entry.graphs == {graphs.kg}
    assert entry.nodes == {entity_for("a")}
    assert_conforms(store)


def test_commit_pass_that_fails_to_plan_writes_nothing(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    before = set(store.quads())

    def broken() -> CommitPlan:
        raise RuntimeError("no plan")

    with pytest.raises(RuntimeError):
        ledger.commit_pass(UID, "p1", broken, T0)
    assert set(store.quads()) == before


def test_commit_pass_refuses_writes_outside_the_user_graphs(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    before = set(store.quads())
    other = UserGraphs("bob").kg
    plan = CommitPlan(
        Changeset.of([Quad(entity_for("a"), RDF.type, SDO.Thing, other)]), PassState()
    )

    with pytest.raises(StageFailed, match="outside its scope"):
        ledger.commit_pass(UID, "p1", lambda: plan, T0)
    assert set(store.quads()) == before


def test_restart_clears_checkpoints_and_counts_a_recovery(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.bank_item(
        UID, "p1", StageName.EXTRACT, "a", ItemResult(dirty=(str(entity_for("a")),)), T0
    )
    ledger.complete_stage(UID, "p1", StageName.EXTRACT, PassState(), T0)
    store.commit(
        Changeset.of([Quad(entity_for("a"), RDF.type, KGM.Shell, UserGraphs(UID).proposal("p1"))])
    )
    ledger.park(UID, "p1", StageName.GROUND, ("ValueError", "x"), T0, _backoff)

    ledger.restart(UID, "p1", CONTRIBUTIONS[:1], T0 + timedelta(minutes=1))

    record = ledger.record(UID, "p1")
    assert (record.status, record.stage) == (PassStatus.QUEUED, StageName.EXTRACT)
    assert (record.attempts, record.recoveries) == (0, 1)
    assert record.error == "ground: ValueError: x"
    assert ledger.checkpoints(UID, "p1") == []
    assert ledger.contributions(UID, "p1") == CONTRIBUTIONS[:1]
    assert ledger.dirty_entities(UID) == set()
    assert store.count(UserGraphs(UID).proposal("p1")) == 0
    assert _due(ledger, UID, T0 + timedelta(minutes=1)) == [PassRef(UID, "p1")]


def test_finish_strips_payloads_but_keeps_history(
    ledger: Checkpoints, store: OxigraphStore
) -> None:
    ledger.create(UID, "p1", CONTRIBUTIONS, T0)
    ledger.begin_stage(UID, "p1", StageName.EXTRACT, T0)
    ledger.bank_item(UID, "p1", StageName.EXTRACT, "a", ItemResult(value=1), T0)
    ledger.park(UID, "p1", StageName.EXTRACT, ("ValueError", "x"), T0, _backoff)

    ledger.finish(UID, "p1", PassStatus.ABANDONED, T0 + timedelta(minutes=1))

    [checkpoint] = ledger.checkpoints(UID, "p1")
    assert (checkpoint.stage, checkpoint.attempts, checkpoint.payload) == (
        StageName.EXTRACT,
        1,
        None,
    )
    assert ledger.banked_items(UID, "p1", StageName.EXTRACT) == {}
    assert _due(ledger, UID, T0 + timedelta(days=1)) == []
    assert not any(store.quads(OPS, None, KGM.itemKey, None))
    assert not any(store.quads(OPS, None, KGM.payload, Literal("1")))
    assert_conforms(store)
