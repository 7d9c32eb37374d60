"""Quads to and from N-Quads text, for records that keep an exact change (decisions)."""

from __future__ import annotations

from collections.abc import Iterable

import pyoxigraph as ox

from kgmem.errors import StoreOperationFailed
from kgmem.store.base import Quad
from kgmem.store.ox_terms import quad_from_ox
from kgmem.store.queries import term_to_sparql

__all__ = ["from_nquads", "to_nquads"]


def to_nquads(quads: Iterable[Quad]) -> str:
    """Sorted N-Quads lines (escaping by the RDF library)."""
    lines = (
        " ".join(
            (
                term_to_sparql(q.subject, allow_blank=True),
                term_to_sparql(q.predicate),
                term_to_sparql(q.object, allow_blank=True),
                term_to_sparql(q.graph),
                ".",
            )
        )
        for q in quads
    )
    return "\n".join(sorted(lines))


def from_nquads(text: str) -> list[Quad]:
    try:
        return [quad_from_ox(q) for q in ox.parse(text.encode(), ox.RdfFormat.N_QUADS)]
    except SyntaxError as exc:
        raise StoreOperationFailed("read recorded change", str(exc)) from exc
