"""The kept masks of admitted forms (:meth:`FactsView.admitted`): a filter on kind or status
applied before a search's walk gives the scores a fresh reading of every slot's form gives,
for queries taken before and after documents are added, removed and the slots renumbered."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgmem.index.lexical import shard as shard_module
from kgmem.index.lexical.docs import FIELD_WEIGHTS, LexicalDoc, pack
from kgmem.index.lexical.facts import Form
from kgmem.index.lexical.saved import ShardFiles
from kgmem.index.lexical.scores import Scores
from kgmem.index.lexical.shard import Shard

STATUSES = ("active", "archived", "quarantined")
KINDS = ("semantic", "episodic")
Filter = Callable[[Form], bool]
FILTERS: list[Filter] = [
    lambda f: f[2] == "active",
    lambda f: f[2] != "quarantined",
    lambda f: f[1] == "episodic",
    lambda f: f[0] == "page",
]


def doc(n: int, status: int, kind: int, page: bool = False) -> LexicalDoc:
    if page:
        return LexicalDoc(f"urn:d{n}", "page", "apple", "urn:g", pack((("title", "apple"),)))
    return LexicalDoc(
        f"urn:d{n}",
        "memory",
        "apple pie",
        "urn:g",
        pack((("title", "apple pie"),)),
        memory_kind=KINDS[kind],
        status=STATUSES[status],
    )


def forms_now(shard: Shard) -> dict[str, Form]:
    return {d.id: (d.kind, d.memory_kind, d.status) for d in shard.docs.values()}


@settings(max_examples=80, deadline=None)
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(
                st.just("add"),
                st.integers(0, 30),
                st.integers(0, 2),
                st.integers(0, 1),
                st.booleans(),
            ),
            st.tuples(st.just("remove"), st.integers(0, 30)),
            st.tuples(st.just("query"), st.integers(0, 3)),
            st.tuples(st.just("save")),
        ),
        min_size=1,
        max_size=60,
    ),
    late=st.integers(0, 3),
)
def test_a_filter_keeps_what_each_slots_form_admits_through_any_changes(
    ops: list[tuple[object, ...]], late: int
) -> None:
    """Queries filtered at any point (masks kept, extended, dropped at a renumbering: a
    compaction once dead slots outnumber the live ones and 8), each right after it was
    scored and, scored again, filtered later, when the shard has changed since."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shard_module, "_DEAD", 8)
        run(ops, late)


def run(ops: list[tuple[object, ...]], late: int) -> None:
    shard = Shard(FIELD_WEIGHTS)
    taken: list[tuple[Scores, dict[str, Form]]] = []  # scored, not filtered yet
    for op in ops:
        match op:
            case ("add", int(n), int(status), int(kind), bool(page)):
                for _ in range(3):  # rewritten: dead slots, so compactions happen
                    shard.add(doc(n, status, kind, page))
            case ("remove", int(n)):
                shard.remove(f"urn:d{n}")
            case ("query", int(f)):
                if taken:  # one scored earlier, filtered now, before a fresh one
                    check(*taken.pop(0), FILTERS[f])
                scores = shard.score(["appl"])
                forms = forms_now(shard)
                check(scores, forms, FILTERS[f])
                taken.append((shard.score(["appl"]), forms_now(shard)))
            case ("save",):
                shard = ShardFiles.undump(*ShardFiles.dump(shard))
    for scores, forms in taken:  # scored then, filtered now
        check(scores, forms, FILTERS[late])


def check(scores: Scores, forms: dict[str, Form], admits: Filter) -> None:
    """``scores`` filtered by ``admits`` keep what they listed (less those removed since)
    whose form ``admits`` takes, the forms as they were when they were scored."""
    listed = dict(scores.items())
    scores.keep(admits)
    assert dict(scores.items()) == {k: v for k, v in listed.items() if admits(forms[k])}


def test_a_kept_mask_is_extended_and_a_longer_one_serves_an_older_query() -> None:
    """A mask kept for fewer rows is extended when rows were appended; a query scored before
    that (fewer rows) reads the longer mask's start."""
    shard = Shard(FIELD_WEIGHTS)
    for n in range(6):
        shard.add(doc(n, n % 2, 0))
    first = shard.score(["appl"])
    first.keep(FILTERS[0])
    older = shard.score(["appl"])
    for n in range(6, 12):
        shard.add(doc(n, n % 3, 1))
    newer = shard.score(["appl"])
    newer.keep(FILTERS[0])  # extends the mask
    older.keep(FILTERS[0])  # reads its start
    assert sorted(k for k, _ in newer.items()) == [
        f"urn:d{n}" for n in sorted(range(12), key=str) if (n % 2 if n < 6 else n % 3) == 0
    ]
    assert sorted(k for k, _ in older.items()) == ["urn:d0", "urn:d2", "urn:d4"]
    view = shard.slots.facts.view()
    assert list(view.admitted([0])) == list(view.rows["form"] != 0)


def test_a_query_scored_before_a_renumbering_is_filtered_by_its_own_rows() -> None:
    """Slots renumbered between two queries with the same filter: the one scored before is
    filtered by the forms its slots had, and the mask it made is not kept for the new rows
    (nor the other way round)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(shard_module, "_DEAD", 8)
        shard = Shard(FIELD_WEIGHTS)
        for n in range(10):
            shard.add(doc(n, n % 3, 0))
        old, old_forms = shard.score(["appl"]), forms_now(shard)
        older, older_forms = shard.score(["appl"]), forms_now(shard)
        generation = shard.slots.facts._generation
        for n in range(10):
            for _ in range(3):
                shard.add(doc(n, (n + 1) % 3, 0))  # each one's status changed
        assert shard.slots.facts._generation > generation  # renumbered
        check(old, old_forms, FILTERS[0])  # before any query of the new rows
        new = shard.score(["appl"])
        check(new, forms_now(shard), FILTERS[0])
        check(older, older_forms, FILTERS[0])  # after one
        assert sorted(dict(new.items())) == ["urn:d2", "urn:d5", "urn:d8"]
        kept = set(dict(old.items()))  # active then; those rewritten before the renumbering
        assert kept and kept <= {"urn:d0", "urn:d3", "urn:d6", "urn:d9"}  # are not listed
