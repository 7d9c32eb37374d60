"""A changeset as one SPARQL update (``DROP`` / ``DELETE DATA`` / ``INSERT DATA``), so that
Oxigraph applies it atomically: a commit must be one ``update`` or one ``extend``."""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import BNode

from kgmem.errors import StoreOperationFailed
from kgmem.store.base import Changeset, Quad
from kgmem.store.queries import term_to_sparql

__all__ = ["changeset_update"]


def _data_block(keyword: str, quads: Iterable[Quad]) -> str:
    lines = [
        " ".join(
            (
                "GRAPH",
                term_to_sparql(q.graph),
                "{",
                term_to_sparql(q.subject, allow_blank=True),
                term_to_sparql(q.predicate),
                term_to_sparql(q.object, allow_blank=True),
                "}",
            )
        )
        for q in quads
    ]
    return keyword + " DATA {\n" + "\n".join(lines) + "\n}"


def changeset_update(changes: Changeset, *, allow_blank: bool = False) -> str:
    blank = any(
        isinstance(t, BNode) for q in (*changes.add, *changes.remove) for t in (q.subject, q.object)
    )
    if blank and not allow_blank:
        raise StoreOperationFailed(
            "commit", "blank nodes cannot be written atomically with removals; mint IRIs"
        )
    operations = ["DROP SILENT GRAPH " + term_to_sparql(g) for g in changes.drop_graphs]
    if changes.remove:
        operations.append(_data_block("DELETE", changes.remove))
    if changes.add:
        operations.append(_data_block("INSERT", changes.add))
    return " ;\n".join(operations)
