"""Memory records round-trip through the store exactly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Literal, URIRef

from kgmem.memory.model import Authority, MemoryKind, MemoryStatus, SourceType, SupportKind
from kgmem.memory.records import (
    ClaimRecord,
    EvidenceRecord,
    MemoryRecord,
    read_memory,
    record_quads,
)
from kgmem.store import Changeset, NodeKind, OxigraphStore, UserGraphs, new_node
from kgmem.vocab import SDO

KG = UserGraphs("alice").kg
WHEN = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)


def full_record() -> MemoryRecord:
    m = new_node("alice", NodeKind.MEMORY)
    ann, acme = new_node("alice", NodeKind.ENTITY), new_node("alice", NodeKind.ENTITY)
    return MemoryRecord(
        iri=m,
        kind=MemoryKind.EPISODIC,
        status=MemoryStatus.PENDING,
        title="Met Ann at Acme",
        confidence=0.625,
        recorded_at=WHEN,
        excerpt="One line.",
        body="Longer\nbody.",
        tags=("met", "work"),
        strength=1.5,
        pinned=True,
        domain="people",
        about=(acme, ann),
        claims=(
            ClaimRecord(new_node("alice", NodeKind.CLAIM), ann, SDO.worksFor, acme),
            ClaimRecord(
                new_node("alice", NodeKind.CLAIM),
                ann,
                SDO.birthDate,
                value=Literal("1990-01-01"),
                negated=True,
            ),
        ),
        evidence=(
            EvidenceRecord(
                new_node("alice", NodeKind.EVIDENCE),
                new_node("alice", NodeKind.MESSAGE),
                SourceType.USER_MESSAGE,
                SupportKind.EXPLICIT,
                Authority.USER,
                "Ann works at Acme",
                (4, 21),
                agent_reported=True,
                confirms=new_node("alice", NodeKind.MESSAGE),
            ),
        ),
        occurred_at=WHEN - timedelta(days=1),
        ttl=timedelta(days=30),
        expires_at=WHEN + timedelta(days=29),
        valid_from=WHEN - timedelta(days=400),
        retired_at=None,
        last_used_at=WHEN,
        use_count=3,
        rating=-1,
        source_refs=("doc-1",),
        supersedes=(new_node("alice", NodeKind.MEMORY),),
    )


def test_full_record_round_trips(store: OxigraphStore) -> None:
    record = full_record()
    store.commit(Changeset.of(record_quads(record, KG)))
    assert read_memory(store, record.iri, [UserGraphs("alice").quarantine, KG]) == record


def test_missing_memory_reads_none(store: OxigraphStore) -> None:
    assert read_memory(store, URIRef("urn:nope"), [KG]) is None


@settings(max_examples=40, deadline=None)
@given(
    title=st.text(min_size=1, max_size=40).filter(lambda t: t.strip() == t and t),
    confidence=st.floats(0, 1),
    tags=st.lists(st.text(min_size=1, max_size=8), max_size=5, unique=True),
    kind=st.sampled_from(list(MemoryKind)),
    status=st.sampled_from(list(MemoryStatus)),
)
def test_records_round_trip(
    title: str, confidence: float, tags: list[str], kind: MemoryKind, status: MemoryStatus
) -> None:
    store = OxigraphStore()
    record = MemoryRecord(
        new_node("alice", NodeKind.MEMORY),
        kind,
        status,
        title,
        confidence,
        WHEN,
        tags=tuple(sorted(tags)),
    )
    store.commit(Changeset.of(record_quads(record, KG)))
    assert read_memory(store, record.iri, [KG]) == record


def test_a_procedures_steps_keep_their_order_and_its_triggers_round_trip(
    store: OxigraphStore,
) -> None:
    # more than nine steps, so an order by text ("step10" < "step2") would show
    steps = tuple(f"step number {n}" for n in (3, 1, 2, 10, 7, 4, 9, 5, 8, 6, 11))
    record = MemoryRecord(
        new_node("alice", NodeKind.MEMORY),
        MemoryKind.PROCEDURAL,
        MemoryStatus.ACTIVE,
        "Release",
        0.9,
        WHEN,
        steps=steps,
        triggers=("when a release is due", "after a merge to main"),
    )
    store.commit(Changeset.of(record_quads(record, KG)))
    back = read_memory(store, record.iri, [KG])
    assert back == record
    assert back is not None and back.steps == steps
    assert back.triggers == ("after a merge to main", "when a release is due")
