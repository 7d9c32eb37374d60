"""Reading ontology graphs from the store into a :class:`Vocabulary` (five named queries)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rdflib import URIRef

from kgmem.ontology.vocabulary.terms import DisjointAxiom
from kgmem.ontology.vocabulary.view import Vocabulary
from kgmem.store import Dataset, QueryRegistry, TripleStore
from kgmem.vocab import OWL, RDFS, SDO

__all__ = ["load_vocabulary"]


def load_vocabulary(
    store: TripleStore,
    queries: QueryRegistry,
    graphs: Sequence[URIRef],
    into: Vocabulary | None = None,
) -> Vocabulary:
    """Read ``graphs`` into a :class:`Vocabulary` (five named queries, one pass each).

    With ``into``, the terms are added to that vocabulary (a user's delta on top of a copy
    of the catalogue's) and it is returned.
    """
    vocab = Vocabulary() if into is None else into
    dataset = Dataset(default=tuple(graphs), named=tuple(graphs))
    for row in store.select(queries["ontology/declared_terms"], dataset=dataset):
        vocab.declare(_iri(row["term"]), _iri(row["type"]), _iri(row["graph"]))
    for row in store.select(queries["ontology/subclass_edges"], dataset=dataset):
        vocab.add_subclass(_iri(row["child"]), _iri(row["parent"]))
        vocab.classes |= {_iri(row["child"]), _iri(row["parent"])}
    _load_properties(vocab, store.select(queries["ontology/property_axioms"], dataset=dataset))
    _load_labels(vocab, store.select(queries["ontology/labels"], dataset=dataset))
    for row in store.select(queries["ontology/disjoint_pairs"], dataset=dataset):
        vocab.add_disjoint(
            DisjointAxiom(_iri(row["a"]), _iri(row["b"]), str(row["kind"]), _iri(row["graph"]))
        )
    return vocab


def _load_properties(vocab: Vocabulary, rows: Iterable[Mapping[str, object]]) -> None:
    slots = {
        RDFS.domain: "domains",
        RDFS.range: "ranges",
        SDO.domainIncludes: "domain_includes",
        SDO.rangeIncludes: "range_includes",
        RDFS.subPropertyOf: "parents",
        OWL.equivalentProperty: "parents",
    }
    for row in rows:
        info = vocab.property(_iri(row["property"]), create=True)
        getattr(info, slots[_iri(row["axiom"])]).add(_iri(row["value"]))


def _load_labels(vocab: Vocabulary, rows: Iterable[Mapping[str, object]]) -> None:
    preferred = {RDFS.label, URIRef("http://www.w3.org/2004/02/skos/core#prefLabel")}
    for row in rows:
        target = vocab.labels if _iri(row["predicate"]) in preferred else vocab.alt_labels
        text = str(row["label"])
        bucket = target[_iri(row["term"])]
        if text not in bucket:
            bucket.append(text)


def _iri(term: object) -> URIRef:
    if not isinstance(term, URIRef):
        raise TypeError(f"expected an IRI, got {term!r}")
    return term
