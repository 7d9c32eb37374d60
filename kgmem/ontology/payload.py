"""From verified file bytes to one N-Triples payload per named graph.

Every file is parsed here, in memory, before the store is touched: a file that does not parse
(or parses to a different number of triples than the manifest lists) fails the install while
the catalogue is still as it was. The triples of all the files bound for one graph are merged
into a set (the KBpedia typologies repeat their ancestors: 645k parsed triples are 176k
distinct ones) and serialized once as N-Triples, so the store does one bulk load per graph
instead of one per file. Blank nodes are renamed per file so two files' ``_:b0`` stay apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyoxigraph as ox

from kgmem.errors import OntologyParseError
from kgmem.ontology.manifest import Quirk
from kgmem.store import RdfFormat

__all__ = [
    "Payload",
    "SourceFile",
    "apply_quirks",
    "build_payload",
    "format_for_suffix",
    "ox_format",
    "parse_triples",
]

_PREFIX_LINES = (
    b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
    b"@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
)
_HTTP_SCHEMA, _HTTPS_SCHEMA = b"<http://schema.org/", b"<https://schema.org/"
_OX_FORMATS = {
    RdfFormat.TURTLE: ox.RdfFormat.TURTLE,
    RdfFormat.NTRIPLES: ox.RdfFormat.N_TRIPLES,
    RdfFormat.RDFXML: ox.RdfFormat.RDF_XML,
    RdfFormat.N3: ox.RdfFormat.N3,
}
_SUFFIXES = {
    ".ttl": RdfFormat.TURTLE,
    ".turtle": RdfFormat.TURTLE,
    ".nt": RdfFormat.NTRIPLES,
    ".ntriples": RdfFormat.NTRIPLES,
    ".rdf": RdfFormat.RDFXML,
    ".owl": RdfFormat.RDFXML,
    ".xml": RdfFormat.RDFXML,
    ".n3": RdfFormat.N3,
}


def ox_format(fmt: RdfFormat) -> ox.RdfFormat:
    """The pyoxigraph format of a catalogue file format (triples-only syntaxes)."""
    try:
        return _OX_FORMATS[fmt]
    except KeyError:
        raise ValueError(f"{fmt.value} is not a catalogue file format") from None


def format_for_suffix(name: str) -> RdfFormat | None:
    """Guess a file's syntax from its suffix.

    >>> format_for_suffix("foaf.rdf")
    <RdfFormat.RDFXML: 'rdfxml'>
    >>> format_for_suffix("notes.txt") is None
    True
    """
    dot = name.rfind(".")
    return _SUFFIXES.get(name[dot:].lower()) if dot >= 0 else None


def apply_quirks(data: bytes, quirks: Iterable[Quirk]) -> bytes:
    """Apply the byte-level quirks (``lenient`` is a parser flag, not a rewrite)."""
    wanted = set(quirks)
    if Quirk.PREPEND_OWL_RDFS_PREFIXES in wanted:
        data = _PREFIX_LINES + data
    if Quirk.REWRITE_HTTP_SCHEMA_ORG in wanted:
        data = data.replace(_HTTP_SCHEMA, _HTTPS_SCHEMA)
    return data


@dataclass(frozen=True)
class SourceFile:
    """One file's verified bytes, ready to parse. ``label`` names it in errors."""

    label: str
    data: bytes
    fmt: RdfFormat
    quirks: tuple[Quirk, ...] = ()
    base_iri: str | None = None
    expected_triples: int | None = None


@dataclass(frozen=True)
class Payload:
    """The distinct triples of some files, as N-Triples (lenient to reload: already checked)."""

    data: bytes
    triples: int
    file_triples: tuple[int, ...]


def parse_triples(source: SourceFile) -> set[ox.Triple]:
    """The distinct triples of one file after its quirks; raise OntologyParseError if broken."""
    data = apply_quirks(source.data, source.quirks)
    try:
        parsed = {
            quad.triple
            for quad in ox.parse(
                data,
                ox_format(source.fmt),
                base_iri=source.base_iri,
                without_named_graphs=True,
                rename_blank_nodes=True,
                lenient=Quirk.LENIENT in source.quirks,
            )
        }
    except SyntaxError as exc:
        reason = str(exc).splitlines()[0] if str(exc) else "syntax error"
        raise OntologyParseError(source.label, f"not valid {source.fmt.value}: {reason}") from exc
    except (OSError, ValueError) as exc:
        raise OntologyParseError(source.label, f"cannot be parsed: {exc}") from exc
    expected = source.expected_triples
    if expected is not None and len(parsed) != expected:
        raise OntologyParseError(
            source.label, f"parsed {len(parsed)} triples, the manifest lists {expected}"
        )
    return parsed


def build_payload(sources: Sequence[SourceFile]) -> Payload:
    """Parse every source and merge their triples into one N-Triples payload."""
    merged: set[ox.Triple] = set()
    counts: list[int] = []
    for source in sources:
        triples = parse_triples(source)
        counts.append(len(triples))
        merged |= triples
    data = ox.serialize(merged, format=ox.RdfFormat.N_TRIPLES) if merged else b""
    assert isinstance(data, bytes)
    return Payload(data, len(merged), tuple(counts))
