"""A search document saved as bytes is made again exactly, whatever its fields hold."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta, timezone

from kgmem.index.lexical.docs import LexicalDoc, pack
from kgmem.index.lexical.held import HeldDocs, decode, encode

FULL = LexicalDoc(
    id="https://w3id.org/kgmem/user/alice/memory/0f3a",
    kind="memory",
    title="Zoë's café on Straße 5 — 🥐",
    graph="https://w3id.org/kgmem/user/alice/kg",
    packed=pack([("title", "Zoë's café"), ("quote", "we met at 7:30\nthen left")]),
    excerpt="first line",
    path=None,
    memory_kind="episodic",
    status="active",
    tags=("food", "paris"),
    about=("https://w3id.org/kgmem/user/alice/entity/zoe",),
    confidence=0.85,
    strength=1e-9,
    pinned=True,
    use_count=3,
    recorded_at=datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC),
    last_used_at=datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    occurred_at=datetime(2026, 2, 28, 9, 30, tzinfo=timezone(timedelta(hours=2))),
    valid_from=None,
    valid_until=datetime(9999, 12, 31, tzinfo=UTC),
    chats=("c1", "c2"),
    names=frozenset({"zoe", "cafe"}),
    states_time=True,
    asks=True,
)


def test_every_field_comes_back_equal() -> None:
    back = decode(encode(FULL))
    assert back == FULL and back.fields == FULL.fields and back.moment == FULL.moment
    bare = LexicalDoc(id="n1", kind="note", title="", graph="g", packed="")
    assert decode(encode(bare)) == bare


def test_held_documents_saved_and_loaded_are_made_when_read() -> None:
    docs = HeldDocs()
    docs[FULL.id] = FULL
    loaded = pickle.loads(pickle.dumps(docs))
    assert len(loaded) == 1 and FULL.id in loaded
    assert isinstance(loaded.__getstate__()["_held"][FULL.id], bytes)  # not made yet
    assert loaded.get(FULL.id) == FULL and loaded[FULL.id] is loaded[FULL.id]  # made once
    assert loaded.pop(FULL.id) == FULL and loaded.get(FULL.id) is None and not loaded


def test_a_document_naming_a_class_is_left_out() -> None:
    docs = HeldDocs()
    docs.__setstate__({"_held": {"x": pickle.dumps(FULL), "y": encode(FULL)}})
    assert docs.get("x") is None and "x" not in docs  # it names LexicalDoc: refused
    assert docs.get("y") == FULL
