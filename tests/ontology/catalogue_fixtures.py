"""Small ontology files, a mirror and a manifest built from them, and a loopback HTTP server.

Every catalogue test builds its own mirror in ``tmp_path``, so none needs ``../shared``.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ALPHA_TTL = """@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix a: <http://example.org/alpha#> .
a:Thing a owl:Class ; rdfs:label "thing" .
a:Gadget a owl:Class ; rdfs:subClassOf a:Thing ; rdfs:label "gadget" .
a:owns a owl:ObjectProperty ; rdfs:label "owns" .
a:weight a owl:DatatypeProperty .
"""
# SHACL that uses http://schema.org/ and one IRI with a second '#': needs both quirks.
ALPHA_SHAPES = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix schema: <http://schema.org/> .
schema:PersonShape a sh:NodeShape ; sh:targetClass schema:Person .
<http://schema.org/validation#Bad#Iri> a sh:NodeShape .
"""
# The typology style: owl: and rdfs: used without being declared.
BETA_ONE = """@prefix b: <http://example.org/beta#> .
@prefix a: <http://example.org/alpha#> .
b:Robot a owl:Class ; rdfs:subClassOf a:Gadget .
_:x rdfs:label "blank in one" .
"""
BETA_TWO = """@prefix b: <http://example.org/beta#> .
b:Robot a owl:Class .
b:Drone a owl:Class ; rdfs:subClassOf b:Robot .
_:x rdfs:label "blank in two" .
"""
GAMMA_NT = (
    "<http://example.org/gamma#G> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
    "<http://www.w3.org/2000/01/rdf-schema#Class> .\n"
)
GAMMA_TTL = "<http://example.org/gamma#G> a <http://www.w3.org/2000/01/rdf-schema#Class> .\n"
DELTA_RDF = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
         xmlns:rdfs="http://www.w3.org/2000/01/rdf-schema#">
  <rdf:Property rdf:about="http://example.org/delta#p"><rdfs:label>p</rdfs:label></rdf:Property>
  <rdf:Property rdf:about="http://example.org/delta#p"/>
</rdf:RDF>
"""


@dataclass
class FixtureFile:
    path: str
    text: str
    fmt: str
    triples: int
    role: str = "vocabulary"
    quirks: tuple[str, ...] = ()
    duplicate_of: str | None = None


@dataclass
class FixtureOntology:
    id: str
    files: list[FixtureFile]
    requires: tuple[str, ...] = ()
    release: str = "1.0"
    title: str = field(default="")


def standard_ontologies() -> list[FixtureOntology]:
    """alpha (vocabulary + shapes), beta (2 files, requires alpha), gamma (a duplicate), delta."""
    lenient_rewrite = ("lenient", "rewrite-http-schema-org")
    return [
        FixtureOntology(
            "alpha",
            [
                FixtureFile("alpha/alpha.ttl", ALPHA_TTL, "turtle", 8),
                FixtureFile(
                    "alpha/alpha-shapes.shacl", ALPHA_SHAPES, "turtle", 3, "shapes", lenient_rewrite
                ),
            ],
        ),
        FixtureOntology(
            "beta",
            [
                FixtureFile("beta/one.ttl", BETA_ONE, "turtle", 3, quirks=PREPEND),
                FixtureFile("beta/two.ttl", BETA_TWO, "turtle", 4, quirks=PREPEND),
            ],
            requires=("alpha",),
        ),
        FixtureOntology(
            "gamma",
            [
                FixtureFile("gamma/g.nt", GAMMA_NT, "ntriples", 1),
                FixtureFile("gamma/g.ttl", GAMMA_TTL, "turtle", 1, duplicate_of="gamma/g.nt"),
            ],
        ),
        FixtureOntology("delta", [FixtureFile("delta/d.rdf", DELTA_RDF, "rdfxml", 2)]),
    ]


PREPEND = ("prepend-owl-rdfs-prefixes",)


def write_mirror(root: Path, ontologies: list[FixtureOntology]) -> Path:
    for ontology in ontologies:
        for file in ontology.files:
            target = root / file.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file.text.encode())
    return root


def _toml_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def manifest_text(ontologies: list[FixtureOntology], url_base: str = "http://127.0.0.1:9") -> str:
    """A manifest for ``ontologies``; digests and sizes from the texts, urls under url_base."""
    lines = ["format_version = 1", ""]
    for ontology in ontologies:
        lines += [
            "[[ontology]]",
            f'id = "{ontology.id}"',
            f'title = "{ontology.title or ontology.id.title()}"',
            f'release = "{ontology.release}"',
            "bundled = false",
            f"requires = {_toml_list(ontology.requires)}",
            "",
        ]
        for file in ontology.files:
            data = file.text.encode()
            lines += [
                "[[ontology.files]]",
                f'path = "{file.path}"',
                f'url = "{url_base}/{file.path}"',
                f'sha256 = "{hashlib.sha256(data).hexdigest()}"',
                f"bytes = {len(data)}",
                f"triples = {file.triples}",
                f'format = "{file.fmt}"',
                f'role = "{file.role}"',
                f"quirks = {_toml_list(file.quirks)}",
            ]
            if file.duplicate_of:
                lines.append(f'duplicate_of = "{file.duplicate_of}"')
            lines.append("")
    return "\n".join(lines)


def write_manifest(
    path: Path, ontologies: list[FixtureOntology], url_base: str = "http://127.0.0.1:9"
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(manifest_text(ontologies, url_base), encoding="utf-8")
    return path


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def http_server(directory: Path) -> Iterator[str]:
    """A real HTTP server on a free loopback port serving ``directory``; yields its base URL."""
    handler = partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
