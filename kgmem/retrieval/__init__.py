"""The retrieval layer: memory_search and memory_cite over the lexical index, context packets
by intent (retrieve_memory), outcome feedback (record_outcome), and the prompt context
pushed into every turn (profile, short memory, playbook index)."""

from kgmem.retrieval.cite import Citation
from kgmem.retrieval.context import MIN_BUDGET_TOKENS, ContextLimits, PromptContext
from kgmem.retrieval.context_model import (
    PlaybookEntry,
    PlaybookSection,
    ProfileFact,
    ProfileSection,
    PromptContextPacket,
    ShortMemorySection,
    estimate_tokens,
)
from kgmem.retrieval.errors import InvalidSearch, RetrievalError
from kgmem.retrieval.filters import DOC_KINDS, SearchFilters
from kgmem.retrieval.outcomes import MemoryState, OutcomeChange, RecordedOutcome, record_outcome
from kgmem.retrieval.packet_items import PacketEvidence, PacketItem
from kgmem.retrieval.packet_warnings import PacketWarning, WarningKind, WarningPolicy
from kgmem.retrieval.packets import (
    INTENT_PROFILES,
    ContextPacket,
    Intent,
    IntentProfile,
    MemoryRetrieval,
    ProcedureRule,
    Section,
)
from kgmem.retrieval.ranking import RankWeights
from kgmem.retrieval.search import MemorySearch, SearchHit
from kgmem.retrieval.temporal import TimeCue, find_time_cue

__all__ = [
    "DOC_KINDS",
    "INTENT_PROFILES",
    "MIN_BUDGET_TOKENS",
    "Citation",
    "ContextLimits",
    "ContextPacket",
    "Intent",
    "IntentProfile",
    "InvalidSearch",
    "MemoryRetrieval",
    "MemorySearch",
    "MemoryState",
    "OutcomeChange",
    "PacketEvidence",
    "PacketItem",
    "PacketWarning",
    "PlaybookEntry",
    "PlaybookSection",
    "ProcedureRule",
    "ProfileFact",
    "ProfileSection",
    "PromptContext",
    "PromptContextPacket",
    "RankWeights",
    "RecordedOutcome",
    "RetrievalError",
    "SearchFilters",
    "SearchHit",
    "Section",
    "ShortMemorySection",
    "TimeCue",
    "WarningKind",
    "WarningPolicy",
    "estimate_tokens",
    "find_time_cue",
    "record_outcome",
]
