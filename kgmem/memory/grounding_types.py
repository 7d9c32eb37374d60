"""What grounding answers with, and the context it needs: the result types of
:mod:`kgmem.memory.grounding`, with the confidence caps and the default authority order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from rdflib import URIRef

from kgmem.memory.discourse import Identity, Kind
from kgmem.memory.model import (
    Authority,
    SourceRecord,
    SourceType,
    SupportKind,
)
from kgmem.memory.reader import NameBook
from kgmem.memory.source_inputs import RECALL_TOOLS

__all__ = [
    "AUTHORITY_CONFIDENCE_CAPS",
    "DEFAULT_AUTHORITY_ORDER",
    "SUPPORT_CONFIDENCE_CAPS",
    "SUPPORT_ORDER",
    "GroundedEvidence",
    "GroundingContext",
    "GroundingResult",
    "Refusal",
    "RefusalCode",
]

DEFAULT_AUTHORITY_ORDER: tuple[Authority, ...] = (
    Authority.USER,
    Authority.TOOL,
    Authority.TASK,
    Authority.AGENT,
)
#: The most a claim's confidence may be, by the kind of support behind it.
SUPPORT_CONFIDENCE_CAPS: Mapping[SupportKind, float] = MappingProxyType(
    {SupportKind.EXPLICIT: 1.0, SupportKind.DERIVED: 0.7, SupportKind.INFERRED: 0.5}
)
#: ... and by who stands behind it. Agent authority stays below the gate's 0.75 on purpose: it
#: may reach the review inbox, never activate on confidence alone.
AUTHORITY_CONFIDENCE_CAPS: Mapping[Authority, float] = MappingProxyType(
    {Authority.USER: 1.0, Authority.TOOL: 0.9, Authority.TASK: 0.9, Authority.AGENT: 0.6}
)
SUPPORT_ORDER = (SupportKind.EXPLICIT, SupportKind.DERIVED, SupportKind.INFERRED)


class RefusalCode(StrEnum):
    NO_EVIDENCE = "no_evidence"
    UNKNOWN_SOURCE = "unknown_source"
    MISSING_QUOTE = "missing_quote"
    QUOTE_NOT_IN_SOURCE = "quote_not_in_source"
    RECALL_TOOL = "recall_tool"
    FAILED_TOOL = "failed_tool"
    AGENT_ONLY = "agent_only"
    QUOTE_DOES_NOT_NAME_SUBJECT = "quote_does_not_name_subject"
    QUOTE_DOES_NOT_STATE_VALUE = "quote_does_not_state_value"
    SUBJECT_AND_VALUE_APART = "subject_and_value_apart"
    NEGATION_MISMATCH = "negation_mismatch"
    QUOTE_IS_QUESTION = "quote_is_question"
    QUOTE_UNRELATED = "quote_unrelated"
    CONFIRMATION_NEGATED = "confirmation_negated"
    CONFIRMATION_UNLINKED = "confirmation_unlinked"
    AMBIGUOUS_REFERENT = "ambiguous_referent"


@dataclass(frozen=True)
class Refusal:
    """Why an evidence item (``index``; ``None``: the claim as a whole) was not accepted."""

    code: RefusalCode
    message: str
    index: int | None = None
    field: str | None = None  # the evidence or claim field at fault: source, quote, value, ...


@dataclass(frozen=True)
class GroundedEvidence:
    """An accepted evidence item; ``source_text[start:end] == quote`` (code points)."""

    index: int
    source: URIRef
    source_type: SourceType
    quote: str
    start: int
    end: int
    support: SupportKind
    authority: Authority
    agent_reported: bool
    confirms: URIRef | None = None  # for a user confirmation: the agent message it confirms
    note_path: str | None = None

    @classmethod
    def at(
        cls,
        record: SourceRecord,
        span: tuple[int, int],
        index: int,
        support: SupportKind,
        authority: Authority,
        confirms: URIRef | None = None,
    ) -> GroundedEvidence:
        """Evidence item ``index``, accepted: ``record``'s text at ``span``."""
        return cls(
            index=index,
            source=record.iri,
            source_type=record.type,
            quote=record.text[span[0] : span[1]],
            start=span[0],
            end=span[1],
            support=support,
            authority=authority,
            agent_reported=record.agent_reported,
            confirms=confirms,
            note_path=record.note_path,
        )


@dataclass(frozen=True)
class GroundingResult:
    grounded: bool
    reasons: tuple[Refusal, ...]  # every refused item, even when others ground the claim
    items: tuple[GroundedEvidence, ...]
    authority: Authority | None
    support: SupportKind | None
    confidence_cap: float
    may_auto_activate: bool
    #: claim term -> whom the chat of its evidence says it means (the user, a full name)
    identities: Mapping[str, Identity] = field(default_factory=dict)


@dataclass(frozen=True)
class BatchNames:
    """What the caller knows across a batch of drafts: every draft's entity names (with
    their aliases) and claim terms, the user's left out, and the kinds the drafts give
    those names (a name two drafts give different kinds has none). A batch's drafts cite
    the same chat: it is read once with these names for all of them, not once a draft."""

    names: Mapping[str, tuple[str, ...]]
    kinds: Mapping[str, Kind]


@dataclass(frozen=True)
class GroundingContext(NameBook):
    """Who "I" and "you" are, which names are aliases, what came before a user message.

    ``user`` (+ ``user_aliases``): the user's entity: the speaker of their messages (unless a
    message names another ``speaker``), "you" to the assistant. ``entities``: known entity
    names -> aliases. ``previous``: user message IRI -> the message right before it in its
    chat; without an entry, the cited message of the same chat one turn earlier is taken.
    ``recall_tools``: tool names whose results are recall whatever the record says.
    ``history``: message IRI -> its chat around it, the message included, in turn order (a
    window of it): whom its pronouns, first names and descriptions mean, who its speaker
    introduced themselves as. ``kinds``: names the caller knows to be persons or things.
    ``batch``: the names of the whole batch the draft came in, when it came with others:
    its chats are read with those.
    """

    previous: Mapping[URIRef, SourceRecord] = field(default_factory=dict)
    recall_tools: frozenset[str] = RECALL_TOOLS
    history: Mapping[URIRef, tuple[SourceRecord, ...]] = field(default_factory=dict)
    kinds: Mapping[str, Kind] = field(default_factory=dict)
    batch: BatchNames | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "previous", MappingProxyType(dict(self.previous)))
        object.__setattr__(self, "history", MappingProxyType(dict(self.history)))
        object.__setattr__(self, "kinds", MappingProxyType(dict(self.kinds)))
