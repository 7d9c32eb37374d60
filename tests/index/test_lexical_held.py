"""A search document saved as bytes is made again exactly, whatever its fields hold."""

from __future__ import annotations

import dataclasses
import itertools
import pickle
import zlib
from array import array
from datetime import UTC, datetime, timedelta, timezone

import pytest

from kgmem.index.lexical.docs import LexicalDoc, pack
from kgmem.index.lexical.held import READ, HeldDocs, decode, encode

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


def other(n: int) -> LexicalDoc:
    return dataclasses.replace(FULL, id=f"{FULL.id}-{n}", title=f"number {n}")


def test_held_documents_saved_and_loaded_are_made_when_read() -> None:
    docs = HeldDocs()
    docs[FULL.id] = FULL
    loaded = pickle.loads(pickle.dumps(docs, protocol=5))
    assert len(loaded) == 1 and FULL.id in loaded and list(loaded.ids()) == [FULL.id]
    assert not loaded._read  # not made yet: bytes in the block
    assert loaded.get(FULL.id) == FULL and loaded[FULL.id] is loaded[FULL.id]  # made once
    assert loaded.pop(FULL.id) == FULL and loaded.get(FULL.id) is None and not loaded
    assert (
        FULL.id not in loaded
        and pickle.loads(pickle.dumps(loaded, protocol=5)).get(FULL.id) is None
    )


def test_written_read_and_removed_documents_survive_saves() -> None:
    """Loaded, rewritten, removed and new documents, saved again: each comes back as last
    written, the removed ones do not, whatever was read in between."""
    docs = HeldDocs()
    for n in range(50):
        docs[other(n).id] = other(n)
    docs = pickle.loads(pickle.dumps(docs, protocol=5))
    assert docs.get(other(3).id) == other(3)
    docs[other(3).id] = dataclasses.replace(other(3), title="rewritten")  # read, then written
    docs[other(4).id] = dataclasses.replace(other(4), title="rewritten too")  # never read
    assert docs.pop(other(5).id) == other(5) and docs.pop(other(6).id) == other(6)
    docs[other(60).id] = other(60)
    again = pickle.loads(pickle.dumps(docs, protocol=5))
    assert len(again) == len(docs) == 49 and set(again.ids()) == set(docs.ids())
    assert again[other(3).id].title == "rewritten" and again[other(4).id].title == "rewritten too"
    assert other(5).id not in again and again.get(other(6).id) is None
    assert again[other(60).id] == other(60) and again[other(49).id] == other(49)
    assert sorted(d.id for d in again.values()) == sorted(docs.ids())


def test_loaded_documents_read_are_kept_up_to_the_bound() -> None:
    docs = HeldDocs()
    for n in range(READ + 100):
        docs[other(n).id] = other(n)
    loaded = pickle.loads(pickle.dumps(docs, protocol=5))
    first = loaded[other(0).id]
    for n in range(1, READ + 100):
        assert loaded[other(n).id] == other(n)
        loaded.get(other(0).id)  # read every time: the most recent, never let go
    assert len(loaded._read) == READ and loaded[other(0).id] is first
    assert other(1).id not in loaded._read and loaded[other(1).id] == other(1)  # made again


def _state(parts: dict[str, bytes]) -> dict[str, object]:
    return {
        "ids": list(parts),
        "block": b"".join(parts.values()),
        "ends": array("q", itertools.accumulate(map(len, parts.values()))).tobytes(),
        "crcs": array("I", map(zlib.crc32, parts.values())).tobytes(),
    }


def test_a_document_naming_a_class_is_left_out() -> None:
    docs = HeldDocs()
    docs.__setstate__(_state({"x": pickle.dumps(FULL), "y": encode(FULL)}))
    assert docs.get("x") is None and "x" not in docs  # it names LexicalDoc: refused
    assert docs.get("y") == FULL and not docs.damaged  # not damage: a foreign document


def test_a_document_whose_bytes_changed_is_never_made_and_says_so() -> None:
    """Its CRC-32 (saved with the shard) no longer matches: not decoded, left out, and the
    shard says it is damaged; a save keeps the CRC it was loaded with, so the damage is
    found again after it, never written over with a new CRC."""
    state = _state({"x": encode(FULL), "y": encode(other(1)), "z": encode(other(2))})
    block = bytearray(state["block"])  # type: ignore[arg-type]
    block[len(encode(FULL)) + 5] ^= 0x01  # one bit of y
    docs = HeldDocs()
    docs.__setstate__({**state, "block": bytes(block)})
    saved = pickle.loads(pickle.dumps(docs, protocol=5))
    assert docs.get("x") == FULL and not docs.damaged
    assert docs.get("y") is None and docs.damaged and "y" not in docs
    assert docs.get("z") == other(2)
    assert saved.get("y") is None and saved.damaged and saved.get("x") == FULL


def _crcs(n: int) -> bytes:
    return array("I", range(n)).tobytes()


@pytest.mark.parametrize(
    "state",
    [
        {"_held": {"x": b""}},  # the format before
        {"ids": ["x"], "block": b"abc", "ends": array("q", (3,)).tobytes()},  # no CRCs
        {"ids": ["x"], "block": b"abc", "ends": array("q", (3,)).tobytes(), "crcs": _crcs(2)},
        {"ids": ["x"], "block": b"abc", "ends": array("q", (4,)).tobytes(), "crcs": _crcs(1)},
        {"ids": ["x", "y"], "block": b"abc", "ends": array("q", (3,)).tobytes(), "crcs": _crcs(2)},
        {
            "ids": ["x", "x"],
            "block": b"abc",
            "ends": array("q", (1, 3)).tobytes(),
            "crcs": _crcs(2),
        },
        {"ids": ["x", "y"], "block": b"a", "ends": array("q", (2, 1)).tobytes(), "crcs": _crcs(2)},
        {"ids": [1], "block": b"abc", "ends": array("q", (3,)).tobytes(), "crcs": _crcs(1)},
        {"ids": ["x"], "block": 3, "ends": array("q", (3,)).tobytes(), "crcs": _crcs(1)},
    ],
)
def test_documents_that_do_not_add_up_are_refused(state: dict[str, object]) -> None:
    with pytest.raises((pickle.UnpicklingError, ValueError)):
        HeldDocs().__setstate__(state)
