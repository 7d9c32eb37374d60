"""IRI constants: kgmem's own namespace and the vocabularies it reuses."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from hashlib import sha256

from rdflib import Literal, Namespace, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, SKOS, XSD, DefinedNamespace

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


class TermNamespace(Namespace):
    """An rdflib ``Namespace`` that makes each term once.

    rdflib builds (and checks) a new ``URIRef`` at every ``KGM.claim`` (~4 µs); a write batch
    reads thousands. Here the first read of a name keeps its term on the instance, so later
    reads are plain attribute lookups of the very same value.
    """

    def __getattr__(self, name: str) -> URIRef:
        term = super().__getattr__(name)
        self.__dict__[name] = term
        return term


def _keep_terms(namespace: type[DefinedNamespace]) -> None:
    """rdflib resolves ``RDF.type`` and the other terms of its closed namespaces through a
    metaclass ``__getattr__`` at every read (~2 µs); setting each declared term on the class
    once, to the term rdflib itself returns, makes later reads plain lookups. Names stay
    closed: an undeclared one still goes through rdflib and fails there."""
    for name in namespace.__annotations__:
        type.__setattr__(namespace, name, namespace[name])


for _closed in (OWL, RDF, RDFS, SH, SKOS, XSD):
    _keep_terms(_closed)

KGM = TermNamespace("https://w3id.org/kgmem/ns#")
SDO = TermNamespace("https://schema.org/")
FOAF = TermNamespace("http://xmlns.com/foaf/0.1/")
DCT = TermNamespace("http://purl.org/dc/terms/")
KKO = TermNamespace("http://kbpedia.org/ontologies/kko#")
RC = TermNamespace("http://kbpedia.org/kko/rc/")


class VocabEnum(StrEnum):
    """An enumeration whose members are individuals of kgmem's vocabulary (``kgm:<value>``)."""

    @property
    def iri(self) -> URIRef:
        return _individual(self._value_)


@lru_cache(maxsize=1024)
def _individual(value: str) -> URIRef:
    """``kgm:<value>``, made once: every record written names its kind, status, source type,
    support and authority this way."""
    return URIRef(KGM[value])


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
