"""The lexical (BM25) index: :class:`LexicalIndex` (``index``) over per-user shards
(``shard``: postings in ``arrays``, documents from ``docs``), read from the store by
``read``."""

from kgmem.index.lexical.arrays import Scores
from kgmem.index.lexical.docs import STOPWORDS, LexicalDoc, analyze, stem, words
from kgmem.index.lexical.index import LexicalIndex

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]
