"""Sources as RDF: the facts each input becomes, and the record read back from them.

Every property a source carries is functional (``owl:FunctionalProperty`` in kgmem.ttl), so a
source is a mapping from predicate to one object. Optional flags are written only when set:
kgmem.ttl reads an absent ``kgm:isRecallTool`` as false.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from hashlib import sha256

from rdflib import Literal, URIRef

from kgmem.memory.model import Authority, Role, SourceRecord, SourceType
from kgmem.memory.source_inputs import MessageIn, NoteIn, TaskIn, ToolOutcome
from kgmem.store import Quad, Term
from kgmem.vocab import KGM, RDF

__all__ = [
    "AGENT_REPORTER",
    "RECORD_VARIABLES",
    "Facts",
    "authority_for",
    "content_hash",
    "message_facts",
    "message_type",
    "note_facts",
    "record_from_facts",
    "short_note_facts",
    "task_facts",
    "task_text",
    "to_quads",
]

Facts = dict[URIRef, Term]
#: The ``kgm:reportedBy`` of a source an agent reported inline rather than the host.
AGENT_REPORTER = "agent"

_ROLE_TYPES = {
    Role.USER: SourceType.USER_MESSAGE,
    Role.ASSISTANT: SourceType.AGENT_MESSAGE,
    Role.TOOL: SourceType.TOOL_RESULT,
}
_AUTHORITY = {
    SourceType.USER_MESSAGE: Authority.USER,
    SourceType.AGENT_MESSAGE: Authority.AGENT,
    SourceType.TOOL_RESULT: Authority.TOOL,
    SourceType.TASK_RECORD: Authority.TASK,
    SourceType.EXTERNAL_NOTE: Authority.USER,
    SourceType.SHORT_NOTE: Authority.AGENT,
}
_ROLES = frozenset(role.value for role in Role)
_CLASS_TYPES = {
    KGM.TaskRecord: SourceType.TASK_RECORD,
    KGM.ExternalNote: SourceType.EXTERNAL_NOTE,
    KGM.ShortNote: SourceType.SHORT_NOTE,
}


def authority_for(source_type: SourceType, agent_reported: bool = False) -> Authority:
    """Who stands behind a source: second-hand reports never carry more than agent authority."""
    return Authority.AGENT if agent_reported else _AUTHORITY[source_type]


def content_hash(text: str) -> str:
    """``sha256:<hex>`` of the exact text, as kgm:contentHash records it."""
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()


def _optional(facts: Facts, predicate: URIRef, value: object) -> None:
    if value is not None and value is not False:
        facts[predicate] = Literal(value)


def message_facts(msg: MessageIn, timestamp: datetime) -> Facts:
    facts: Facts = {
        RDF.type: KGM.Message,
        KGM.chat: Literal(msg.chat),
        KGM.turn: Literal(msg.turn),
        KGM.role: Literal(msg.role.value),
        KGM.text: Literal(msg.text),
        KGM.timestamp: Literal(timestamp),
    }
    _optional(facts, KGM.toolName, msg.tool_name)
    _optional(facts, KGM.toolOutcome, msg.tool_outcome and msg.tool_outcome.value)
    _optional(facts, KGM.isRecallTool, msg.is_recall)
    _optional(facts, KGM.speaker, msg.speaker)
    _optional(facts, KGM.reportedBy, AGENT_REPORTER if msg.agent_reported else None)
    return facts


def message_type(role: Role) -> SourceType:
    return _ROLE_TYPES[role]


def task_text(description: str, result: str | None) -> str:
    """The task as described, then its result on a line of its own: both are quotable."""
    return description if result is None else f"{description}\n{result}"


def task_facts(task: TaskIn, index: int, result: str | None) -> Facts:
    """The record of the ``index``-th state change, carrying ``result`` when given."""
    change = task.states[index]
    facts: Facts = {
        RDF.type: KGM.TaskRecord,
        KGM.taskId: Literal(task.task_id),
        KGM.taskState: Literal(change.state.value),
        KGM.text: Literal(task_text(task.text, result)),
        KGM.timestamp: Literal(change.at),
    }
    _optional(facts, KGM.result, result)
    _optional(facts, KGM.chat, task.chat)
    return facts


def note_facts(note: NoteIn, timestamp: datetime) -> Facts:
    facts: Facts = {
        RDF.type: KGM.ExternalNote,
        KGM.notePath: Literal(note.path),
        KGM.text: Literal(note.text),
        KGM.contentHash: Literal(content_hash(note.text)),
        KGM.timestamp: Literal(timestamp),
    }
    _optional(facts, KGM.revision, note.revision)
    return facts


def short_note_facts(text: str, chat: str | None, timestamp: datetime) -> Facts:
    facts: Facts = {
        RDF.type: KGM.ShortNote,
        KGM.text: Literal(text),
        KGM.timestamp: Literal(timestamp),
    }
    _optional(facts, KGM.chat, chat)
    return facts


def to_quads(iri: URIRef, graph: URIRef, facts: Mapping[URIRef, Term]) -> list[Quad]:
    return [Quad(iri, predicate, obj, graph) for predicate, obj in facts.items()]


_READ = (
    "text",
    "timestamp",
    "chat",
    "turn",
    "role",
    "speaker",
    "toolName",
    "toolOutcome",
    "isRecallTool",
    "reportedBy",
    "notePath",
    "taskId",
)
#: The variables of ``sources/source_record`` and the predicates they read.
RECORD_VARIABLES: dict[str, URIRef] = {"type": URIRef(RDF.type)} | {
    name: URIRef(KGM[name]) for name in _READ
}
_TYPE = RECORD_VARIABLES["type"]
_TEXT, _TIMESTAMP, _CHAT, _TURN, _ROLE, _SPEAKER = (RECORD_VARIABLES[n] for n in _READ[:6])
_TOOL, _OUTCOME, _RECALL, _REPORTED, _PATH, _TASK = (RECORD_VARIABLES[n] for n in _READ[6:])
_MESSAGE = URIRef(KGM.Message)


def _text(facts: Mapping[URIRef, Term], predicate: URIRef) -> str | None:
    value = facts.get(predicate)
    return None if value is None else str(value)


def _source_type(facts: Mapping[URIRef, Term]) -> SourceType | None:
    kind = facts.get(_TYPE)
    if kind == _MESSAGE:
        role = _text(facts, _ROLE)
        return _ROLE_TYPES[Role(role)] if role in _ROLES else None
    return _CLASS_TYPES.get(URIRef(str(kind)))


def record_from_facts(iri: URIRef, facts: Mapping[URIRef, Term]) -> SourceRecord | None:
    """The record of a stored source; None when ``facts`` do not describe one."""
    source_type = _source_type(facts)
    text, stamp = facts.get(_TEXT), facts.get(_TIMESTAMP)
    if source_type is None or text is None or not isinstance(stamp, Literal):
        return None
    timestamp = stamp.toPython()
    if not isinstance(timestamp, datetime):
        return None
    reported = _REPORTED in facts
    turn = facts.get(_TURN)
    outcome, role = _text(facts, _OUTCOME), _text(facts, _ROLE)
    recall = facts.get(_RECALL)
    return SourceRecord(
        iri=iri,
        type=source_type,
        text=str(text),
        authority=authority_for(source_type, reported),
        timestamp=timestamp,
        chat=_text(facts, _CHAT),
        turn=int(turn) if isinstance(turn, Literal) else None,
        role=Role(role) if role in _ROLES else None,
        speaker=_text(facts, _SPEAKER),
        tool_name=_text(facts, _TOOL),
        tool_succeeded=None if outcome is None else outcome == ToolOutcome.SUCCESS,
        recall_tool=isinstance(recall, Literal) and recall.toPython() is True,
        agent_reported=reported,
        note_path=_text(facts, _PATH),
        task_id=_text(facts, _TASK),
    )
