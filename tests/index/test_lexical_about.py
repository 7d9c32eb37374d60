"""Who each slot's document is about (:mod:`kgmem.index.lexical.about`): a shard's one-hop
neighbours read from it, with no document read, are those its documents say, through adds,
rewrites, removals, compactions and saves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgmem.index.lexical import shard as shard_module
from kgmem.index.lexical.docs import FIELD_WEIGHTS, LexicalDoc, pack
from kgmem.index.lexical.facts import ANY_FORM
from kgmem.index.lexical.saved import ShardFiles
from kgmem.index.lexical.shard import Shard

ENTITIES = [f"urn:e:{name}" for name in ("ann", "bob", "cafe", "dana", "eli", "fay")]
STATUSES = ["active", "active", "archived", "quarantined", None]


def doc(n: int, kind: str, status: str | None, about: list[str], sort: str = "") -> LexicalDoc:
    return LexicalDoc(
        f"urn:d{n}",
        kind,
        f"text {n}",
        "urn:g",
        pack((("title", f"text {n}"),)),
        memory_kind=sort or None,
        status=status,
        about=tuple(dict.fromkeys(about)),
    )


def expected(shard: Shard, entity: str, first: int) -> list[str]:
    """The neighbours as the documents themselves say (each one read)."""
    near = {
        other
        for d in shard.docs.values()
        if d.kind == "memory" and d.status == "active" and entity in d.about
        for other in d.about
    }
    return sorted(near - {entity})[:first]


def every_neighbour_as_the_documents_say(shard: Shard) -> None:
    for entity in [*ENTITIES, "urn:e:nobody"]:
        for first in (1, 2, 50):
            assert shard.neighbours(entity, first) == expected(shard, entity, first), entity


@settings(max_examples=80, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.integers(0, 14),
            st.sampled_from(["memory", "memory", "page", "gone"]),  # gone: removed
            st.sampled_from(STATUSES),
            st.lists(st.sampled_from(ENTITIES), max_size=3),
        ),
        min_size=1,
        max_size=40,
    ),
    saved_at=st.lists(st.integers(0, 41), max_size=3),
)
def test_neighbours_are_what_the_active_memories_say_through_any_changes(
    ops: list[tuple[int, str, str | None, list[str]]], saved_at: list[int]
) -> None:
    """Documents added, rewritten (a new slot each time), removed, the shard compacted
    (after two dead slots here) and saved and loaded back at any point: the neighbours read
    from the slots are the entities the active memories about each entity are also about."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shard_module, "_DEAD", 2)
        shard = Shard(FIELD_WEIGHTS)
        for i, (n, kind, status, about) in enumerate(ops):
            if i in saved_at:
                shard = ShardFiles.undump(*ShardFiles.dump(shard))
            if kind == "gone":
                shard.remove(f"urn:d{n}")
            else:
                shard.add(doc(n, kind, status, about))
            every_neighbour_as_the_documents_say(shard)
        shard = ShardFiles.undump(*ShardFiles.dump(shard))
        every_neighbour_as_the_documents_say(shard)
        # a compaction keeps only the entities live slots are about
        shard.postings.compact(shard.slots.compact())
        assert set(shard.slots.about.entities) == {e for d in shard.docs.values() for e in d.about}
        every_neighbour_as_the_documents_say(shard)


def test_a_document_whose_form_has_no_code_is_read() -> None:
    """Past 255 forms (kind, memory kind, status) a slot's form has no code of its own:
    such a document is read to tell whether it is an active memory."""
    shard = Shard(FIELD_WEIGHTS)
    for n in range(300):
        status = "active" if n % 3 else "archived"
        shard.add(doc(n, "memory", status, [ENTITIES[0], f"urn:e:x{n}"], sort=f"kind{n}"))
    forms = shard.slots.facts.view().rows["form"]
    assert int(forms[-1]) == ANY_FORM  # the last ones share the catch-all code
    found = shard.neighbours(ENTITIES[0], 500)
    assert found == expected(shard, ENTITIES[0], 500)
    assert "urn:e:x298" in found and "urn:e:x297" not in found  # both read: 297 archived
    assert len(found) == 200


def test_a_damaged_saved_about_column_is_refused() -> None:
    """A saved shard whose entity codes point past its entity table does not load."""
    shard = Shard(FIELD_WEIGHTS)
    shard.add(doc(1, "memory", "active", ENTITIES[:2]))
    state = {
        k: v if k == "entities" else bytes(memoryview(v))
        for k, v in shard.slots.about.__getstate__().items()
    }  # as a load gives them
    broken = type(shard.slots.about).__new__(type(shard.slots.about))
    with pytest.raises(ValueError, match="abouts do not add up"):
        broken.__setstate__({**state, "entities": ENTITIES[:1]})
    with pytest.raises(ValueError, match="abouts do not add up"):
        broken.__setstate__({**state, "ends": memoryview(b"\x05" + bytes(7))})  # 5 of 2
    broken.__setstate__(state)  # the same, undamaged
    assert [broken.entities[c] for c in broken.of(0)] == ENTITIES[:2]
