"""What a context packet says about one memory: the item, its evidence, a procedure's steps
and triggers.

Evidence comes from the memory's record (source kind, the exact quote and its span, support
kind, authority) and from its sources: where each is, as a link (``chat:<chat>#<turn>`` for a
message, ``task:<task id>``, ``note:<path>``, else the source IRI), and whether it reports a
failure (a tool result whose outcome is ``failure``, a task record in state ``failed``).
Evidence is listed strongest first: explicit before derived before inferred, then by
authority (user, tool, task, agent), then by source.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rdflib import Literal, URIRef

from kgmem.errors import UnknownMemory
from kgmem.memory.grounding import DEFAULT_AUTHORITY_ORDER
from kgmem.memory.lifecycle import Lifecycle
from kgmem.memory.model import MemoryStatus, SupportKind
from kgmem.memory.records import EvidenceRecord, MemoryRecord
from kgmem.memory.source_inputs import TaskState, ToolOutcome
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs

__all__ = ["ItemRead", "ItemReader", "PacketEvidence", "PacketItem"]

_SUPPORT = tuple(SupportKind)  # explicit, derived, inferred: strongest first


@dataclass(frozen=True)
class PacketEvidence:
    """One item of a memory's evidence, as an agent reads it."""

    source: str  # the source IRI
    source_type: str  # userMessage | agentMessage | toolResult | taskRecord | externalNote | ...
    support: str  # explicit | derived | inferred
    authority: str  # user | tool | task | agent
    link: str  # chat:<chat>#<turn> | task:<id> | note:<path> | the source IRI
    quote: str | None = None  # exactly as it stands in the source text
    span: tuple[int, int] | None = None  # the quote's code-point span in the source text
    agent_reported: bool = False  # reported second-hand by an agent
    failure: bool = False  # a failed tool call or task


@dataclass(frozen=True)
class PacketItem:
    """One memory in a context packet; ``score`` is its applicability to the intent."""

    id: str
    kind: str  # semantic | procedural | episodic | reference
    title: str
    excerpt: str
    body: str
    confidence: float
    score: float
    why: tuple[str, ...]
    evidence: tuple[PacketEvidence, ...]
    evidence_total: int  # how much evidence the memory has (``evidence`` may show fewer)
    steps: tuple[str, ...] = ()  # a procedure's steps, in order
    triggers: tuple[str, ...] = ()  # when a procedure applies
    occurred_at: datetime | None = None
    pinned: bool = False
    failure: bool = False  # some evidence reports a failure


@dataclass(frozen=True)
class ItemRead:
    """An active memory as a packet reads it: its record and its evidence, strongest first."""

    record: MemoryRecord
    evidence: tuple[PacketEvidence, ...]

    @property
    def failure(self) -> bool:
        return any(e.failure for e in self.evidence)


class ItemReader:
    """Reads what a packet shows of a memory from the store (records and sources); one
    reader per packet, so each memory is read once and nothing outlives the call."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, lifecycle: Lifecycle) -> None:
        self._store, self._queries, self._lifecycle = store, queries, lifecycle
        self._cache: dict[tuple[str, str], ItemRead | None] = {}

    def read(self, uid: str, id: str) -> ItemRead | None:
        """The active memory ``id`` with its evidence, strongest first; None if it is no
        longer active (a change since the search)."""
        key = (uid, id)
        if key not in self._cache:
            try:
                record = self._lifecycle.get(uid, URIRef(id))
            except UnknownMemory:  # forgotten since the search
                record = None
            if record is None or record.status is not MemoryStatus.ACTIVE:
                self._cache[key] = None
            else:
                self._cache[key] = ItemRead(record, self._evidence(uid, record))
        return self._cache[key]

    def item(
        self, uid: str, read: ItemRead, score: float, why: tuple[str, ...], evidence: int | None
    ) -> PacketItem:
        """The packet item of ``read``, showing at most ``evidence`` items (None: all)."""
        r = read.record
        shown = read.evidence if evidence is None else read.evidence[:evidence]
        return PacketItem(
            id=str(r.iri),
            kind=r.kind.value,
            title=r.title,
            excerpt=r.excerpt,
            body=r.body,
            confidence=r.confidence,
            score=round(score, 6),
            why=why,
            evidence=shown,
            evidence_total=len(read.evidence),
            steps=r.steps,
            triggers=r.triggers,
            occurred_at=r.occurred_at,
            pinned=r.pinned,
            failure=read.failure,
        )

    def _evidence(self, uid: str, record: MemoryRecord) -> tuple[PacketEvidence, ...]:
        graphs = UserGraphs(uid)
        bindings = {"graph": record.graph or graphs.kg, "sources": graphs.sources}
        rows = self._store.select(
            self._queries["retrieval/evidence_sources"], {"memory": record.iri, **bindings}
        )
        sources = {str(row["source"]): row for row in rows}
        items = [_evidence(e, sources.get(str(e.source), {})) for e in record.evidence]
        return tuple(sorted(items, key=_strength))


def _evidence(item: EvidenceRecord, source: Row) -> PacketEvidence:
    outcome, state = _text(source, "toolOutcome"), _text(source, "taskState")
    return PacketEvidence(
        source=str(item.source),
        source_type=item.source_type.value,
        support=item.support.value,
        authority=item.authority.value,
        link=_link(str(item.source), source),
        quote=item.quote,
        span=item.span,
        agent_reported=item.agent_reported,
        failure=outcome == ToolOutcome.FAILURE.value or state == TaskState.FAILED.value,
    )


def _link(iri: str, source: Row) -> str:
    chat, turn = _text(source, "chat"), _text(source, "turn")
    if (task := _text(source, "taskId")) is not None:
        return f"task:{task}"
    if (path := _text(source, "notePath")) is not None:
        return f"note:{path}"
    if chat is not None and turn is not None:
        return f"chat:{chat}#{turn}"
    return iri


def _text(row: Row, name: str) -> str | None:
    value = row.get(name)
    return str(value) if isinstance(value, Literal) else None


def _strength(item: PacketEvidence) -> tuple[int, int, str, str]:
    authorities = [a.value for a in DEFAULT_AUTHORITY_ORDER]
    return (
        _SUPPORT.index(SupportKind(item.support)),
        authorities.index(item.authority),
        item.source,
        item.quote or "",
    )
