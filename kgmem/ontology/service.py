"""The ontology service: one cached catalogue view, per-user effective ontologies and deltas.

The server process owns the store, so caches are invalidated in-process: every catalogue
or delta change goes through this service (or calls :meth:`OntologyService.invalidate`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.ontology.delta import DeltaPatch, DeltaPlan, plan_patch
from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.search import TermHit, TermIndex
from kgmem.ontology.vocabulary import TermKind, Vocabulary, load_vocabulary
from kgmem.store import (
    GraphKind,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    catalogue_graph,
    parse_graph,
)

__all__ = ["OntologyService"]

STARTER = catalogue_graph("starter")


class OntologyService:
    """Answers ontology questions for every user from one shared catalogue view."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store = store
        self._queries = queries
        self._lock = threading.RLock()
        self._vocabulary: Vocabulary | None = None
        self._index: TermIndex | None = None
        self._users: dict[str, Vocabulary] = {}
        self._effective: dict[str, EffectiveOntology] = {}

    # -- catalogue ---------------------------------------------------------------------

    def catalogue_graphs(self) -> tuple[URIRef, ...]:
        """The vocabulary graphs of the catalogue (reference shapes graphs excluded)."""
        graphs = []
        for graph in self._store.graphs():
            try:
                parsed = parse_graph(graph)
            except GraphNameError:
                continue
            if parsed.kind is GraphKind.CATALOGUE and not str(parsed.name).endswith(".shapes"):
                graphs.append(graph)
        return tuple(graphs)

    def vocabulary(self) -> Vocabulary:
        with self._lock:
            if self._vocabulary is None:
                self._vocabulary = load_vocabulary(
                    self._store, self._queries, self.catalogue_graphs()
                )
            return self._vocabulary

    def index(self) -> TermIndex:
        with self._lock:
            if self._index is None:
                self._index = TermIndex(self.vocabulary())
            return self._index

    def search(self, text: str, limit: int = 10, kind: TermKind | None = None) -> list[TermHit]:
        """Catalogue terms for ``text``, best first."""
        return self.index().search(text, limit, kind)

    def invalidate(self, uid: str | None = None) -> None:
        """Forget cached views: one user's, or (None) everything after a catalogue change."""
        with self._lock:
            if uid is None:
                self._vocabulary = self._index = None
                self._users.clear()
                self._effective.clear()
            else:
                self._users.pop(uid, None)
                self._effective.pop(uid, None)

    # -- users -------------------------------------------------------------------------

    def user_vocabulary(self, uid: str) -> Vocabulary:
        """The catalogue plus ``uid``'s schema delta."""
        with self._lock:
            cached = self._users.get(uid)
            if cached is None:
                base = self.vocabulary().copy()
                cached = load_vocabulary(
                    self._store, self._queries, (UserGraphs(uid).schema,), into=base
                )
                self._users[uid] = cached
            return cached

    def effective(self, uid: str) -> EffectiveOntology:
        """``uid``'s effective ontology: starter terms, used terms and delta terms, closed."""
        with self._lock:
            cached = self._effective.get(uid)
            if cached is None:
                graphs = UserGraphs(uid)
                vocab = self.user_vocabulary(uid)
                seeds = [t for t, g in vocab.origin.items() if g in (STARTER, graphs.schema)]
                seeds += self._used_terms(graphs.kg)
                cached = EffectiveOntology.build(uid, vocab, seeds, graphs.schema)
                self._effective[uid] = cached
            return cached

    def note_terms(self, uid: str, terms: Iterable[URIRef]) -> EffectiveOntology:
        """Extend ``uid``'s effective ontology with terms a write is about to use."""
        with self._lock:
            extended = self.effective(uid).extend(terms)
            self._effective[uid] = extended
            return extended

    def _used_terms(self, graph: URIRef) -> list[URIRef]:
        rows = self._store.select(self._queries["ontology/used_terms"], {"graph": graph})
        return [t for r in rows if isinstance(t := r["term"], URIRef)]

    # -- schema delta ------------------------------------------------------------------

    def plan_delta(self, uid: str, patch: DeltaPatch) -> DeltaPlan:
        """Check ``patch`` and return what it would write; nothing is written."""
        return plan_patch(
            uid, self.user_vocabulary(uid), self.index(), patch, UserGraphs(uid).schema
        )

    def preview(self, uid: str, patch: DeltaPatch) -> tuple[EffectiveOntology, DeltaPlan]:
        """``uid``'s effective ontology as it will be once ``patch`` commits, and the patch's
        plan; raises like :meth:`plan_delta`. Nothing is written or cached."""
        plan = self.plan_delta(uid, patch)
        current = self.effective(uid)
        preview = EffectiveOntology(
            uid, plan.vocabulary, current.classes, current.properties, current.delta_graph
        )
        return preview.extend(plan.terms), plan

    def apply_delta(self, uid: str, patch: DeltaPatch) -> DeltaPlan:
        """Check and commit ``patch`` in one store transaction; all of it or none.

        The store's write lock is taken before this service's lock, as every writer that
        validates inside a transaction takes them (the gate, the page follower): the other
        order deadlocks against them."""
        with self._store.transaction() as tx:
            with self._lock:
                plan = self.plan_delta(uid, patch)
            tx.add(*plan.quads)
        with self._lock:
            self._users[uid] = plan.vocabulary
            self._effective.pop(uid, None)
        return plan
