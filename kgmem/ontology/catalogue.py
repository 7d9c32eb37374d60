"""The ontology catalogue: install from the manifest, add and remove files, list, version.

Each ontology lives in ``urn:kgmem:catalogue:{id}``; its SHACL files (reference material, never
applied to validation) in ``urn:kgmem:catalogue:{id}.shapes``. Bundled ontologies (kgmem,
starter) are loaded at start-up by :mod:`kgmem.ontology.bundled`; this service installs the
others and lists them all.

Atomicity: everything that can go wrong with a file (missing, wrong size or digest, does not
parse, wrong triple count) is found while preparing, before the store is touched, and for
every selected ontology at once: a failed install leaves the catalogue exactly as it was. The
write itself is drop, bulk load, then the install record (see :mod:`kgmem.ontology.loader`).

Idempotence: the record in each graph names the files (path, sha256) it was built from. An
ontology whose record matches the manifest is reported unchanged without reading a file or
writing a triple, so a re-run leaves the store's quads identical.
"""

from __future__ import annotations

import builtins
import hashlib
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from rdflib import URIRef

from kgmem.errors import (
    GraphNameError,
    OntologyFileMissing,
    OntologyIdError,
    OntologyParseError,
    ProtectedOntology,
    UnknownOntology,
)
from kgmem.ontology.fetch import Fetcher
from kgmem.ontology.loader import (
    PreparedOntology,
    graphs_of,
    prepare_entry,
    prepare_sources,
    write_prepared,
)
from kgmem.ontology.manifest import ONTOLOGY_ID, Manifest, OntologyEntry
from kgmem.ontology.outcomes import (
    CatalogueInfo,
    InstallReport,
    InstallStatus,
    OntologyOutcome,
    ProgressCallback,
    Tracker,
)
from kgmem.ontology.payload import SourceFile, format_for_suffix
from kgmem.ontology.records import CatalogueOrigin, InstalledFile, InstallRecord
from kgmem.ontology.stats import CatalogueStats, catalogue_version, collect_stats
from kgmem.store import (
    Changeset,
    GraphKind,
    QueryRegistry,
    RdfFormat,
    TripleStore,
    catalogue_graph,
    parse_graph,
)

__all__ = ["Catalogue"]


class Catalogue:
    """The catalogue over one store; ``manifest`` says which ids are bundled or reserved."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, manifest: Manifest) -> None:
        self._store = store
        self._queries = queries
        self._manifest = manifest

    @property
    def manifest(self) -> Manifest:
        return self._manifest

    # -- install -------------------------------------------------------------------------

    def install(
        self,
        manifest: Manifest | None = None,
        mirror: Path | None = None,
        only: Sequence[str] | None = None,
        progress: ProgressCallback | None = None,
        *,
        download: bool = True,
    ) -> InstallReport:
        """Install ``only`` (default: every non-bundled entry) and what they require.

        Files come from ``mirror`` or, when it lacks them and ``download`` is on, their url.
        """
        started = time.perf_counter()
        manifest = manifest or self._manifest
        plan = manifest.install_order(only)
        stats = self._stats()
        outcomes: dict[str, OntologyOutcome] = {}
        todo: list[OntologyEntry] = []
        for entry in plan:
            kept = self._kept(entry, stats, explicit=only is not None and entry.id in only)
            if kept is None:
                todo.append(entry)
            else:
                outcomes[entry.id] = kept
        track = Tracker(progress, sum(len(e.primaries) for e in todo) + len(todo))
        prepared: list[tuple[PreparedOntology, float]] = []
        with Fetcher(mirror, download=download) as fetcher:
            for entry in todo:
                tick = time.perf_counter()
                track.begin(entry.id, "fetching")
                ready = prepare_entry(entry, fetcher, partial(track, entry.id, "fetch"))
                prepared.append((ready, time.perf_counter() - tick))
        for ready, prepare_seconds in prepared:
            ontology_id = ready.record.ontology_id
            track.begin(ontology_id, "loading")
            outcomes[ontology_id] = self._write(ready, prepare_seconds)
            track(ontology_id, "load", ontology_id)
        ordered = tuple(outcomes[e.id] for e in plan)
        return InstallReport(ordered, time.perf_counter() - started)

    def _kept(
        self, entry: OntologyEntry, stats: CatalogueStats, *, explicit: bool
    ) -> OntologyOutcome | None:
        """The outcome of an entry install leaves alone, or None when it must be loaded."""
        record = stats.records.get(catalogue_graph(entry.id))
        if entry.bundled:
            status = InstallStatus.BUNDLED
        elif record is not None and record.origin is CatalogueOrigin.ADDED and not explicit:
            status = InstallStatus.KEPT_ADDED
        elif record is not None and _matches(entry, record):
            status = InstallStatus.UNCHANGED
        else:
            return None
        files = len(record.files) if record else len(entry.files)
        origin = record.origin if record else CatalogueOrigin.BUNDLED
        return OntologyOutcome(entry.id, status, stats.triples(entry.id), files, 0.0, origin)

    def _write(self, ready: PreparedOntology, prepare_seconds: float) -> OntologyOutcome:
        tick = time.perf_counter()
        write_prepared(self._store, ready)
        record = ready.record
        triples = self._stats(graphs_of(record.ontology_id)).triples(record.ontology_id)
        seconds = prepare_seconds + time.perf_counter() - tick
        return OntologyOutcome(
            record.ontology_id,
            InstallStatus.LOADED,
            triples,
            len(record.files),
            seconds,
            record.origin,
        )

    # -- admin files ---------------------------------------------------------------------

    def add(
        self,
        path: Path,
        ontology_id: str,
        fmt: RdfFormat | None = None,
        *,
        replace: bool = False,
        title: str | None = None,
    ) -> OntologyOutcome:
        """Load an admin's RDF file as ontology ``ontology_id`` (Turtle, N-Triples, RDF/XML, N3).

        The file is parsed completely before anything is written; an unparseable file leaves
        the catalogue unchanged. Taking an id the manifest or an earlier add uses needs
        ``replace=True``; bundled ids cannot be replaced.
        """
        tick = time.perf_counter()
        self._check_new_id(ontology_id, replace=replace)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise OntologyFileMissing(str(path), f"cannot be read: {exc.strerror or exc}") from exc
        fmt = fmt or format_for_suffix(path.name)
        if fmt is None:
            reason = "cannot tell the syntax from the suffix; give the format explicitly"
            raise OntologyParseError(str(path), reason)
        source = SourceFile(path.name, data, fmt, base_iri=path.resolve().as_uri())
        sha256 = hashlib.sha256(data).hexdigest()
        graph = catalogue_graph(ontology_id)
        ready = prepare_sources(
            ontology_id,
            title or ontology_id,
            "",
            CatalogueOrigin.ADDED,
            [(graph, source, sha256, CatalogueOrigin.ADDED)],
        )
        if not ready.payloads[0][1].triples:
            raise OntologyParseError(str(path), "holds no triples")
        return self._write(ready, time.perf_counter() - tick)

    def _check_new_id(self, ontology_id: str, *, replace: bool) -> None:
        if not ONTOLOGY_ID.fullmatch(ontology_id):
            raise OntologyIdError(ontology_id, "must match [a-z0-9-]+ (at most 64 characters)")
        self._check_mutable(ontology_id)
        if replace:
            return
        if ontology_id in self._manifest.ids:
            raise OntologyIdError(
                ontology_id, "the manifest uses this id; pass replace to load your file instead"
            )
        if catalogue_graph(ontology_id) in self._store.graphs():
            raise OntologyIdError(
                ontology_id, "an ontology with this id is installed; pass replace to replace it"
            )

    def _check_mutable(self, ontology_id: str) -> None:
        bundled = {e.id for e in self._manifest.ontologies if e.bundled}
        if ontology_id == "kgmem":
            raise ProtectedOntology(ontology_id, "it is kgmem's own vocabulary")
        if ontology_id in bundled:
            raise ProtectedOntology(ontology_id, "it is bundled and reloaded at every start-up")

    def remove(self, ontology_id: str) -> tuple[URIRef, ...]:
        """Drop an ontology's graphs (vocabulary and reference shapes); return them."""
        self._check_mutable(ontology_id)
        try:
            graphs = graphs_of(ontology_id)
        except GraphNameError:
            raise UnknownOntology(ontology_id) from None
        present = tuple(g for g in graphs if g in set(self._store.graphs()))
        if catalogue_graph(ontology_id) not in present:
            raise UnknownOntology(ontology_id)
        self._store.commit(Changeset.of(drop_graphs=present))
        return present

    # -- reading -------------------------------------------------------------------------

    def list(self) -> builtins.list[CatalogueInfo]:
        """Every ontology in the store, by id, with counts computed by named queries."""
        stats = self._stats()
        return [self._info(ontology_id, stats) for ontology_id in stats.ids()]

    def _info(self, ontology_id: str, stats: CatalogueStats) -> CatalogueInfo:
        graph = catalogue_graph(ontology_id)
        record = stats.records.get(graph) or self._bundled_record(ontology_id, stats)
        classes, properties = stats.terms.get(graph, (0, 0))
        return CatalogueInfo(
            ontology_id,
            record.title,
            record.release,
            record.origin,
            stats.triples(ontology_id),
            classes,
            properties,
            record.files,
        )

    def _bundled_record(self, ontology_id: str, stats: CatalogueStats) -> InstallRecord:
        graph = catalogue_graph(ontology_id)
        sha256 = stats.bundled.get(graph)
        if sha256 is None:
            return InstallRecord(ontology_id, ontology_id, "", CatalogueOrigin.INCOMPLETE, ())
        entry = self._manifest.entry(ontology_id) if ontology_id in self._manifest.ids else None
        title, release = (entry.title, entry.release) if entry else (ontology_id, "")
        files: tuple[InstalledFile, ...] = ()
        if entry is not None:
            path = entry.files[0].path
            size = (self._manifest.root / path).stat().st_size
            triples = stats.triples(ontology_id)
            origin = CatalogueOrigin.BUNDLED
            files = (InstalledFile(path, sha256, size, triples, origin, graph),)
        return InstallRecord(ontology_id, title, release, CatalogueOrigin.BUNDLED, files)

    def version(self) -> str:
        """A digest of what is installed (ids and file sha256s); changes with every change."""
        return catalogue_version(self._store, self._queries)

    def _stats(
        self, graphs: Sequence[URIRef] | None = None, *, counts: bool = True
    ) -> CatalogueStats:
        if graphs is None:
            graphs = [g for g in self._store.graphs() if _is_catalogue(g)]
        return collect_stats(self._store, self._queries, graphs, counts=counts)


def _matches(entry: OntologyEntry, record: InstallRecord) -> bool:
    """Whether ``record`` was built from exactly the files ``entry`` lists now."""
    if (record.title, record.release) != (entry.title, entry.release):
        return False
    digests = record.file_digests
    for primary in entry.primaries:
        group = {(f.path, f.sha256) for f in (primary, *entry.duplicates_of(primary.path))}
        if not group & digests:
            return False
    return digests <= {(f.path, f.sha256) for f in entry.files}


def _is_catalogue(graph: URIRef) -> bool:
    try:
        return parse_graph(graph).kind is GraphKind.CATALOGUE
    except GraphNameError:
        return False
