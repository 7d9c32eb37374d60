"""The lexical shard's arrays against a plain-dictionary BM25 written from the formula.

The shard scores postings as arrays over document slots, marks removed documents dead and
renumbers the slots once as many are dead as live. Whatever sequence of adds, re-adds and
removals happened, every score must be exactly the one computed from scratch over the
documents present, the descending walk must be by score then id, and the periods a range
meets must be the ones a direct check finds.
"""

from __future__ import annotations

import bisect
import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgmem.index.lexical.docs import FIELD_WEIGHTS, LexicalDoc, pack
from kgmem.index.lexical.moments import Timeline
from kgmem.index.lexical.saved import ShardFiles
from kgmem.index.lexical.scores import Scores
from kgmem.index.lexical.shard import Shard

WORDS = ["apple", "river", "stone", "garden", "violin", "harbor", "lantern", "meadow"]
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def doc(n: int, text: str, **extra: object) -> LexicalDoc:
    return LexicalDoc(f"urn:d{n}", "memory", text, "urn:g", pack((("title", text),)), **extra)  # type: ignore[arg-type]


def reference(shard: Shard, terms: list[str]) -> dict[str, float]:
    """BM25 over ``shard.docs`` from scratch, in the order the shard adds terms up."""
    docs = {d.id: d.terms(FIELD_WEIGHTS) for d in shard.docs.values()}
    n = len(docs)
    postings: dict[str, dict[str, int]] = {}
    for doc_id, counts in docs.items():
        for term, tf in counts.items():
            postings.setdefault(term, {})[doc_id] = tf
    norms = {
        doc_id: 1.2 * (1 - 0.75 + 0.75 * sum(c.values()) / shard.calibrated)
        for doc_id, c in docs.items()
    }
    present = sorted({t for t in terms if t in postings}, key=lambda t: len(postings[t]))
    acc: dict[str, float] = {}
    for i, term in enumerate(present):
        df = len(postings[term])
        weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * 2.2
        for doc_id, tf in postings[term].items():
            if i > 0 and df > 500 and 2 * df > n and doc_id not in acc:
                continue
            acc[doc_id] = acc.get(doc_id, 0.0) + weight * tf / (tf + norms[doc_id])
    return acc


def descending(scores: Scores) -> list[tuple[float, str]]:
    """(score, doc id) in the order a search walks them: every chunk, in turn."""
    return [(score, doc_id) for chunk in scores.chunks() for score, doc_id, _ in chunk]


def texts() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.integers(0, 11), st.one_of(st.none(), texts())), min_size=1, max_size=40
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    saved_at=st.integers(0, 41),
)
def test_scores_equal_a_fresh_bm25_after_any_adds_and_removals(
    ops: list[tuple[int, str | None]], query: list[str], saved_at: int
) -> None:
    """``saved_at``: the shard is saved and loaded back after that many operations (its
    postings are then read from the packed arrays a load keeps, and copied out to change)."""
    shard = Shard(FIELD_WEIGHTS)
    for i, (n, text) in enumerate(ops):  # None removes the document, text (re)writes it
        if i == saved_at:
            shard = ShardFiles.undump(*ShardFiles.dump(shard))
        if text is None:
            shard.remove(f"urn:d{n}")
        else:
            shard.add(doc(n, text))
        shard.calibrate()
    scores = shard.score(query)
    expected = reference(shard, query)
    assert dict(scores.items()) == expected  # exact: the same arithmetic in the same order
    walk = list(descending(scores))
    assert walk == sorted(((v, k) for k, v in expected.items()), key=lambda p: (-p[0], p[1]))


@pytest.mark.parametrize("saved", [False, True], ids=["built", "loaded"])
def test_compaction_keeps_every_score_and_a_query_taken_before_it(saved: bool) -> None:
    """Documents rewritten until the dead slots outnumber the live ones: the shard renumbers,
    scores stay exact, and scores taken before still name the right documents (those
    removed since are skipped, those added since have none)."""
    shard = Shard(FIELD_WEIGHTS)
    for n in range(1100):
        shard.add(doc(n, f"{WORDS[n % 8]} {WORDS[(n * 3) % 8]} marker{n % 50}"))
    shard.calibrate(force=True)
    before = shard.score(["marker7", "apple"])
    expected_before = reference(shard, ["marker7", "apple"])
    kept = {f"urn:d{n}" for n in range(1100) if n % 50 == 7}
    if saved:  # compacted from the packed postings a load keeps
        shard = ShardFiles.undump(*ShardFiles.dump(shard))
    for _ in range(2):  # every other document rewritten twice: 2,156 dead slots
        for n in range(1100):
            if f"urn:d{n}" not in kept:
                shard.add(doc(n, f"{WORDS[(n + 1) % 8]} marker{n % 50}"))
    assert len(shard.slots.ids) < 2300  # renumbered once (without it: 3,256 slots)
    shard.calibrate()
    after = shard.score(["marker7", "apple"])
    assert dict(after.items()) == reference(shard, ["marker7", "apple"])
    assert dict(before.items()) == {k: v for k, v in expected_before.items() if k in kept}
    assert len(kept) == 22 and before.get("urn:d7") == expected_before["urn:d7"]
    shard.add(doc(5000, "apple marker7"))
    before.setdefault("urn:d5000", 1.0)  # newer than that query: no score there
    assert before.get("urn:d5000") == 0.0


def test_scores_kept_for_some_documents_only() -> None:
    shard = Shard(FIELD_WEIGHTS)
    for n in range(40):
        shard.add(doc(n, f"apple {WORDS[n % 8]}"))
    shard.remove("urn:d3")
    scores = shard.score(["apple", "river"])
    expected = dict(scores.items())
    kept = {"urn:d1", "urn:d3", "urn:d9", "urn:d30", "urn:unknown"}
    scores.only(kept)
    assert dict(scores.items()) == {k: v for k, v in expected.items() if k in kept}
    assert [d for _, d in descending(scores)] == sorted(
        (k for k in expected if k in kept), key=lambda k: (-expected[k], k)
    )


@pytest.mark.parametrize("saved", [False, True], ids=["built", "loaded"])
def test_scores_kept_for_the_forms_a_filter_admits(saved: bool) -> None:
    """Each slot's form code follows it through rewrites, removals, a compaction and a
    save: the scores kept are exactly those of the documents whose form is admitted."""
    shard = Shard(FIELD_WEIGHTS)
    kinds = ("episodic", "semantic", "procedural")
    statuses = ("active", "archived")

    def form(n: int, round: int) -> dict[str, object]:
        return {"memory_kind": kinds[(n + round) % 3], "status": statuses[(n * round) % 2]}

    for round in range(1, 4):  # every document rewritten: 2,400 dead slots, renumbered
        for n in range(1200):
            shard.add(doc(n, f"apple {WORDS[n % 8]}", **form(n, round)))
        if round == 2 and saved:
            shard = ShardFiles.undump(*ShardFiles.dump(shard))
    shard.remove("urn:d4")
    assert len(shard.slots.ids) < 3600  # compacted on the way
    shard.add(LexicalDoc("urn:page", "page", "apple", "urn:g", pack((("title", "apple"),))))
    scores = shard.score(["appl"])  # "apple", analyzed
    expected = dict(scores.items())
    assert len(expected) == 1200
    scores.keep(lambda f: f == ("memory", "semantic", "active") or f[0] == "page")
    docs = {d.id: d for d in shard.docs.values()}
    assert dict(scores.items()) == {
        k: v
        for k, v in expected.items()
        if docs[k].kind == "page" or (docs[k].memory_kind, docs[k].status) == ("semantic", "active")
    }
    assert 150 < len(scores) < 250


def test_a_large_result_is_walked_by_chunks_in_exact_order() -> None:
    shard = Shard(FIELD_WEIGHTS)
    for n in range(1500):  # many equal scores across chunk boundaries
        shard.add(doc(n, " ".join(["apple"] * (1 + n % 3)) + " river" * (n % 2)))
    shard.calibrate(force=True)
    scores = shard.score(["apple", "river"])
    expected = reference(shard, ["apple", "river"])
    assert len(scores) == len(expected) == 750  # "apple", in all, only re-scores
    assert list(descending(scores)) == sorted(
        ((v, k) for k, v in expected.items()), key=lambda p: (-p[0], p[1])
    )


@settings(max_examples=60, deadline=None)
@given(
    spans=st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-400, 400)), st.one_of(st.none(), st.integers(1, 300))
        ),
        min_size=1,
        max_size=30,
    ),
    start=st.integers(-500, 500),
    length=st.integers(1, 400),
    latest=st.one_of(st.none(), st.integers(1, 10)),
)
def test_periods_meeting_a_range(
    spans: list[tuple[int | None, int | None]], start: int, length: int, latest: int | None
) -> None:
    """Validity periods (days from 2024-01-01; None: open) meeting [start, start+length)."""
    shard = Shard(FIELD_WEIGHTS)
    docs = []
    for n, (begin, days) in enumerate(spans):
        frm = None if begin is None else T0 + timedelta(days=begin)
        until = None if days is None or frm is None else frm + timedelta(days=days)
        if frm is None and until is None:
            until = T0 + timedelta(days=days or 1)
        docs.append(doc(n, "apple", valid_from=frm, valid_until=until))
        shard.add(docs[-1])
    lo, hi = T0 + timedelta(days=start), T0 + timedelta(days=start + length)
    meeting = [d for d in docs if d.overlaps(lo, hi)]
    found = shard.during(lo, hi, latest)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    key = lambda d: d.valid_from or epoch  # noqa: E731
    by_id = {d.id: d for d in docs}
    assert all(at == (key(by_id[i]) - epoch) // timedelta(microseconds=1) for at, i in found)
    if latest is None:
        assert sorted(i for _, i in found) == sorted(d.id for d in meeting)
    else:
        best = sorted(meeting, key=lambda d: (key(d), d.id), reverse=True)[:latest]
        assert {d.id for d in best} <= {i for _, i in found} <= {d.id for d in meeting}
        cut = min((key(d) for d in best), default=None)
        assert all(key(by_id[i]) >= cut for _, i in found) if cut else not found


def chat_reference(shard: Shard, terms: list[str]) -> dict[str, float]:
    """Whole-chat BM25 from scratch: a chat is the sum of its documents' term counts."""
    chats: dict[str, dict[str, int]] = {}
    for d in shard.docs.values():
        for chat in d.chats:
            counts = chats.setdefault(chat, {})
            for term, tf in d.terms(FIELD_WEIGHTS).items():
                counts[term] = counts.get(term, 0) + tf
    n = len(chats)
    average = max(sum(sum(c.values()) for c in chats.values()) / n, 1.0) if n else 1.0
    acc: dict[str, float] = {}
    for term in set(terms):
        df = sum(1 for c in chats.values() if term in c)
        weight = math.log(1 + (n - df + 0.5) / (df + 0.5)) * 2.2
        for chat, counts in chats.items():
            if tf := counts.get(term, 0):
                norm = 1.2 * (1 - 0.75 + 0.75 * sum(counts.values()) / average)
                acc[chat] = acc.get(chat, 0.0) + weight * tf / (tf + norm)
    best = max(acc.values(), default=0.0)
    return {chat: v / best for chat, v in acc.items()} if best else {}


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.integers(0, 9), st.one_of(st.none(), texts()), st.sampled_from(["c1", "c2", "c3"])
        ),
        min_size=1,
        max_size=30,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    saved_at=st.integers(0, 31),
)
def test_chat_scores_equal_a_fresh_bm25_over_whole_chats(
    ops: list[tuple[int, str | None, str]], query: list[str], saved_at: int
) -> None:
    """``saved_at``: saved and loaded back there (the chats' postings then packed arrays,
    made dictionaries again as changes reach them)."""
    shard = Shard(FIELD_WEIGHTS)
    for i, (n, text, chat) in enumerate(ops):
        if i == saved_at:
            shard = ShardFiles.undump(*ShardFiles.dump(shard))
        if text is None:
            shard.remove(f"urn:d{n}")
        else:
            shard.add(doc(n, text, chats=(chat,)))
        shard.chats.score(query)  # arrays built between changes must not go stale
    expected = chat_reference(shard, query)
    assert shard.chats.score(query) == pytest.approx(expected)
    assert set(shard.chats.score(query)) == set(expected)


ENTITIES = ["urn:e:ann", "urn:e:bob", "urn:e:cafe"]


@settings(max_examples=60, deadline=None)
@given(
    ops=st.lists(
        st.tuples(
            st.integers(0, 11),
            st.one_of(st.none(), texts()),
            st.one_of(st.none(), st.integers(-3, 3)),  # its moment: days from T0
            st.lists(st.sampled_from(ENTITIES), max_size=2),
        ),
        min_size=1,
        max_size=30,
    ),
    saved_at=st.lists(st.integers(0, 31), max_size=3),
)
def test_a_loaded_shard_answers_as_the_one_built(
    ops: list[tuple[int, str | None, int | None, list[str]]], saved_at: list[int]
) -> None:
    """The same adds and removals on a shard never saved and on one saved and loaded back
    (at up to three points): the same documents, timeline ranges, documents about each
    entity and named entities."""
    built, loaded = Shard(FIELD_WEIGHTS), Shard(FIELD_WEIGHTS)
    for shard in (built, loaded):
        for entity in ENTITIES:
            shard.name(entity, entity.rsplit(":", 1)[-1])
    for i, (n, text, day, about) in enumerate(ops):
        if i in saved_at:
            loaded = ShardFiles.undump(*ShardFiles.dump(loaded))
        for shard in (built, loaded):
            if text is None:
                shard.remove(f"urn:d{n}")
            else:
                at = None if day is None else T0 + timedelta(days=day)  # ties: by id
                shard.add(doc(n, text, occurred_at=at, about=tuple(sorted(set(about)))))
    if len(ops) in saved_at:
        loaded = ShardFiles.undump(*ShardFiles.dump(loaded))
    assert sorted(loaded.docs.ids()) == sorted(built.docs.ids())
    assert all(loaded.docs[i] == built.docs[i] for i in built.docs.ids())
    for start in range(-4, 4):
        for length in (1, 2, 8):
            lo, hi = T0 + timedelta(days=start), T0 + timedelta(days=start + length)
            timed = [d for d in built.docs.values() if d.moment and lo <= d.moment < hi]
            expected = [d.id for d in sorted(timed, key=lambda d: (d.moment, d.id))]
            assert [i for _, i in built.during(lo, hi)] == expected
            assert [i for _, i in loaded.during(lo, hi)] == expected
            assert loaded.during(lo, hi, 2) == built.during(lo, hi, 2)
    for entity in ENTITIES:
        assert loaded.about(entity) == built.about(entity)
        assert loaded.about(entity, 2) == built.about(entity, 2)
    words = frozenset(["ann", "bob", "cafe"])
    assert loaded.named(words) == built.named(words)
    # each live document's facts row, by id, whatever slot it holds (NaN equal to NaN)
    for shard in (built, loaded):
        view = shard.slots.facts.view()
        assert len(view.rows) == len(shard.slots.ids)

    def facts(shard: Shard) -> dict[str, tuple[object, ...]]:
        view = shard.slots.facts.view()
        return {
            i: (view.forms[row["form"]], *(repr(float(row[f])) for f in ("use", "occurred")))
            for i, row in ((i, view.rows[s]) for i, s in shard.slots.of.items())
        }

    assert facts(loaded) == facts(built)


def test_a_timeline_filled_in_any_order_is_in_order_of_moment_then_id() -> None:
    """A rebuild adds documents in no order of time: the timeline merges them at once when it
    is next read (more than a few) or one by one (a few), and stays in order after removals,
    re-adds and a save taken while additions were waiting."""
    rng = __import__("random").Random(7)
    shard = Shard(FIELD_WEIGHTS)
    moments: dict[int, int | None] = {}
    for n in rng.sample(range(1500), 1500):  # 1,500 adds: merged by a sort
        moments[n] = rng.randrange(-40, 40) if n % 7 else None
        at = None if moments[n] is None else T0 + timedelta(hours=moments[n])
        shard.add(doc(n, "apple", occurred_at=at))
    saved = ShardFiles.undump(*ShardFiles.dump(shard))  # saved with every addition waiting
    for n in rng.sample(range(1500), 300):  # removals and a few re-adds: one by one
        if n % 3:
            shard.remove(f"urn:d{n}")
            saved.remove(f"urn:d{n}")
            moments.pop(n)
        else:
            moments[n] = rng.randrange(-40, 40)
            for held in (shard, saved):
                held.add(doc(n, "river", occurred_at=T0 + timedelta(hours=moments[n])))
    expected = sorted(
        (T0 + timedelta(hours=h), f"urn:d{n}") for n, h in moments.items() if h is not None
    )
    lo, hi = T0 - timedelta(days=3), T0 + timedelta(days=3)
    for held in (shard, saved, ShardFiles.undump(*ShardFiles.dump(saved))):
        assert [i for _, i in held.during(lo, hi)] == [i for _, i in expected]
        assert [i for _, i in held.during(lo, hi, 5)] == [i for _, i in expected[-5:]]


@settings(max_examples=200, deadline=None)
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["add", "remove", "read"]), st.integers(0, 5), st.integers(0, 2)),
        max_size=60,
    ),
    many=st.booleans(),
)
def test_a_timeline_read_at_any_point_holds_what_was_added_and_not_removed(
    ops: list[tuple[str, int, int]], many: bool
) -> None:
    """Additions and removals wait for the next read; a removal takes the document added
    last, waiting or stored, and a removal and an addition of the same document at the same
    moment cancel. At every read the lists are what the same operations on a plain sorted
    list give (``many``: a thousand stored first, so a read settles by a merge or a filter)."""
    timeline, model = Timeline(), []
    if many:
        for n in range(1000):
            timeline.add(n % 3, f"urn:s{n:04d}")
            model.append((n % 3, f"urn:s{n:04d}"))
        model.sort()
    for op, n, moment in ops:
        dated = (moment, f"urn:d{n}")
        if op == "add" and dated not in model:  # as the shard does: a document once
            timeline.add(*dated)
            bisect.insort(model, dated)
        elif op == "remove":
            timeline.remove(*dated)
            if dated in model:
                model.remove(dated)
        elif op == "read":
            assert list(zip(timeline.moments, timeline.ids, strict=True)) == model
    assert list(zip(timeline.moments, timeline.ids, strict=True)) == model


def test_a_refresh_that_puts_a_document_back_at_its_moment_moves_nothing() -> None:
    """A refresh removes and adds back each document it reads: at the same moment, the
    timeline's lists are left as they are (at a million documents a removal from the middle
    is 0.5 ms inside the commit)."""
    timeline = Timeline()
    for n in range(1000):
        timeline.add(n, f"urn:d{n:04d}")
    moments, ids = timeline.moments, timeline.ids
    before = (list(moments), list(ids))
    for n in (3, 500, 999):
        timeline.remove(n, f"urn:d{n:04d}")
        timeline.add(n, f"urn:d{n:04d}")
    assert timeline.moments is moments and timeline.ids is ids  # not rebuilt
    assert (moments, ids) == before
    timeline.remove(500, "urn:d0500")
    timeline.add(1500, "urn:d0500")  # moved in time: out of the middle, in at the end
    assert timeline.moments[-1] == 1500 and timeline.ids[-1] == "urn:d0500"
    assert len(timeline.ids) == 1000 and "urn:d0500" not in timeline.ids[:-1]


def test_named_entities_by_whole_names_and_their_documents() -> None:
    """Every word of one of an entity's names among the terms; an entity named after the
    first lookup is found too, and ``most`` leaves out those more documents are about."""
    shard = Shard(FIELD_WEIGHTS)
    people = {"urn:e:ana1": "Ana Silva", "urn:e:ana2": "Ana Silva", "urn:e:ana3": "Ana Costa"}
    for n, (entity, name) in enumerate(people.items()):
        shard.name(entity, name)
        for k in range(n + 1):  # ana1 is about 1 document, ana2 2, ana3 3
            shard.add(doc(10 * n + k, "apple", about=(entity,)))
    shard.name("urn:e:ana3", "Ana")  # a short name
    shard.name("urn:e:nobody", "Ana Silva")  # no document is about it
    assert shard.named(frozenset({"ana", "silva"})) == ["urn:e:ana3", "urn:e:ana2", "urn:e:ana1"]
    assert shard.named(frozenset({"silva"})) == []
    assert shard.named(frozenset({"ana", "silva"}), most=2) == ["urn:e:ana2", "urn:e:ana1"]
    shard.name("urn:e:ana1", "Bea")  # after the first lookup
    shard.add(doc(99, "apple", about=("urn:e:nobody",)))
    assert shard.named(frozenset({"bea"})) == ["urn:e:ana1"]
    assert shard.named(frozenset({"ana", "silva"}), most=1) == ["urn:e:ana1", "urn:e:nobody"]
    loaded = ShardFiles.undump(*ShardFiles.dump(shard))
    for terms in ({"ana"}, {"ana", "silva"}, {"bea", "costa"}):
        assert loaded.named(frozenset(terms)) == shard.named(frozenset(terms))


def test_chat_scores_are_read_chat_by_chat() -> None:
    shard = Shard(FIELD_WEIGHTS)
    shard.add(doc(1, "apple river", chats=("c1",)))
    shard.add(doc(2, "apple", chats=("c2",)))
    shard.add(doc(3, "stone", chats=("c3",)))
    found = shard.chats.score(["river", "appl"])
    assert found == pytest.approx(chat_reference(shard, ["river", "appl"]))
    assert set(found) == {"c1", "c2"} and len(found) == 2 and found["c1"] == 1.0
    assert found.get("c3") is None and found.get("c3", 0.0) == 0.0 and "c3" not in found
    assert found.get("c9", 0.5) == 0.5
    with pytest.raises(KeyError):
        found["c3"]
    shard.add(doc(4, "river", chats=("c4",)))  # after the query: not in it
    assert "c4" not in found and set(found) == {"c1", "c2"}
    assert not shard.chats.score(["violin"]) and dict(shard.chats.score(["violin"])) == {}


def test_fill_scores_only_the_documents_nothing_matched() -> None:
    shard = Shard(FIELD_WEIGHTS)
    for n, text in enumerate(["apple", "river", "stone", "apple river"]):
        shard.add(doc(n, text))
    scores = shard.score(["appl"])
    matched = dict(scores.items())
    assert set(matched) == {"urn:d0", "urn:d3"}
    scores.fill(["urn:d0", "urn:d1", "urn:d2", "urn:d1", "urn:gone"], 0.01)
    assert dict(scores.items()) == {**matched, "urn:d1": 0.01, "urn:d2": 0.01}
    scores.fill([], 0.5)
    assert dict(scores.items()) == {**matched, "urn:d1": 0.01, "urn:d2": 0.01}
