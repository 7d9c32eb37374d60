"""The index layer: projections of the store that retrieval reads (may import only store).

The graph projection (:class:`GraphProjection`, on Kùzu as :class:`KuzuProjection`) keeps
every user's entities, memories, pages and sources with the edges between them; it is
rebuilt and checked from the store, never written without a store change behind it. The
lexical index (:class:`LexicalIndex`, BM25 over memories, pages and notes) is rebuilt in
memory per user on first use and refreshed node by node; with the optional embedding extra
each document also has a vector (:class:`StaticEmbedder`, :mod:`kgmem.index.dense`). The change feed
(:class:`ChangeFeed`) feeds both from every commit, through an outbox written in the commit,
and a third: the digests of every node (:class:`Digests`), which say what changed when the
outbox cannot (a backup of the store put back), so a repair reads only that.
"""

from kgmem.index.base import (
    GraphProjection,
    Link,
    LinkKind,
    Neighbour,
    OpenReport,
    ReconcileReport,
)
from kgmem.index.dense import Embedder, EmbedderUnavailable, StaticEmbedder
from kgmem.index.digests import CaughtUp, Digests
from kgmem.index.feed import ChangeFeed, DrainReport, FeedTarget
from kgmem.index.kuzu.projection import KuzuProjection
from kgmem.index.lexical import LexicalDoc, LexicalIndex
from kgmem.index.lexical.docs import revision_key
from kgmem.index.reader import NodeSet, StoreReader
from kgmem.index.rows import TABLES, Fingerprint, TableFingerprint, UserRows, fingerprint_of

__all__ = [
    "TABLES",
    "CaughtUp",
    "ChangeFeed",
    "Digests",
    "DrainReport",
    "Embedder",
    "EmbedderUnavailable",
    "FeedTarget",
    "Fingerprint",
    "GraphProjection",
    "KuzuProjection",
    "LexicalDoc",
    "LexicalIndex",
    "Link",
    "LinkKind",
    "Neighbour",
    "NodeSet",
    "OpenReport",
    "ReconcileReport",
    "StaticEmbedder",
    "StoreReader",
    "TableFingerprint",
    "UserRows",
    "fingerprint_of",
    "revision_key",
]
