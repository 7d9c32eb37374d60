"""The errors of the retrieval layer (defined in :mod:`kgmem.errors`, with the others)."""

from __future__ import annotations

from kgmem.errors import InvalidSearch, RetrievalError

__all__ = ["InvalidSearch", "RetrievalError"]
