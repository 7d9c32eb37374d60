"""What the catalogue records about an installed ontology, inside that ontology's own graph.

An install writes, as its very last step and in one atomic commit, a record on the graph IRI::

    <urn:kgmem:catalogue:foaf> kgm:ontologyId "foaf" ; kgm:ontologyTitle "FOAF Vocabulary" ;
        kgm:ontologyRelease "0.99" ; kgm:catalogueOrigin kgm:mirrorOrigin ;
        kgm:catalogueFile <urn:kgmem:catalogue:foaf#file-0> .
    <urn:kgmem:catalogue:foaf#file-0> a kgm:CatalogueFile ; kgm:filePath "foaf/foaf.rdf" ;
        kgm:fileSha256 "1b2a..." ; kgm:fileBytes 44285 ; kgm:fileTriples 632 ;
        kgm:catalogueOrigin kgm:mirrorOrigin ; kgm:loadedInto <urn:kgmem:catalogue:foaf> .

A graph with content but no record is an install that did not finish (see catalogue.py).
Dropping the graph drops the record with it, so the record can never outlive the triples.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from kgmem.store import Dataset, Quad, QueryRegistry, TripleStore
from kgmem.vocab import KGM

__all__ = [
    "CatalogueOrigin",
    "InstallRecord",
    "InstalledFile",
    "read_records",
    "record_quads",
]


class CatalogueOrigin(StrEnum):
    """Where an ontology's (or one file's) triples came from."""

    BUNDLED = "bundled"
    MIRROR = "mirror"
    URL = "url"
    ADDED = "added"
    INCOMPLETE = "incomplete"  # content without a record: an install that did not finish

    @property
    def iri(self) -> URIRef:
        return KGM[f"{self.value}Origin"]

    @classmethod
    def from_iri(cls, iri: object) -> CatalogueOrigin:
        for origin in cls:
            if origin.iri == iri:
                return origin
        return cls.INCOMPLETE


@dataclass(frozen=True)
class InstalledFile:
    """One file behind a catalogue graph: where it came from and what it held."""

    path: str
    sha256: str
    size: int
    triples: int
    origin: CatalogueOrigin
    graph: URIRef


@dataclass(frozen=True)
class InstallRecord:
    ontology_id: str
    title: str
    release: str
    origin: CatalogueOrigin
    files: tuple[InstalledFile, ...]

    @property
    def file_digests(self) -> frozenset[tuple[str, str]]:
        return frozenset((f.path, f.sha256) for f in self.files)


def _file_node(graph: URIRef, index: int) -> URIRef:
    return URIRef(f"{graph}#file-{index}")


def record_quads(graph: URIRef, record: InstallRecord) -> Iterator[Quad]:
    """The quads that state ``record`` in ``graph`` (IRIs only: written with extend)."""
    yield Quad(graph, KGM.ontologyId, Literal(record.ontology_id), graph)
    yield Quad(graph, KGM.ontologyTitle, Literal(record.title), graph)
    yield Quad(graph, KGM.ontologyRelease, Literal(record.release), graph)
    yield Quad(graph, KGM.catalogueOrigin, record.origin.iri, graph)
    ordered = sorted(record.files, key=lambda f: (str(f.graph), f.path))
    for index, file in enumerate(ordered):
        node = _file_node(graph, index)
        yield Quad(graph, KGM.catalogueFile, node, graph)
        yield Quad(node, RDF.type, KGM.CatalogueFile, graph)
        yield Quad(node, KGM.filePath, Literal(file.path), graph)
        yield Quad(node, KGM.fileSha256, Literal(file.sha256), graph)
        yield Quad(node, KGM.fileBytes, Literal(file.size, datatype=XSD.integer), graph)
        yield Quad(node, KGM.fileTriples, Literal(file.triples, datatype=XSD.integer), graph)
        yield Quad(node, KGM.catalogueOrigin, file.origin.iri, graph)
        yield Quad(node, KGM.loadedInto, file.graph, graph)


def read_records(
    store: TripleStore, queries: QueryRegistry, dataset: Dataset | None = None
) -> dict[URIRef, InstallRecord]:
    """Every install record in the store (or in ``dataset``), by graph."""
    files: dict[URIRef, list[InstalledFile]] = {}
    for row in store.select(queries["catalogue/record_files"], dataset=dataset):
        graph = URIRef(str(row["graph"]))
        files.setdefault(graph, []).append(
            InstalledFile(
                path=str(row["path"]),
                sha256=str(row["sha256"]),
                size=int(str(row["bytes"])),
                triples=int(str(row["triples"])),
                origin=CatalogueOrigin.from_iri(row["origin"]),
                graph=URIRef(str(row["into"])),
            )
        )
    records: dict[URIRef, InstallRecord] = {}
    for row in store.select(queries["catalogue/records"], dataset=dataset):
        graph = URIRef(str(row["graph"]))
        records[graph] = InstallRecord(
            ontology_id=str(row["id"]),
            title=str(row["title"]),
            release=str(row["release"]),
            origin=CatalogueOrigin.from_iri(row["origin"]),
            files=tuple(sorted(files.get(graph, []), key=lambda f: f.path)),
        )
    return records
