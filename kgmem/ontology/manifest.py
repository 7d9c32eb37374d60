"""The catalogue manifest (``ontologies/catalogue.toml``) as frozen data.

The manifest's header comment is its specification; this module enforces it: unknown keys,
missing checksums on mirrored files, dangling ``requires`` or ``duplicate_of`` references, paths
that climb out of their root and dependency cycles all raise :class:`ManifestError` naming the
offending ontology or file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from kgmem.errors import ManifestError, UnknownOntology
from kgmem.store import RdfFormat

__all__ = [
    "FORMAT_VERSION",
    "FileEntry",
    "FileRole",
    "Manifest",
    "OntologyEntry",
    "Quirk",
    "default_manifest_path",
    "load_manifest",
]

FORMAT_VERSION = 1
ONTOLOGY_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_FORMATS = {
    f.value: f for f in (RdfFormat.TURTLE, RdfFormat.NTRIPLES, RdfFormat.RDFXML, RdfFormat.N3)
}
_ONTOLOGY_KEYS = {
    "id", "title", "release", "license", "license_url", "bundled", "homepage", "namespaces",
    "requires", "files",
}  # fmt: skip
_FILE_KEYS = {
    "path", "url", "sha256", "bytes", "triples", "format", "role", "quirks", "duplicate_of",
    "note",
}  # fmt: skip
_MIRRORED_ONLY = ("url", "sha256", "bytes")


class Quirk(StrEnum):
    """A named in-memory fix-up applied before parsing (the files are never edited)."""

    PREPEND_OWL_RDFS_PREFIXES = "prepend-owl-rdfs-prefixes"
    LENIENT = "lenient"
    REWRITE_HTTP_SCHEMA_ORG = "rewrite-http-schema-org"


class FileRole(StrEnum):
    VOCABULARY = "vocabulary"
    SHAPES = "shapes"


@dataclass(frozen=True)
class FileEntry:
    """One file of an ontology. ``size`` is the manifest's ``bytes`` key."""

    path: str
    format: RdfFormat
    role: FileRole = FileRole.VOCABULARY
    quirks: tuple[Quirk, ...] = ()
    url: str | None = None
    sha256: str | None = None
    size: int | None = None
    triples: int | None = None
    duplicate_of: str | None = None
    note: str | None = None

    @property
    def lenient(self) -> bool:
        return Quirk.LENIENT in self.quirks


@dataclass(frozen=True)
class OntologyEntry:
    id: str
    title: str
    release: str
    files: tuple[FileEntry, ...]
    bundled: bool = False
    license: str = ""
    license_url: str = ""
    homepage: str = ""
    namespaces: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()

    def duplicates_of(self, path: str) -> tuple[FileEntry, ...]:
        """The files that hold the same triples as ``path`` (usable when it is not)."""
        return tuple(f for f in self.files if f.duplicate_of == path)

    @property
    def primaries(self) -> tuple[FileEntry, ...]:
        """The files to load: every file that is not a stand-in for another."""
        return tuple(f for f in self.files if f.duplicate_of is None)


@dataclass(frozen=True)
class Manifest:
    path: Path
    ontologies: tuple[OntologyEntry, ...]
    format_version: int = FORMAT_VERSION

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.ontologies)

    @property
    def root(self) -> Path:
        """Where bundled files live: the manifest's own directory."""
        return self.path.parent

    def entry(self, ontology_id: str) -> OntologyEntry:
        for ontology in self.ontologies:
            if ontology.id == ontology_id:
                return ontology
        raise UnknownOntology(ontology_id)

    def install_order(self, only: Iterable[str] | None = None) -> tuple[OntologyEntry, ...]:
        """``only`` (default: every entry) plus what they require, requirements first."""
        wanted = self.ids if only is None else tuple(only)
        ordered: list[str] = []
        for ontology_id in wanted:
            self._visit(self.entry(ontology_id), ordered)
        return tuple(self.entry(i) for i in ordered)

    def _visit(self, ontology: OntologyEntry, ordered: list[str]) -> None:
        if ontology.id in ordered:
            return
        for required in ontology.requires:
            self._visit(self.entry(required), ordered)
        ordered.append(ontology.id)


def default_manifest_path() -> Path:
    return Path(__file__).resolve().parents[2] / "ontologies" / "catalogue.toml"


def load_manifest(path: Path | None = None) -> Manifest:
    """Read and check a manifest; raise :class:`ManifestError` on the first problem."""
    source = path or default_manifest_path()
    try:
        document = tomllib.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(source, f"cannot be read: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(source, f"not valid TOML: {exc}") from exc
    return parse_manifest(document, source)


def parse_manifest(document: Mapping[str, Any], path: Path) -> Manifest:
    """Build a :class:`Manifest` from a parsed TOML document."""
    reader = _Reader(path)
    unknown = set(document) - {"format_version", "ontology"}
    if unknown:
        raise ManifestError(path, f"unknown top-level key(s) {', '.join(sorted(unknown))}")
    version = document.get("format_version")
    if version != FORMAT_VERSION:
        raise ManifestError(path, f"format_version must be {FORMAT_VERSION}, not {version!r}")
    tables = reader.tables(document.get("ontology", []), "[[ontology]]")
    ontologies = tuple(reader.ontology(t, i) for i, t in enumerate(tables))
    manifest = Manifest(path, ontologies, FORMAT_VERSION)
    _check_ids(manifest)
    return manifest


def _check_ids(manifest: Manifest) -> None:
    seen: set[str] = set()
    for ontology in manifest.ontologies:
        if ontology.id in seen:
            raise ManifestError(manifest.path, f"ontology id {ontology.id!r} appears twice")
        seen.add(ontology.id)
    for ontology in manifest.ontologies:
        for required in ontology.requires:
            if required not in seen:
                raise ManifestError(
                    manifest.path, f"ontology {ontology.id!r} requires unknown {required!r}"
                )
    for ontology in manifest.ontologies:
        _check_acyclic(manifest, ontology.id, ())


def _check_acyclic(manifest: Manifest, ontology_id: str, path: tuple[str, ...]) -> None:
    if ontology_id in path:
        cycle = " -> ".join((*path, ontology_id))
        raise ManifestError(manifest.path, f"requires form a cycle: {cycle}")
    for required in manifest.entry(ontology_id).requires:
        _check_acyclic(manifest, required, (*path, ontology_id))


class _Reader:
    """Typed access to TOML values with errors that say where the bad value is."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, reason: str) -> ManifestError:
        return ManifestError(self.path, f"{where}: {reason}")

    def tables(self, value: object, where: str) -> list[Mapping[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
            raise self.fail(where, "must be an array of tables")
        return list(value)

    def string(
        self, table: Mapping[str, Any], key: str, where: str, default: str | None = None
    ) -> str:
        value = table.get(key, default)
        if not isinstance(value, str) or not value:
            raise self.fail(where, f"{key} must be a non-empty string")
        return value

    def optional(self, table: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
        value = table.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise self.fail(where, f"{key} must be a {kind.__name__}")
        return value

    def strings(self, table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(where, f"{key} must be an array of strings")
        return tuple(value)

    def ontology(self, table: Mapping[str, Any], index: int) -> OntologyEntry:
        where = f"[[ontology]] #{index + 1}"
        ontology_id = self.string(table, "id", where)
        where = f"ontology {ontology_id!r}"
        if not ONTOLOGY_ID.fullmatch(ontology_id):
            raise self.fail(where, "id must match [a-z0-9-]+ (at most 64 characters)")
        self._no_unknown(table, _ONTOLOGY_KEYS, where)
        bundled = table.get("bundled", False)
        if not isinstance(bundled, bool):
            raise self.fail(where, "bundled must be true or false")
        tables = self.tables(table.get("files", []), f"{where} files")
        files = tuple(self.file(t, bundled, where) for t in tables)
        _check_files(self, files, bundled, where)
        return OntologyEntry(
            id=ontology_id,
            title=self.string(table, "title", where),
            release=self.string(table, "release", where),
            files=files,
            bundled=bundled,
            license=self.optional(table, "license", str, where) or "",
            license_url=self.optional(table, "license_url", str, where) or "",
            homepage=self.optional(table, "homepage", str, where) or "",
            namespaces=self.strings(table, "namespaces", where),
            requires=self.strings(table, "requires", where),
        )

    def file(self, table: Mapping[str, Any], bundled: bool, owner: str) -> FileEntry:
        path = self.string(table, "path", f"{owner} file")
        where = f"{owner} file {path!r}"
        self._no_unknown(table, _FILE_KEYS, where)
        _check_relative(self, path, where)
        fmt = self.string(table, "format", where)
        if fmt not in _FORMATS:
            raise self.fail(where, f"format must be one of {', '.join(_FORMATS)}, not {fmt!r}")
        entry = FileEntry(
            path=path,
            format=_FORMATS[fmt],
            role=self._enum(FileRole, self.string(table, "role", where, "vocabulary"), where),
            quirks=tuple(self._enum(Quirk, q, where) for q in self.strings(table, "quirks", where)),
            url=self.optional(table, "url", str, where),
            sha256=self.optional(table, "sha256", str, where),
            size=self.optional(table, "bytes", int, where),
            triples=self.optional(table, "triples", int, where),
            duplicate_of=self.optional(table, "duplicate_of", str, where),
            note=self.optional(table, "note", str, where),
        )
        _check_origin(self, entry, bundled, where)
        return entry

    def _enum(self, kind: type[Quirk] | type[FileRole], value: str, where: str) -> Any:
        try:
            return kind(value)
        except ValueError:
            names = ", ".join(m.value for m in kind)
            raise self.fail(where, f"{value!r} is not one of {names}") from None

    def _no_unknown(self, table: Mapping[str, Any], known: set[str], where: str) -> None:
        unknown = set(table) - known
        if unknown:
            raise self.fail(where, f"unknown key(s) {', '.join(sorted(unknown))}")


def _check_relative(reader: _Reader, path: str, where: str) -> None:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise reader.fail(where, "path must be relative, with '/' separators and no '..'")


def _check_origin(reader: _Reader, entry: FileEntry, bundled: bool, where: str) -> None:
    if bundled:
        present = [k for k in _MIRRORED_ONLY if getattr(entry, _attr(k)) is not None]
        if present:
            raise reader.fail(where, f"a bundled file carries no {', '.join(present)}")
        return
    missing = [k for k in _MIRRORED_ONLY if getattr(entry, _attr(k)) is None]
    if missing:
        raise reader.fail(where, f"a mirrored file needs {', '.join(missing)}")
    if not _SHA256.fullmatch(entry.sha256 or ""):
        raise reader.fail(where, "sha256 must be 64 lowercase hex digits")


def _attr(key: str) -> str:
    return "size" if key == "bytes" else key


def _check_files(reader: _Reader, files: Sequence[FileEntry], bundled: bool, where: str) -> None:
    if not files:
        raise reader.fail(where, "lists no files")
    paths = [f.path for f in files]
    if len(set(paths)) != len(paths):
        raise reader.fail(where, "lists a file path twice")
    primaries = {f.path for f in files if f.duplicate_of is None}
    for entry in files:
        if entry.duplicate_of is not None and entry.duplicate_of not in primaries:
            raise reader.fail(
                where, f"{entry.path} is a duplicate_of {entry.duplicate_of!r}, not a primary file"
            )
    # The start-up loader keys a bundled graph by one file's checksum.
    if bundled and (len(files) != 1 or files[0].role is not FileRole.VOCABULARY):
        raise reader.fail(where, "a bundled ontology holds exactly one vocabulary file")
