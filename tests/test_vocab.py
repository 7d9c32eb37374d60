"""The vocabulary constants: terms made once, equal to what rdflib makes, names still closed."""

from __future__ import annotations

import pytest
from rdflib import URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH, SKOS, XSD

from kgmem.memory.model import MemoryStatus, SourceType
from kgmem.store import UserGraphs
from kgmem.vocab import KGM, SDO, TermNamespace


def test_an_open_namespace_makes_each_term_once() -> None:
    ns = TermNamespace("https://example.org/ns#")
    first = ns.widget
    assert first == URIRef("https://example.org/ns#widget")
    assert type(first) is URIRef
    assert ns.widget is first  # kept, not made again
    assert ns["widget"] == first
    assert KGM.claim is KGM.claim and SDO.Person is SDO.Person


def test_an_open_namespace_refuses_python_special_names() -> None:
    with pytest.raises(AttributeError):
        _ = TermNamespace("https://example.org/ns#").__wrapped__


@pytest.mark.parametrize("namespace", [OWL, RDF, RDFS, SH, SKOS, XSD])
def test_rdflib_namespaces_keep_their_terms_and_closed_ones_stay_closed(namespace: type) -> None:
    base = str(namespace._NS)  # type: ignore[attr-defined]
    for name in namespace.__annotations__:
        term = getattr(namespace, name)
        assert term == URIRef(base + name) and type(term) is URIRef
        assert getattr(namespace, name) is term
    if namespace._fail:  # type: ignore[attr-defined]
        with pytest.raises(AttributeError, match="not in namespace"):
            _ = namespace.noSuchTermAnywhere  # type: ignore[attr-defined]


def test_a_user_graph_is_one_object() -> None:
    graphs = UserGraphs("alice")
    assert graphs.kg is UserGraphs("alice").kg
    assert graphs.kg == URIRef("urn:kgmem:user:alice:kg")
    assert graphs.kg != UserGraphs("bob").kg


def test_a_vocabulary_individual_is_one_term() -> None:
    assert MemoryStatus.ACTIVE.iri == KGM.active and type(MemoryStatus.ACTIVE.iri) is URIRef
    assert MemoryStatus.ACTIVE.iri is MemoryStatus.ACTIVE.iri
    assert SourceType.USER_MESSAGE.iri == URIRef("https://w3id.org/kgmem/ns#userMessage")
