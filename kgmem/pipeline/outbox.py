"""A pass's outbox record: what a committed pass changed, written in the commit's transaction.

The record stays in the user's ops graph with the pass, for status and history. Projections
are not fed from it: every commit, a pass's included, carries its own entry in the user's
outbox graph through the store's commit hook (:mod:`kgmem.index.feed`), which the projections
drain.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.pipeline.edits import OpsEdit, at_literal
from kgmem.pipeline.records import OutboxRecord, datetime_of
from kgmem.store import Changeset, Row
from kgmem.vocab import KGM, RDF

__all__ = ["outbox_iri", "read_outbox", "write_outbox"]


def outbox_iri(pass_iri: URIRef) -> URIRef:
    return URIRef(f"{pass_iri}#outbox")


def write_outbox(edit: OpsEdit, pass_iri: URIRef, changes: Changeset, at: datetime) -> None:
    """Add the outbox entry for ``changes`` (committed by ``pass_iri``) to ``edit``."""
    entry = outbox_iri(pass_iri)
    quads = (*changes.add, *changes.remove)
    edit.forget(entry)
    edit.add(entry, RDF.type, KGM.OutboxEntry)
    edit.add(entry, KGM.outboxOf, pass_iri)
    edit.add(entry, KGM.createdAt, at_literal(at))
    edit.add(entry, KGM.addedCount, Literal(len(changes.add), datatype=XSD.integer))
    edit.add(entry, KGM.removedCount, Literal(len(changes.remove), datatype=XSD.integer))
    for graph in sorted({q.graph for q in quads} | set(changes.drop_graphs)):
        edit.add(entry, KGM.changedGraph, graph)
    for node in sorted({q.subject for q in quads if isinstance(q.subject, URIRef)}):
        edit.add(entry, KGM.changedNode, node)


def read_outbox(rows: Iterable[Row]) -> list[OutboxRecord]:
    """Fold ``pipeline/outbox`` rows (one per changed graph or node) into records."""
    heads: dict[URIRef, Row] = {}
    graphs: dict[URIRef, set[URIRef]] = {}
    nodes: dict[URIRef, set[URIRef]] = {}
    for row in rows:
        entry = URIRef(str(row["entry"]))
        heads.setdefault(entry, row)
        if "changedGraph" in row:
            graphs.setdefault(entry, set()).add(URIRef(str(row["changedGraph"])))
        if "changedNode" in row:
            nodes.setdefault(entry, set()).add(URIRef(str(row["changedNode"])))
    records = []
    for entry, row in heads.items():
        created = datetime_of(row["createdAt"])
        assert created is not None
        records.append(
            OutboxRecord(
                iri=entry,
                pass_iri=URIRef(str(row["pass"])),
                created_at=created,
                added=int(str(row["added"])),
                removed=int(str(row["removed"])),
                graphs=frozenset(graphs.get(entry, ())),
                nodes=frozenset(nodes.get(entry, ())),
            )
        )
    return records
