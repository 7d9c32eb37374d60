"""What the store holds per catalogue ontology, gathered with a handful of named queries."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.ontology.records import InstallRecord, read_records
from kgmem.store import (
    Dataset,
    GraphKind,
    QueryRegistry,
    Row,
    TripleStore,
    catalogue_graph,
    parse_graph,
)

__all__ = ["CatalogueStats", "catalogue_version", "collect_stats"]

_SHAPES_SUFFIX = ".shapes"


@dataclass(frozen=True)
class CatalogueStats:
    """Records, bundled checksums and counts of a set of catalogue graphs."""

    graphs: tuple[URIRef, ...]
    records: dict[URIRef, InstallRecord]
    bundled: dict[URIRef, str]
    counts: dict[URIRef, int]
    bookkeeping: dict[URIRef, int]
    terms: dict[URIRef, tuple[int, int]]

    def ids(self) -> list[str]:
        """The ontology ids present (a vocabulary graph, not only a shapes graph), sorted."""
        found = set()
        for graph in self.graphs:
            name = str(parse_graph(graph).name)
            found.add(name.removesuffix(_SHAPES_SUFFIX))
        return sorted(found)

    def triples(self, ontology_id: str) -> int:
        """Content triples of the ontology's graphs: everything but kgmem's bookkeeping."""
        total = 0
        for graph in self.graphs:
            name = str(parse_graph(graph).name)
            if name.removesuffix(_SHAPES_SUFFIX) == ontology_id:
                total += self.counts.get(graph, 0) - self.bookkeeping.get(graph, 0)
        return total


def collect_stats(
    store: TripleStore, queries: QueryRegistry, graphs: Sequence[URIRef], *, counts: bool = True
) -> CatalogueStats:
    """Read records and checksums of ``graphs``; with ``counts``, triples and term counts too."""
    present = set(store.graphs())
    chosen = tuple(g for g in graphs if g in present and _is_catalogue(g))
    dataset = Dataset(named=chosen)
    vocabularies = Dataset(named=tuple(g for g in chosen if not str(g).endswith(_SHAPES_SUFFIX)))
    records = read_records(store, queries, dataset)
    bundled = {
        URIRef(str(r["graph"])): str(r["sha256"])
        for r in store.select(queries["store/bundle_checksum"], dataset=dataset)
    }
    tallies: dict[URIRef, int] = {}
    bookkeeping: dict[URIRef, int] = {}
    terms: dict[URIRef, tuple[int, int]] = {}
    if counts and chosen:
        tallies = _per_graph(store.select(queries["store/graph_counts"], dataset=dataset))
        rows = store.select(queries["catalogue/record_triples"], dataset=dataset)
        bookkeeping = _per_graph(rows)
        for row in store.select(queries["catalogue/term_counts"], dataset=vocabularies):
            graph = URIRef(str(row["graph"]))
            terms[graph] = (int(str(row["classes"])), int(str(row["properties"])))
    return CatalogueStats(chosen, records, bundled, tallies, bookkeeping, terms)


def catalogue_version(store: TripleStore, queries: QueryRegistry) -> str:
    """A digest of what the catalogue holds (ids and file sha256s): changes with every change.

    Cheap (records only, no counts): a command reads it to know whether what it kept of
    the catalogue (:mod:`kgmem.ontology.search`) is still the catalogue.
    """
    stats = collect_stats(
        store, queries, [g for g in store.graphs() if _is_catalogue(g)], counts=False
    )
    lines = []
    for ontology_id in stats.ids():
        graph = catalogue_graph(ontology_id)
        record = stats.records.get(graph)
        if record is not None:
            lines += [f"{ontology_id}\t{f.path}\t{f.sha256}" for f in record.files]
        else:
            lines.append(f"{ontology_id}\t\t{stats.bundled.get(graph, 'incomplete')}")
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _per_graph(rows: Sequence[Row]) -> dict[URIRef, int]:
    return {URIRef(str(r["graph"])): int(str(r["triples"])) for r in rows}


def _is_catalogue(graph: URIRef) -> bool:
    try:
        return parse_graph(graph).kind is GraphKind.CATALOGUE
    except GraphNameError:
        return False
