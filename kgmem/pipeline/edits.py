"""One changeset over a user's ops graph, built against what the store holds right now.

Pass records are updated by replacing a property's current values, which a ``DELETE DATA``
can only do with the exact stored terms: :class:`OpsEdit` reads them (inside the caller's
:meth:`~kgmem.store.TripleStore.transaction`, so no writer interleaves) and collects one
:class:`~kgmem.store.Changeset`.
"""

from __future__ import annotations

from datetime import datetime

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.store import Changeset, Quad, Term, Transaction, TripleStore

__all__ = ["OpsEdit", "at_literal"]


def at_literal(at: datetime) -> Literal:
    return Literal(at, datatype=XSD.dateTime)


class OpsEdit:
    def __init__(self, store: TripleStore, graph: URIRef) -> None:
        self._store, self._graph = store, graph
        self._add: list[Quad] = []
        self._remove: list[Quad] = []
        self._drop: list[URIRef] = []

    def add(self, subject: URIRef, predicate: URIRef, obj: Term) -> None:
        self._add.append(Quad(subject, predicate, obj, self._graph))

    def set(self, subject: URIRef, predicate: URIRef, obj: Term | None) -> None:
        """Make ``obj`` the only value (none when ``obj`` is None)."""
        self._remove.extend(self._store.quads(self._graph, subject, predicate))
        self._add = [q for q in self._add if (q.subject, q.predicate) != (subject, predicate)]
        if obj is not None:
            self.add(subject, predicate, obj)

    def values(self, subject: URIRef, predicate: URIRef) -> list[Term]:
        return [q.object for q in self._store.quads(self._graph, subject, predicate)]

    def subjects(self, predicate: URIRef, obj: Term) -> list[URIRef]:
        found = self._store.quads(self._graph, None, predicate, obj)
        return [q.subject for q in found if isinstance(q.subject, URIRef)]

    def forget(self, subject: URIRef) -> None:
        """Remove every statement about ``subject``."""
        self._remove.extend(self._store.quads(self._graph, subject))
        self._add = [q for q in self._add if q.subject != subject]

    def drop_graph(self, graph: URIRef) -> None:
        self._drop.append(graph)

    def changeset(self, extra: Changeset | None = None) -> Changeset:
        extra = extra or Changeset()
        return Changeset.of(
            (*extra.add, *self._add),
            (*extra.remove, *self._remove),
            (*extra.drop_graphs, *self._drop),
        )

    def apply(self, tx: Transaction, extra: Changeset | None = None) -> None:
        changes = self.changeset(extra)
        tx.add(*changes.add)
        tx.remove(*changes.remove)
        for graph in changes.drop_graphs:
            tx.drop_graph(graph)
