"""IRI constants: kgmem's own namespace and the vocabularies it reuses."""

from __future__ import annotations

from enum import StrEnum
from hashlib import sha256

from rdflib import Literal, Namespace, URIRef
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
    "claim_key",
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


def claim_key(subject: URIRef, predicate: URIRef, value: URIRef | Literal) -> str:
    """The value of a claim's ``kgm:claimKey``: its subject, predicate and object or value
    hashed (negation aside, so a claim and its negation share it). The gate finds the
    claims of a fact by it, and so does the projection."""
    text = "\x1f".join((subject.n3(), predicate.n3(), value.n3()))
    return sha256(text.encode()).hexdigest()[:32]
