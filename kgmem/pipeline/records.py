"""What the ops graph says about passes: typed records read back from the named queries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256

from rdflib import Literal, URIRef

from kgmem.pipeline.processes import ProcessIdentity
from kgmem.pipeline.stages import StageName
from kgmem.store import NodeKind, Row, Term, node_iri
from kgmem.vocab import VocabEnum

__all__ = [
    "CheckpointRecord",
    "OutboxRecord",
    "PassRecord",
    "PassRef",
    "PassStatus",
    "datetime_of",
    "pass_iri",
    "read_checkpoint",
    "read_pass",
    "stage_iri",
]


def pass_iri(uid: str, pass_id: str) -> URIRef:
    return node_iri(uid, NodeKind.PASS, pass_id)


def stage_iri(pass_node: URIRef, stage: StageName, item: str | None = None) -> URIRef:
    """The checkpoint node of a stage, or of one item (by its key) of it."""
    if item is None:
        return URIRef(f"{pass_node}#{stage.value}")
    return URIRef(f"{pass_node}#{stage.value}-{sha256(item.encode()).hexdigest()[:32]}")


class PassStatus(VocabEnum):
    QUEUED = "passQueued"
    RUNNING = "passRunning"
    PARKED = "passParked"
    WAITING = "passWaiting"
    COMMITTED = "passCommitted"
    ABANDONED = "passAbandoned"

    @property
    def finished(self) -> bool:
        return self in (PassStatus.COMMITTED, PassStatus.ABANDONED)


@dataclass(frozen=True)
class PassRef:
    """Which pass of which user: what the scheduler hands a worker."""

    uid: str
    pass_id: str


@dataclass(frozen=True)
class PassRecord:
    """One consolidation record: where the pass is, how often its stage failed, and why."""

    uid: str
    pass_id: str
    iri: URIRef
    status: PassStatus
    stage: StageName | None
    attempts: int
    recoveries: int
    started_at: datetime
    proposal: URIRef
    finished_at: datetime | None = None
    next_attempt_at: datetime | None = None
    error: str | None = None
    error_stage: StageName | None = None
    error_type: str | None = None
    owner: ProcessIdentity | None = None  # the process that last claimed the pass
    claim: str | None = None  # that claim's token, while it holds the pass
    heartbeat_at: datetime | None = None  # the owner's last sign of life
    abandon_reason: str | None = None  # why an abandoned pass was given up
    retried_as: str | None = None  # the pass that took its contributions again (its id)


@dataclass(frozen=True)
class CheckpointRecord:
    """One stage of one pass: tries that failed, when it ran, and (once done) its payload."""

    stage: StageName
    attempts: int
    started_at: datetime | None
    finished_at: datetime | None
    payload: str | None

    @property
    def completed(self) -> bool:
        return self.payload is not None


@dataclass(frozen=True)
class OutboxRecord:
    """What one committed pass changed, for projections to refresh."""

    iri: URIRef
    pass_iri: URIRef
    created_at: datetime
    added: int
    removed: int
    graphs: frozenset[URIRef]
    nodes: frozenset[URIRef]


def datetime_of(term: Term | None) -> datetime | None:
    if term is None:
        return None
    value = term.toPython() if isinstance(term, Literal) else None
    if not isinstance(value, datetime):
        raise ValueError(f"not an xsd:dateTime: {term!r}")
    return value


def _int(term: Term | None) -> int:
    return 0 if term is None else int(str(term))


def _stage(term: Term | None) -> StageName | None:
    return None if term is None else StageName.from_iri(str(term))


def _text(term: Term | None) -> str | None:
    return None if term is None else str(term)


def read_pass(uid: str, pass_id: str, row: Row) -> PassRecord:
    """A :class:`PassRecord` from a ``pipeline/passes`` row."""
    started = datetime_of(row["startedAt"])
    assert started is not None
    return PassRecord(
        uid=uid,
        pass_id=pass_id,
        iri=URIRef(str(row["pass"])),
        status=PassStatus(str(row["status"]).rsplit("#", 1)[-1]),
        stage=_stage(row.get("stage")),
        attempts=_int(row.get("attempts")),
        recoveries=_int(row.get("recoveries")),
        started_at=started,
        proposal=URIRef(str(row["proposal"])),
        finished_at=datetime_of(row.get("finishedAt")),
        next_attempt_at=datetime_of(row.get("nextAttemptAt")),
        error=_text(row.get("error")),
        error_stage=_stage(row.get("errorStage")),
        error_type=_text(row.get("errorType")),
        owner=_owner(row),
        claim=_text(row.get("claimToken")),
        heartbeat_at=datetime_of(row.get("heartbeatAt")),
        abandon_reason=_text(row.get("abandonReason")),
        retried_as=None
        if row.get("retriedAs") is None
        else str(row["retriedAs"]).rsplit("/", 1)[-1],
    )


def _last_segment(value: object) -> str | None:
    """A pass id from its IRI (``.../pass/<id>``)."""
    return None if value is None else str(value).rsplit("/", 1)[-1]


def _owner(row: Row) -> ProcessIdentity | None:
    host, pid = row.get("ownerHost"), row.get("ownerPid")
    if host is None or pid is None:
        return None
    started = row.get("ownerStartTicks")
    return ProcessIdentity(
        str(host),
        _int(pid),
        None if started is None else _int(started),
        _text(row.get("ownerBootId")),
    )


def read_checkpoint(row: Row) -> CheckpointRecord:
    """A :class:`CheckpointRecord` from a ``pipeline/checkpoints`` row."""
    stage = _stage(row["stage"])
    assert stage is not None
    return CheckpointRecord(
        stage=stage,
        attempts=_int(row.get("attempts")),
        started_at=datetime_of(row.get("startedAt")),
        finished_at=datetime_of(row.get("finishedAt")),
        payload=_text(row.get("payload")),
    )
