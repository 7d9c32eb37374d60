"""The retrieval layer: memory_search and memory_cite over the lexical index."""

from kgmem.retrieval.cite import Citation
from kgmem.retrieval.errors import InvalidSearch, RetrievalError
from kgmem.retrieval.filters import DOC_KINDS, SearchFilters
from kgmem.retrieval.ranking import RankWeights
from kgmem.retrieval.search import MemorySearch, SearchHit
from kgmem.retrieval.temporal import TimeCue, find_time_cue

__all__ = [
    "DOC_KINDS",
    "Citation",
    "InvalidSearch",
    "MemorySearch",
    "RankWeights",
    "RetrievalError",
    "SearchFilters",
    "SearchHit",
    "TimeCue",
    "find_time_cue",
]
