"""Ontology fixtures: a hand-checked miniature catalogue in a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import Namespace

from kgmem.ontology.vocabulary import Vocabulary, load_vocabulary
from kgmem.store import OxigraphStore, QueryRegistry, RdfFormat, catalogue_graph

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "ontology" / "fixture.ttl"
C = Namespace("http://example.org/concept/")
T = Namespace("http://example.org/typology#")
P = Namespace("http://example.org/prop/")
FIXTURE_GRAPH = catalogue_graph("fixture")


@pytest.fixture
def fixture_store(store: OxigraphStore) -> Iterator[OxigraphStore]:
    store.load(FIXTURE.read_bytes(), RdfFormat.TURTLE, FIXTURE_GRAPH)
    yield store


@pytest.fixture
def fixture_vocab(fixture_store: OxigraphStore, queries: QueryRegistry) -> Vocabulary:
    return load_vocabulary(fixture_store, queries, [FIXTURE_GRAPH])
