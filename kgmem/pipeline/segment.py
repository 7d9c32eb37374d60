"""A conversation segment as the extract stage shows it to a model.

Before a model sees anything, sources that can never be evidence are taken out: recall tools
(memory_search and the like: remembered text must not validate itself) and tool calls that
did not report success. What is left is rendered with short ids (``S1``, ``S2``, ...) in the
order given, each text verbatim under a header line, so a quote the model copies can be
found again character for character.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from rdflib import URIRef

from kgmem.memory.model import SourceRecord, SourceType
from kgmem.memory.source_inputs import RECALL_TOOLS

__all__ = ["ExcludedSource", "ExclusionReason", "RenderedSegment", "Segment"]

_TYPE_NAMES = {
    SourceType.USER_MESSAGE: "user message",
    SourceType.AGENT_MESSAGE: "assistant message",
    SourceType.TOOL_RESULT: "tool result",
    SourceType.TASK_RECORD: "task record",
    SourceType.EXTERNAL_NOTE: "note",
    SourceType.SHORT_NOTE: "short note",
}


class ExclusionReason(StrEnum):
    RECALL_TOOL = "recall_tool"
    FAILED_TOOL = "failed_tool"


@dataclass(frozen=True)
class ExcludedSource:
    iri: URIRef
    reason: ExclusionReason


@dataclass(frozen=True)
class RenderedSegment:
    """The text shown to the model and the id each shown source got."""

    text: str
    ids: Mapping[str, URIRef]  # S1 -> source IRI

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", MappingProxyType(dict(self.ids)))


@dataclass(frozen=True)
class Segment:
    """The sources of one consolidation unit (messages, notes, task records, tool results)."""

    records: tuple[SourceRecord, ...]
    recall_tools: frozenset[str] = RECALL_TOOLS

    def exclusion(self, record: SourceRecord) -> ExclusionReason | None:
        """Why ``record`` is never shown to a model, or None."""
        if record.recall_tool or (record.tool_name or "") in self.recall_tools:
            return ExclusionReason.RECALL_TOOL
        if record.type is SourceType.TOOL_RESULT and record.tool_succeeded is not True:
            return ExclusionReason.FAILED_TOOL
        return None

    @property
    def shown(self) -> tuple[SourceRecord, ...]:
        return tuple(r for r in self.records if self.exclusion(r) is None)

    @property
    def excluded(self) -> tuple[ExcludedSource, ...]:
        return tuple(
            ExcludedSource(r.iri, reason)
            for r in self.records
            if (reason := self.exclusion(r)) is not None
        )

    @property
    def sources(self) -> dict[str, SourceRecord]:
        """Every record by IRI, excluded ones included (grounding refuses those itself)."""
        return {str(r.iri): r for r in self.records}

    def render(self) -> RenderedSegment:
        shown = self.shown
        ids = {f"S{n}": r.iri for n, r in enumerate(shown, start=1)}
        blocks = [f"{_header(sid, r)}\n{r.text}" for sid, r in zip(ids, shown, strict=True)]
        return RenderedSegment("\n\n".join(blocks), ids)


def _header(sid: str, record: SourceRecord) -> str:
    parts: list[str] = [sid]
    if record.turn is not None:
        parts.append(f"turn {record.turn}")
    parts.append(_TYPE_NAMES[record.type])
    parts.extend(_details(record))
    parts.append(record.timestamp.isoformat())
    return f"=== {' | '.join(parts)} ==="


def _details(record: SourceRecord) -> Iterable[str]:
    if record.speaker:
        yield f"speaker: {record.speaker}"
    if record.tool_name:
        yield f"tool: {record.tool_name}"
    if record.task_id:
        yield f"task: {record.task_id}"
    if record.note_path:
        yield f"note: {record.note_path}"
    if record.agent_reported:
        yield "reported by the agent"
