"""Files that load at start-up: the bundled catalogue ontologies (the manifest's
``bundled = true`` entries: kgmem's vocabulary and the starter), the SHACL shapes that ship
with kgmem (``shapes_dir``) and the shapes an admin added to this data directory
(``$KGMEM_HOME/shapes``, graphs ``urn:kgmem:shapes:local.{name}``; see
:mod:`kgmem.ontology.shapes_files`).

Each file goes into its own named graph together with a ``kgm:sourceSha256`` triple, so a
restart reloads only what changed and a removed shapes file stops applying.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError, OntologyParseError, ResourceError, StoreOperationFailed
from kgmem.ontology.manifest import load_manifest
from kgmem.ontology.payload import SourceFile, parse_triples
from kgmem.store import (
    Changeset,
    GraphKind,
    Quad,
    QueryRegistry,
    RdfFormat,
    TripleStore,
    catalogue_graph,
    parse_graph,
    shapes_graph,
)
from kgmem.vocab import KGM

__all__ = [
    "BundledFile",
    "LoadReport",
    "bundled_files",
    "check_bundled",
    "default_ontologies_dir",
    "ensure_bundled",
    "is_shapes_graph",
    "load_file",
    "local_shapes_graph",
]

#: Shapes an admin adds live in graphs named with this prefix, so they can never replace a
#: bundled file's graph, whatever names a later release ships.
LOCAL_SHAPES_PREFIX = "local."


def default_ontologies_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "ontologies"


@dataclass(frozen=True)
class BundledFile:
    path: Path
    graph: URIRef
    fmt: RdfFormat = RdfFormat.TURTLE


@dataclass(frozen=True)
class LoadReport:
    loaded: tuple[URIRef, ...]
    unchanged: tuple[URIRef, ...]
    removed: tuple[URIRef, ...]


def local_shapes_graph(name: str) -> URIRef:
    """The graph of the admin's shapes file ``{name}.ttl``."""
    return shapes_graph(f"{LOCAL_SHAPES_PREFIX}{name}")


def bundled_files(
    shapes_dir: Path, ontologies_dir: Path | None = None, local_shapes: Path | None = None
) -> list[BundledFile]:
    """The bundled entries of ``catalogue.toml`` in ``ontologies_dir``, then every ``*.ttl`` in
    ``shapes_dir``, then every ``*.ttl`` in ``local_shapes`` (the admin's). Raises
    :class:`~kgmem.errors.ManifestError` if the manifest is unusable."""
    root = ontologies_dir or default_ontologies_dir()
    manifest = load_manifest(root / "catalogue.toml")
    files = [
        BundledFile(root / entry.files[0].path, catalogue_graph(entry.id), entry.files[0].format)
        for entry in manifest.ontologies
        if entry.bundled
    ]
    if shapes_dir.is_dir():
        files += [BundledFile(p, shapes_graph(p.stem)) for p in sorted(shapes_dir.glob("*.ttl"))]
    if local_shapes is not None and local_shapes.is_dir():
        files += [
            BundledFile(p, local_shapes_graph(p.stem)) for p in sorted(local_shapes.glob("*.ttl"))
        ]
    return files


def _checksum(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ResourceError(path, f"cannot be read: {exc.strerror or exc}") from exc


def check_bundled(files: list[BundledFile]) -> None:
    """Parse every bundled file without touching a store; raise ResourceError on the first
    that is missing or broken, so a bad file fails start-up before anything is written."""
    for bundled in files:
        try:
            data = bundled.path.read_bytes()
        except OSError as exc:
            raise ResourceError(bundled.path, f"cannot be read: {exc.strerror or exc}") from exc
        try:
            parse_triples(SourceFile(str(bundled.path), data, bundled.fmt))
        except OntologyParseError as exc:
            raise ResourceError(bundled.path, exc.reason) from exc


def ensure_bundled(
    store: TripleStore, queries: QueryRegistry, files: list[BundledFile]
) -> LoadReport:
    """Load every file whose checksum differs from the one stored; drop stale shapes graphs."""
    loaded: list[URIRef] = []
    unchanged: list[URIRef] = []
    for bundled in files:
        (loaded if load_file(store, queries, bundled) else unchanged).append(bundled.graph)
    wanted = {b.graph for b in files}
    stale = tuple(g for g in store.graphs() if g not in wanted and is_shapes_graph(g))
    if stale:
        store.commit(Changeset.of(drop_graphs=stale))
    return LoadReport(tuple(loaded), tuple(unchanged), stale)


def load_file(store: TripleStore, queries: QueryRegistry, bundled: BundledFile) -> bool:
    """Load one file into its graph (replacing it) unless the graph already holds that file's
    checksum; whether it loaded."""
    digest = _checksum(bundled.path)
    rows = store.select(queries["store/bundle_checksum"], {"graph": bundled.graph})
    if any(str(r["sha256"]) == digest for r in rows):
        return False
    try:
        store.load(bundled.path.read_bytes(), bundled.fmt, bundled.graph)
    except StoreOperationFailed as exc:
        raise ResourceError(bundled.path, exc.reason) from exc
    store.commit(
        Changeset.of([Quad(bundled.graph, KGM.sourceSha256, Literal(digest), bundled.graph)])
    )
    return True


def is_shapes_graph(graph: URIRef) -> bool:
    try:
        return parse_graph(graph).kind is GraphKind.SHAPES
    except GraphNameError:
        return False
