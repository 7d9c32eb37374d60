"""IRI constants: kgmem's own namespace and the vocabularies it reuses."""

from __future__ import annotations

from enum import StrEnum

from rdflib import Namespace, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, SKOS, XSD

__all__ = [
    "DCT",
    "FOAF",
    "KGM",
    "KKO",
    "OWL",
    "PREFIXES",
    "RC",
    "RDF",
    "RDFS",
    "SDO",
    "SH",
    "SKOS",
    "XSD",
    "VocabEnum",
    "prefix_declaration",
]

KGM = Namespace("https://w3id.org/kgmem/ns#")
SDO = Namespace("https://schema.org/")
FOAF = Namespace("http://xmlns.com/foaf/0.1/")
DCT = Namespace("http://purl.org/dc/terms/")
KKO = Namespace("http://kbpedia.org/ontologies/kko#")
RC = Namespace("http://kbpedia.org/kko/rc/")


class VocabEnum(StrEnum):
    """An enumeration whose members are individuals of kgmem's vocabulary (``kgm:<value>``)."""

    @property
    def iri(self) -> URIRef:
        return URIRef(KGM[self.value])


def prefix_declaration(prefix: str, namespace: str) -> str:
    """One SPARQL ``PREFIX`` line (the prologue of a query, built from constants)."""
    return "".join(("PREFIX ", prefix, ": <", namespace, ">\n"))


#: Prefixes every named query may use without declaring them.
PREFIXES: dict[str, str] = {
    "kgm": str(KGM),
    "rdf": str(RDF),
    "rdfs": str(RDFS),
    "owl": str(OWL),
    "xsd": str(XSD),
    "skos": str(SKOS),
    "sh": str(SH),
    "schema": str(SDO),
    "foaf": str(FOAF),
    "dct": str(DCT),
    "kko": str(KKO),
    "rc": str(RC),
}
