"""Prepare an ontology completely in memory, then write it to the store in three steps.

Preparing (fetch, verify size and sha256, apply quirks, parse, count, merge) touches nothing;
every failure a file can cause happens there. Writing is then

1. drop the ontology's graphs (one atomic update),
2. bulk-load one N-Triples payload per graph (fast, not transactional),
3. commit the install record (one atomic ``extend``).

The record is the completion marker: a graph without one is an install that did not finish
(only a store failure in step 2 can cause that; it is cleaned up on the spot when the store
still answers, and reported as ``incomplete`` and reloaded by the next install otherwise).
A staging graph swapped in afterwards would need a graph copy, which costs more than the load
itself in Oxigraph (a 176k-triple copy takes about as long as loading all of KBpedia).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.errors import KgmemError
from kgmem.ontology.fetch import FetchedFile, Fetcher
from kgmem.ontology.manifest import FileRole, OntologyEntry
from kgmem.ontology.payload import Payload, SourceFile, build_payload
from kgmem.ontology.records import CatalogueOrigin, InstalledFile, InstallRecord, record_quads
from kgmem.store import Changeset, RdfFormat, TripleStore, catalogue_graph

__all__ = [
    "PreparedOntology",
    "graphs_of",
    "prepare_entry",
    "prepare_sources",
    "shapes_graph_of",
    "write_prepared",
]

SHAPES_SUFFIX = ".shapes"


def shapes_graph_of(ontology_id: str) -> URIRef:
    """Where an ontology's SHACL files go: reference material, never applied to validation."""
    return catalogue_graph(ontology_id + SHAPES_SUFFIX)


def graphs_of(ontology_id: str) -> tuple[URIRef, URIRef]:
    return catalogue_graph(ontology_id), shapes_graph_of(ontology_id)


@dataclass(frozen=True)
class PreparedOntology:
    """An ontology checked and parsed, ready to write: its record and one payload per graph."""

    record: InstallRecord
    payloads: tuple[tuple[URIRef, Payload], ...]


def prepare_entry(
    entry: OntologyEntry, fetcher: Fetcher, on_file: Callable[[str], None] | None = None
) -> PreparedOntology:
    """Fetch, verify and parse every file of a manifest entry; write nothing."""
    fetched: list[FetchedFile] = []
    for primary in entry.primaries:
        fetched.append(fetcher.fetch(entry, primary))
        if on_file is not None:
            on_file(primary.path)
    origin = (
        CatalogueOrigin.URL
        if any(f.origin is CatalogueOrigin.URL for f in fetched)
        else CatalogueOrigin.MIRROR
    )
    main, shapes = graphs_of(entry.id)
    sources = [
        (
            shapes if item.entry.role is FileRole.SHAPES else main,
            SourceFile(
                label=item.entry.path,
                data=item.data,
                fmt=item.entry.format,
                quirks=item.entry.quirks,
                base_iri=item.entry.url,
                expected_triples=item.entry.triples,
            ),
            item.sha256,
            item.origin,
        )
        for item in fetched
    ]
    return prepare_sources(entry.id, entry.title, entry.release, origin, sources)


_Source = tuple[URIRef, SourceFile, str, CatalogueOrigin]


def prepare_sources(
    ontology_id: str,
    title: str,
    release: str,
    origin: CatalogueOrigin,
    sources: Sequence[_Source],
) -> PreparedOntology:
    """Parse ``(graph, source, sha256, origin)`` items into one payload per graph."""
    payloads: list[tuple[URIRef, Payload]] = []
    files: list[InstalledFile] = []
    for graph in dict.fromkeys(s[0] for s in sources):
        group = [s for s in sources if s[0] == graph]
        payload = build_payload([s[1] for s in group])
        payloads.append((graph, payload))
        files += [
            InstalledFile(source.label, sha256, len(source.data), triples, file_origin, graph)
            for (_, source, sha256, file_origin), triples in zip(
                group, payload.file_triples, strict=True
            )
        ]
    files.sort(key=lambda f: f.path)
    record = InstallRecord(ontology_id, title, release, origin, tuple(files))
    return PreparedOntology(record, tuple(payloads))


def write_prepared(store: TripleStore, prepared: PreparedOntology) -> None:
    """Replace the ontology's graphs with ``prepared``; the record goes in last."""
    main, shapes = graphs_of(prepared.record.ontology_id)
    present = set(store.graphs())
    stale = tuple(g for g in (main, shapes) if g in present)
    if stale:
        store.commit(Changeset.of(drop_graphs=stale))
    try:
        for graph, payload in prepared.payloads:
            if payload.triples:
                # Our own serialization of triples already validated while parsing.
                store.load(
                    payload.data, RdfFormat.NTRIPLES, graph, replace=False, bulk=True, lenient=True
                )
        store.commit(Changeset.of(record_quads(main, prepared.record)))
    except KgmemError:
        _drop_quietly(store, (main, shapes))
        raise


def _drop_quietly(store: TripleStore, graphs: tuple[URIRef, ...]) -> None:
    """Best effort: the original error is the one worth reporting."""
    with suppress(KgmemError):
        store.commit(Changeset.of(drop_graphs=graphs))
