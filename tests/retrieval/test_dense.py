"""Dense vectors (the embedding extra): meaning finds what shares no word with the query.

The model is a real model2vec static model, built here from a word-level tokenizer and
hand-set vectors (car, automobile and vehicle mean one thing; dog and puppy another), so
the test knows which memories must be near which query.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from model2vec import StaticModel
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from kgmem.api.services import build_services, load_embedder
from kgmem.config import load_settings
from kgmem.index.dense import DenseVectors, StaticEmbedder, embed_text
from kgmem.index.lexical import LexicalIndex
from kgmem.retrieval import MemorySearch
from tests.memory.world import World
from tests.retrieval.support import QUERIES, remember, remember_for, searcher

_MEANINGS = {
    "car": 0,
    "automobile": 0,
    "vehicle": 0,
    "sedan": 0,
    "dog": 1,
    "puppy": 1,
    "bank": 2,
    "money": 2,
    "savings": 2,
}


def tiny_model(directory: Path) -> Path:
    words = ["[UNK]", "[PAD]", *_MEANINGS]
    tokenizer = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, "[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    vectors = np.zeros((len(words), 3), np.float32)
    for i, word in enumerate(words):
        if word in _MEANINGS:
            vectors[i, _MEANINGS[word]] = 1.0
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True).save_pretrained(
        str(directory)
    )
    return directory


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return tiny_model(tmp_path / "static")


def dense_index(world: World, model: Path) -> LexicalIndex:
    return LexicalIndex(world.store, QUERIES, embedder=StaticEmbedder(model))


def dense_search(world: World, model: Path) -> MemorySearch:
    return searcher(world, dense_index(world, model))


def test_a_paraphrase_sharing_no_word_is_found_by_meaning(world: World, model: Path) -> None:
    auto = remember(world, "New automobile", "I finally bought the automobile")
    remember(world, "Adopted a puppy", "We adopted a puppy last week")
    remember(world, "Savings account", "I moved my savings to another bank")
    lexical = MemorySearch(
        world.store, QUERIES, LexicalIndex(world.store, QUERIES), world.clock, world.lifecycle
    )
    assert lexical.memory_search("alice", "which car") == []  # no word in common
    hits = dense_search(world, model).memory_search("alice", "which car")
    assert [h.id for h in hits] == [str(auto)]
    assert any(w.startswith("similar meaning (1.00)") for w in hits[0].why)


def test_a_word_match_still_outranks_a_match_in_meaning_alone(world: World, model: Path) -> None:
    auto = remember(world, "New automobile", "I finally bought the automobile")
    car = remember(world, "Car trouble", "The car broke down on the highway")
    hits = dense_search(world, model).memory_search("alice", "car")
    assert [h.id for h in hits] == [str(car), str(auto)]
    assert any(w.startswith("similar meaning") for w in hits[1].why)
    assert any("car" in w for w in hits[0].why)


def test_vectors_follow_writes_and_forgets(world: World, model: Path) -> None:
    index = dense_index(world, model)
    search = searcher(world, index)
    remember(world, "Adopted a puppy", "We adopted a puppy last week")
    assert search.memory_search("alice", "sedan") == []  # built, and nothing means a car
    later = remember(world, "New automobile", "I finally bought the automobile")
    index.refresh("alice", [later])  # what the change feed does after the commit
    assert [h.id for h in search.memory_search("alice", "sedan")] == [str(later)]
    world.lifecycle.forget("alice", later)
    index.refresh("alice", [later])
    assert search.memory_search("alice", "sedan") == []


def test_another_users_memories_are_never_near(world: World, model: Path) -> None:
    remember_for(world, "bob", "Bob's automobile", "My automobile is red")
    assert dense_search(world, model).memory_search("alice", "car") == []


def test_dense_vectors_reuse_rows_and_stay_exact() -> None:
    class Axis:
        dimensions = 2

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] if "x" in t else [0.0, 1.0] for t in texts], np.float32)

    vectors = DenseVectors(Axis())
    for i in range(100):
        vectors.add(f"d{i}", "x" if i % 2 else "y")
    assert len(vectors) == 100
    near = vectors.nearest("x", 100)
    assert set(near) == {f"d{i}" for i in range(1, 100, 2)}
    for i in range(1, 100, 2):
        vectors.remove(f"d{i}")
    assert vectors.nearest("x", 100) == {}
    vectors.add("d0", "x")  # re-added with other text: one row, the new vector
    assert vectors.nearest("x", 5) == {"d0": 1.0} and len(vectors) == 50


def test_the_embedded_text_is_what_a_document_says() -> None:
    fields = (("title", "Car"), ("tag", "vehicles"), ("quote", "my car"), ("body", "Car"))
    assert embed_text(fields) == "Car\nmy car"


def test_services_load_the_default_model_and_refuse_a_broken_configured_one(
    tmp_path: Path, model: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "home"
    plain = load_settings(env={"KGMEM_HOME": str(home)})
    assert load_embedder(plain) is None  # no model anywhere: search is lexical
    tiny_model(plain.embedding_dir)
    services = build_services(plain)
    try:
        assert services.lexical.dense
    finally:
        services.close()
    empty = tmp_path / "empty"
    empty.mkdir()
    broken = load_settings(env={"KGMEM_HOME": str(home), "KGMEM_EMBEDDING_MODEL": str(empty)})
    with pytest.raises(Exception, match=r"embedding model .*empty: no model.safetensors"):
        load_embedder(broken)
    (plain.embedding_dir / "model.safetensors").write_bytes(b"not a model")
    with caplog.at_level(logging.WARNING, logger="kgmem.api"):
        assert load_embedder(plain) is None
    assert "unreadable" in caplog.text and "search runs without vectors" in caplog.text
