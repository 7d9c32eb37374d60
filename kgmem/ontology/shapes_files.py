"""The SHACL shapes that apply to writes: the files that ship with kgmem, and an admin's own.

Bundled shapes are the ``*.ttl`` files of ``shapes_dir``; they are reloaded at every start-up
and cannot be changed here. An admin's shapes are ``*.ttl`` files in the data directory
(``$KGMEM_HOME/shapes``), each in the graph ``urn:kgmem:shapes:local.{name}``. The file is
the record: start-up loads what is there (see :mod:`kgmem.ontology.bundled`) and drops the
graph of a file that is gone, so the store and the directory cannot drift apart for long.

Adding a file is all or nothing: it must parse, hold at least one shape, and compile together
with every other shapes graph (a reference to a shape no graph defines, a recursive shape or
an unsupported construct is refused) before the store is touched; the file is moved into place
only after its graph is loaded. The validator's compiled shapes are invalidated on every
change, so the next write is checked with the new shapes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from rdflib import Graph, URIRef

from kgmem.errors import (
    GraphNameError,
    OntologyParseError,
    ProtectedShapes,
    ShapeError,
    ShapesFileError,
    UnknownShapes,
)
from kgmem.ontology.bundled import BundledFile, is_shapes_graph, load_file, local_shapes_graph
from kgmem.ontology.payload import SourceFile, parse_triples
from kgmem.ontology.shacl import compile_shapes
from kgmem.ontology.shacl_compile import shape_nodes
from kgmem.ontology.validation import ValidationService
from kgmem.store import (
    Changeset,
    QueryRegistry,
    RdfFormat,
    TripleStore,
    check_id,
    shapes_graph,
)

__all__ = ["ShapesFiles", "ShapesInfo", "ShapesOrigin"]


class ShapesOrigin(StrEnum):
    BUNDLED = "bundled"  # ships with kgmem (shapes_dir)
    LOCAL = "local"  # an admin's file in the data directory


@dataclass(frozen=True)
class ShapesInfo:
    name: str
    origin: ShapesOrigin
    graph: str
    triples: int
    shapes: int


class ShapesFiles:
    """The shapes files of one store: list them, add or replace an admin's, remove one."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        validation: ValidationService,
        bundled_dir: Path,
        local_dir: Path,
    ) -> None:
        self._store, self._queries, self._validation = store, queries, validation
        self._bundled_dir, self._local_dir = bundled_dir, local_dir
        self._lock = threading.Lock()  # one change at a time: each compiles against the rest

    def _bundled(self) -> dict[str, Path]:
        found = sorted(self._bundled_dir.glob("*.ttl")) if self._bundled_dir.is_dir() else []
        return {p.stem: p for p in found}

    def _local(self) -> dict[str, Path]:
        found = sorted(self._local_dir.glob("*.ttl")) if self._local_dir.is_dir() else []
        return {p.stem: p for p in found}

    def list(self) -> list[ShapesInfo]:
        """Every shapes file, bundled first, with what its graph holds now."""
        named = [(n, ShapesOrigin.BUNDLED, shapes_graph(n)) for n in self._bundled()]
        named += [(n, ShapesOrigin.LOCAL, local_shapes_graph(n)) for n in self._local()]
        return [self._info(name, origin, graph) for name, origin, graph in named]

    def _info(self, name: str, origin: ShapesOrigin, graph: URIRef) -> ShapesInfo:
        held = self._graph(graph)
        return ShapesInfo(name, origin, str(graph), len(held), len(shape_nodes(held)))

    def _graph(self, graph: URIRef) -> Graph:
        held = Graph()
        for quad in self._store.quads(graph):
            held.add((quad.subject, quad.predicate, quad.object))
        return held

    def put(self, name: str, data: bytes) -> ShapesInfo:
        """Add (or replace) the admin's shapes file ``name`` from Turtle ``data``."""
        self._check_name(name)
        shapes = _parse(name, data)
        graph = local_shapes_graph(name)
        with self._lock:
            self._compile_with_others(name, graph, shapes)
            self._local_dir.mkdir(parents=True, exist_ok=True)
            final = self._local_dir / f"{name}.ttl"
            staged = self._local_dir / f".{name}.ttl.staged"
            staged.write_bytes(data)
            try:
                load_file(self._store, self._queries, BundledFile(staged, graph))
                staged.replace(final)
            finally:
                staged.unlink(missing_ok=True)
            self._validation.invalidate()
        return self._info(name, ShapesOrigin.LOCAL, graph)

    def remove(self, name: str) -> ShapesInfo:
        """Drop the admin's shapes file ``name`` and its graph; what it held."""
        self._check_name(name)
        path = self._local().get(name)
        if path is None:
            raise UnknownShapes(name, "no shapes file of this name was added")
        graph = local_shapes_graph(name)
        with self._lock:
            info = self._info(name, ShapesOrigin.LOCAL, graph)
            self._store.commit(Changeset.of(drop_graphs=(graph,)))
            path.unlink(missing_ok=True)
            self._validation.invalidate()
        return info

    def _check_name(self, name: str) -> None:
        try:
            check_id(name, "shapes name")
        except GraphNameError as exc:
            raise ShapesFileError(name, exc.reason) from None
        if name.startswith("."):
            raise ShapesFileError(name, "must not start with a dot")
        if name in self._bundled():
            raise ProtectedShapes(name, "it ships with kgmem and is reloaded at every start-up")

    def _compile_with_others(self, name: str, graph: URIRef, shapes: Graph) -> None:
        """Compile ``shapes`` with every other shapes graph in the store, or refuse."""
        if not shape_nodes(shapes):
            raise ShapesFileError(name, "holds no SHACL shape (no sh:NodeShape, target or path)")
        combined = Graph()
        combined += shapes
        for other in self._store.graphs():
            if other != graph and is_shapes_graph(other):
                combined += self._graph(other)
        try:
            compile_shapes(combined)
        except ShapeError as exc:
            raise ShapesFileError(name, str(exc)) from None


def _parse(name: str, data: bytes) -> Graph:
    try:
        parse_triples(SourceFile(f"{name}.ttl", data, RdfFormat.TURTLE))
    except OntologyParseError as exc:
        raise ShapesFileError(name, exc.reason) from None
    graph = Graph()
    graph.parse(data=data, format="turtle")
    return graph
