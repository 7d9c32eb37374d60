"""The lexical (BM25) index: :class:`LexicalIndex` (``index``) over per-user shards
(``shard``: postings in ``arrays``, each document's ranking facts in ``facts``, documents
from ``docs`` held by ``held``, kept in the saved file by ``saved`` and ``region``), read
from the store by ``read``; a query's ``scores``."""

from kgmem.index.lexical.docs import STOPWORDS, LexicalDoc, analyze, stem, words
from kgmem.index.lexical.index import LexicalIndex
from kgmem.index.lexical.scores import Scores

__all__ = ["STOPWORDS", "LexicalDoc", "LexicalIndex", "Scores", "analyze", "stem", "words"]
