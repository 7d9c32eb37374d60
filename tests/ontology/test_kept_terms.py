"""The catalogue's term index and vocabulary kept on disk between processes.

A command that searches terms or drafts a memory must not read the whole catalogue from the
store again (seconds with KBpedia): it opens the file made for the catalogue's version.
These tests hold it to answering exactly what an index made afresh answers, and to never
being trusted for another catalogue or when damaged.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from kgmem.ontology.search import TermIndex
from kgmem.ontology.service import OntologyService
from kgmem.ontology.vocabulary import TermKind, Vocabulary
from kgmem.ontology.vocabulary.codec import decode_vocabulary, encode_vocabulary
from kgmem.store import OxigraphStore, QueryRegistry, RdfFormat, catalogue_graph
from tests.ontology.conftest import C

QUERIES = ["person", "chemical element", "firm", "birth date", "human", "dogs", "a", "zzz"]
EXTRA = b"""@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<http://example.org/extra#Sourdough> a owl:Class ; rdfs:label "sourdough starter" .
"""


def _same(a: Vocabulary, b: Vocabulary) -> None:
    assert a.parents == b.parents and a.classes == b.classes and a.origin == b.origin
    assert a.labels == b.labels and a.alt_labels == b.alt_labels
    assert a.properties == b.properties
    assert {k: dict(v) for k, v in a.disjoint.items()} == {
        k: dict(v) for k, v in b.disjoint.items()
    }


def test_vocabulary_round_trips(fixture_vocab: Vocabulary) -> None:
    again = decode_vocabulary(encode_vocabulary(fixture_vocab))
    _same(again, fixture_vocab)
    assert again.disjointness(C.Dog, C.Company) == fixture_vocab.disjointness(C.Dog, C.Company)
    assert again.ancestors(C.Dog) == fixture_vocab.ancestors(C.Dog)


def test_kept_file_answers_as_a_fresh_index(fixture_vocab: Vocabulary, tmp_path: Path) -> None:
    path = tmp_path / "catalogue.sqlite3"
    fresh = TermIndex.build(fixture_vocab)
    TermIndex.build(fixture_vocab, path, "v1").close()
    kept = TermIndex.open(path, "v1")
    assert kept is not None
    for text in QUERIES:
        for kind in (None, TermKind.CLASS, TermKind.PROPERTY):
            assert kept.search(text, 20, kind) == fresh.search(text, 20, kind), text
        assert kept.exact(text) == fresh.exact(text)
    vocab = kept.vocabulary()
    assert vocab is not None
    _same(vocab, fixture_vocab)
    assert fresh.vocabulary() is None  # an index in memory keeps no vocabulary


def test_kept_file_is_never_trusted_for_another_version_or_damaged(
    fixture_vocab: Vocabulary, tmp_path: Path
) -> None:
    path = tmp_path / "catalogue.sqlite3"
    assert TermIndex.open(path, "v1") is None  # none yet
    TermIndex.build(fixture_vocab, path, "v1").close()
    assert TermIndex.open(path, "v2") is None
    with sqlite3.connect(path) as db:  # the vocabulary changed under its checksum
        db.execute("UPDATE meta SET value = ? WHERE key = 'vocabulary'", (b'{"format": 1}',))
    kept = TermIndex.open(path, "v1")
    assert kept is not None and kept.vocabulary() is None
    kept.close()
    path.write_bytes(b"not a database at all" * 100)
    assert TermIndex.open(path, "v1") is None
    assert not list(tmp_path.glob("*.tmp"))


def test_service_keeps_the_catalogue_and_follows_its_changes(
    fixture_store: OxigraphStore, queries: QueryRegistry, tmp_path: Path
) -> None:
    path = tmp_path / "index" / "catalogue.sqlite3"
    first = OntologyService(fixture_store, queries, path)
    assert first.keep() is True  # made now
    assert first.keep() is False  # already the catalogue's
    assert path.is_file()
    made = path.stat().st_mtime_ns

    # another process: answers from the file, without making it again
    second = OntologyService(fixture_store, queries, path)
    assert second.search("firm")[0].term == C.Company
    _same(second.vocabulary(), OntologyService(fixture_store, queries).vocabulary())
    assert path.stat().st_mtime_ns == made

    # the catalogue changes: the next process finds the new term, the file is made again
    fixture_store.load(EXTRA, RdfFormat.TURTLE, catalogue_graph("extra"))
    third = OntologyService(fixture_store, queries, path)
    hits = third.search("sourdough")
    assert hits and str(hits[0].term) == "http://example.org/extra#Sourdough"
    assert path.stat().st_mtime_ns != made

    # a damaged file is made again, not trusted
    path.write_bytes(b"\0" * 4096)
    fourth = OntologyService(fixture_store, queries, path)
    assert fourth.search("sourdough")[0].label == "sourdough starter"
    assert TermIndex.open(path, fourth._version()) is not None
