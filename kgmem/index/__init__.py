"""The index layer: projections of the store that retrieval reads (may import only store).

The graph projection (:class:`GraphProjection`, on Kùzu as :class:`KuzuProjection`) keeps
every user's entities, memories, pages and sources with the edges between them; it is
rebuilt and checked from the store, never written without a store change behind it.
"""

from kgmem.index.base import (
    Fingerprint,
    GraphProjection,
    Link,
    LinkKind,
    Neighbour,
    OpenReport,
    ReconcileReport,
    TableFingerprint,
)
from kgmem.index.kuzu import KuzuProjection
from kgmem.index.reader import NodeSet, StoreReader
from kgmem.index.rows import TABLES, UserRows, fingerprint_of

__all__ = [
    "TABLES",
    "Fingerprint",
    "GraphProjection",
    "KuzuProjection",
    "Link",
    "LinkKind",
    "Neighbour",
    "NodeSet",
    "OpenReport",
    "ReconcileReport",
    "StoreReader",
    "TableFingerprint",
    "UserRows",
    "fingerprint_of",
]
