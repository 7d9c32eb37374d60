"""memory_search: matching, every filter, inactive statuses, cite-driven ranking, time cues."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from rdflib import URIRef

from kgmem.index.lexical import LexicalIndex
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome, WriteMode
from kgmem.memory.lifecycle import Verdict
from kgmem.memory.model import MemoryStatus
from kgmem.retrieval import MemorySearch
from kgmem.store import Changeset
from kgmem.vocab import KGM
from tests.memory.world import ALICE, EMPLOYER, NOW, World, works_at
from tests.retrieval.support import (
    QUERIES,
    remember,
    remember_for,
    searcher,
    write_note,
    write_page,
)


def ids(hits: list[object]) -> list[str]:
    return [hit.id for hit in hits]  # type: ignore[attr-defined]


def test_search_matches_title_quote_and_entity_names(world: World, search: MemorySearch) -> None:
    msg = world.say("user", "I work at Acme Corp since spring.")
    [job] = world.draft(works_at(msg, "Acme Corp", quote="I work at Acme Corp since spring"))
    other = remember(world, "Favourite tea", "I drink green tea every morning")
    by_title = search.memory_search("alice", "acme")
    assert ids(by_title) == [str(job.memory)]
    assert by_title[0].kind == "memory" and by_title[0].memory_kind == "semantic"
    assert "matched 'acme' in title" in by_title[0].why
    assert "matched 'acme' in entity" in by_title[0].why
    by_quote = search.memory_search("alice", "spring")
    assert ids(by_quote) == [str(job.memory)] and by_quote[0].why == ("matched 'spring' in quote",)
    assert ids(search.memory_search("alice", "morning teas")) == [str(other)]
    assert search.memory_search("alice", "kangaroo") == []


def test_entity_name_and_predicate_words_are_searchable(world: World, search: MemorySearch) -> None:
    msg = world.say("user", "I work at Initech.")
    [job] = world.draft(
        works_at(
            msg, "Initech", title="Day job", entities=[{"name": "Initech", "aliases": ["ITC"]}]
        )
    )
    remember(world, "Weekend plans", "I will go hiking on Saturday")
    [by_alias] = search.memory_search("alice", "itc")
    assert by_alias.id == str(job.memory) and "matched 'itc' in entity" in by_alias.why
    [by_predicate] = search.memory_search("alice", "employer works for")
    assert by_predicate.id == str(job.memory)


def test_hit_carries_excerpt_and_why(world: World, search: MemorySearch) -> None:
    memory = remember(
        world, "Deploy checklist", "run the migrations before deploying", excerpt="Migrations first"
    )
    [hit] = search.memory_search("alice", "deploying migrations")
    assert (hit.id, hit.title, hit.excerpt, hit.status) == (
        str(memory),
        "Deploy checklist",
        "Migrations first",
        "active",
    )
    assert hit.score > 0 and "matched 'deploying' in title" in hit.why


def test_kinds_filter(world: World, search: MemorySearch) -> None:
    fact = remember(world, "Ramen place", "the ramen place on 5th street is great")
    episode = remember(
        world,
        "Ramen dinner",
        "we had ramen with Bob",
        kind="episodic",
        occurred_at=(NOW - timedelta(days=2)).isoformat(),
    )
    write_page(world, "Ramen", "# Ramen\n\nNoodle soup notes.", NOW)
    write_note(world, "food/ramen.md", "Ramen shops to try")
    assert set(ids(search.memory_search("alice", "ramen", kinds=["episodic"]))) == {str(episode)}
    assert set(ids(search.memory_search("alice", "ramen", kinds=["semantic"]))) == {str(fact)}
    assert set(ids(search.memory_search("alice", "ramen", kinds=["memory"]))) == {
        str(fact),
        str(episode),
    }
    [page] = search.memory_search("alice", "ramen", kinds=["page"])
    assert page.kind == "page" and page.path == "entities/ramen.md"
    [note] = search.memory_search("alice", "ramen", kinds="note")
    assert note.kind == "note" and note.path == "food/ramen.md"
    assert len(search.memory_search("alice", "ramen")) == 4


def test_tags_filter_needs_every_tag(world: World, search: MemorySearch) -> None:
    both = remember(
        world, "Python tests", "pytest runs the python tests", tags=["Python", "testing"]
    )
    one = remember(world, "Python style", "python code uses ruff", tags=["python"])
    assert set(ids(search.memory_search("alice", "python", tags=["python"]))) == {
        str(both),
        str(one),
    }
    assert ids(search.memory_search("alice", "python", tags=["python", "TESTING"])) == [str(both)]
    assert search.memory_search("alice", "python", tags=["rust"]) == []


def test_entity_filter_by_name_alias_and_iri(world: World, search: MemorySearch) -> None:
    msg = world.say("user", "I work at Acme.")
    [job] = world.draft(works_at(msg, entities=[{"name": "Acme", "aliases": ["Acme Inc"]}]))
    remember(world, "Acme rumours", "people say acme is hiring")
    for entity in ("Acme", "acme inc"):
        assert ids(search.memory_search("alice", "acme", entity=entity)) == [str(job.memory)]
    me = str(self_entity("alice"))
    assert ids(search.memory_search("alice", "acme", entity=me)) == [str(job.memory)]
    assert search.memory_search("alice", "acme", entity="Globex") == []


def counted_reads(index: LexicalIndex, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The documents the search reads from ``index`` from now on, as it reads them."""
    read: list[str] = []
    doc = index.doc

    def counted(uid: str, doc_id: str) -> object:
        read.append(doc_id)
        return doc(uid, doc_id)

    monkeypatch.setattr(index, "doc", counted)
    return read


def test_an_entity_filter_reads_only_the_entitys_documents(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many documents match the words and few are about the entity: the walk reads those
    few (it read every better-scored document to reject it: 20k at 100k memories)."""
    index = LexicalIndex(world.store, QUERIES)
    search = searcher(world, index)
    msg = world.say("user", "I work at Acme.")
    [job] = world.draft(works_at(msg, entities=[{"name": "Acme"}]))
    for n in range(30):
        remember(world, f"Acme rumour {n}", f"people say acme acme is hiring {n}")
    read = counted_reads(index, monkeypatch)
    assert ids(search.memory_search("alice", "acme", entity="Acme")) == [str(job.memory)]
    assert set(read) == {str(job.memory)}
    read.clear()
    assert len(search.memory_search("alice", "acme")) == 8 and len(read) > 8


def test_kind_and_status_filters_read_only_the_documents_they_admit(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many documents match the words and few are of the kind asked, or active: the walk
    reads only those (a kind filter read 1,249 documents to reject them at 100k)."""
    index = LexicalIndex(world.store, QUERIES)
    search = searcher(world, index)
    how = remember(
        world, "Acme expense report", "how to file the acme expense report", kind="procedural"
    )
    facts = [
        remember(world, f"Acme rumour {n}", f"people say acme acme is hiring {n}")
        for n in range(30)
    ]
    for fact in facts[:20]:
        world.lifecycle.archive("alice", fact)
    index.refresh("alice", facts)
    read = counted_reads(index, monkeypatch)
    assert ids(search.memory_search("alice", "acme", kinds=["procedural"])) == [str(how)]
    assert set(read) == {str(how)}
    read.clear()
    active = ids(search.memory_search("alice", "acme", k=20))
    assert set(active) == {str(how), *map(str, facts[20:])} and set(read) == set(active)
    read.clear()
    archived = search.memory_search("alice", "acme rumour", k=30, statuses=["archived"])
    assert set(ids(archived)) == set(map(str, facts[:20])) and set(read) == set(ids(archived))


def test_candidates_that_cannot_reach_the_top_are_passed_over_unread(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memories that match alike and differ in prior (pinned, cited, confident or not, old
    or recent) and in chat: the search bounds each candidate's score from the index's
    facts and reads only those that can reach the top. It finds exactly what reading every
    candidate finds, scores included, and reads fewer."""
    world.clock.current = NOW - timedelta(days=300)
    made = []
    for n in range(48):
        if n % 12 == 0:
            world.clock.advance(timedelta(days=40))
        text = f"the acme budget {'review ' * (n % 3)}for harbor {n % 6}"
        confidence = {"confidence": 0.5 + (n % 5) / 10} if n % 2 else {}
        made.append(remember(world, f"Acme budget {n}", text, **confidence))
    world.clock.current = NOW
    for memory in made[::7]:
        world.lifecycle.pin("alice", memory)
    index = LexicalIndex(world.store, QUERIES)
    search = searcher(world, index)
    for memory in made[::5]:
        search.memory_cite("alice", str(memory))
    queries = ["acme budget", "harbor 3", "budget review", "acme", "when was the budget review"]

    def found() -> dict[str, list[tuple[str, float]]]:
        return {
            q: [(h.id, h.score) for h in search.memory_search("alice", q, k=k)]
            for q in queries
            for k in (3, 10)
        }

    read = counted_reads(index, monkeypatch)
    bounded, reads = found(), len(read)
    read.clear()
    scores = index.scores

    def unbounded(uid: str, terms: object) -> object:
        got = scores(uid, terms)  # type: ignore[arg-type]
        got.facts = None  # no facts: every candidate walked is read
        return got

    monkeypatch.setattr(index, "scores", unbounded)
    assert found() == bounded
    assert reads < len(read) / 2, (reads, len(read))


def test_time_range_filter(world: World) -> None:
    index = LexicalIndex(world.store, QUERIES)
    search = searcher(world, index)
    old = remember(
        world,
        "Trip to Rome",
        "we flew to Rome",
        kind="episodic",
        occurred_at="2025-05-10T10:00:00Z",
    )
    new = remember(
        world,
        "Trip to Oslo",
        "we flew to Oslo",
        kind="episodic",
        occurred_at="2026-03-02T10:00:00Z",
    )
    may = (datetime(2025, 5, 1, tzinfo=UTC), datetime(2025, 6, 1, tzinfo=UTC))
    assert ids(search.memory_search("alice", "trip", time_range=may)) == [str(old)]
    since = (datetime(2026, 1, 1), None)  # naive means UTC; an open end
    assert ids(search.memory_search("alice", "trip", time_range=since)) == [str(new)]
    fact = remember(world, "Trip budget", "a trip costs 900 euros")  # recorded now
    assert index.refresh("alice", [fact]) == 1
    recent = (NOW - timedelta(hours=1), None)
    assert set(ids(search.memory_search("alice", "trip", time_range=recent))) == {str(fact)}


def test_a_window_that_ends_where_it_starts_holds_nothing(world: World) -> None:
    search = searcher(world, LexicalIndex(world.store, QUERIES))
    remember(world, "Trip to Rome", "we flew to Rome", kind="episodic", occurred_at="2025-05-10")
    assert len(search.memory_search("alice", "rome")) == 1
    instant = datetime(2025, 5, 10, tzinfo=UTC)
    for window in ((instant, instant), (instant, instant - timedelta(days=400))):
        assert search.memory_search("alice", "rome", time_range=window) == []


def _quarantined(world: World) -> URIRef:
    first = world.say("user", "I work at Acme.")
    [created] = world.draft(works_at(first, predicate=str(EMPLOYER)))
    assert created.memory is not None
    world.lifecycle.pin("alice", created.memory)
    tool = world.say(
        "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
    )
    draft = works_at(tool, "Globex", quote="Alice works at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["subject"] = "Alice"
    [item] = world.draft(draft)
    assert item.outcome is Outcome.QUARANTINED and item.memory is not None
    return item.memory


def _superseded(world: World) -> URIRef:
    first = world.say("user", "I work at Globex.")
    [old] = world.draft(works_at(first, "Globex", predicate=str(EMPLOYER)))
    later = world.say("user", "I now work at Initech.")
    draft = works_at(later, "Initech", "I now work at Initech", predicate=str(EMPLOYER))
    draft["claims"][0]["valid_from"] = "2026-05-01T00:00:00Z"
    [new] = world.draft(draft)
    assert new.superseded == (old.memory,) and old.memory is not None
    return old.memory


def _pending(world: World) -> URIRef:
    msg = world.say("user", "I work at Globex.")
    [held] = world.draft(works_at(msg, "Globex"), mode=WriteMode.REVIEW)
    assert held.outcome is Outcome.PENDING and held.memory is not None
    return held.memory


def _archived(world: World) -> URIRef:
    memory = remember(world, "Works at Globex", "I once worked at Globex")
    world.lifecycle.archive("alice", memory)
    return memory


def _expired(world: World) -> URIRef:
    memory = remember(
        world,
        "Globex visit",
        "I visited Globex today",
        kind="episodic",
        occurred_at=NOW.isoformat(),
        ttl="P1D",
    )
    world.clock.advance(timedelta(days=2))
    assert world.lifecycle.expire_due("alice") == [memory]
    return memory


def _outdated(world: World) -> URIRef:
    memory = remember(world, "Globex office", "the Globex office is on Main street")
    world.lifecycle.outcome("alice", memory, Verdict.OUTDATED, "visit")
    return memory


def _set_status(status: MemoryStatus) -> object:
    """A status no lifecycle action produces yet, written over an active memory's."""

    def make(world: World) -> URIRef:
        memory = remember(world, "Globex rumour", "Globex was sold")
        old = list(world.store.quads(ALICE.kg, memory, KGM.status))
        world.store.commit(Changeset.of([q._replace(object=status.iri) for q in old], old))
        return memory

    return make


INACTIVE = {
    MemoryStatus.QUARANTINED: _quarantined,
    MemoryStatus.SUPERSEDED: _superseded,
    MemoryStatus.PENDING: _pending,
    MemoryStatus.ARCHIVED: _archived,
    MemoryStatus.EXPIRED: _expired,
    MemoryStatus.OUTDATED: _outdated,
    MemoryStatus.ERRONEOUS: _set_status(MemoryStatus.ERRONEOUS),
    MemoryStatus.PROPOSED: _set_status(MemoryStatus.PROPOSED),
}


@pytest.mark.parametrize("status", list(INACTIVE), ids=str)
def test_inactive_memories_appear_only_when_asked_for(
    world: World, search: MemorySearch, status: MemoryStatus
) -> None:
    memory = str(INACTIVE[status](world))  # type: ignore[operator]
    assert memory not in ids(search.memory_search("alice", "globex", k=100))
    [hit] = search.memory_search("alice", "globex", statuses=[status.value])
    assert (hit.id, hit.status) == (memory, status.value)
    assert f"status {status.value}" in hit.why
    both = search.memory_search("alice", "globex", statuses=["active", status.value], k=100)
    assert memory in ids(both)


def test_inactive_status_is_checked_against_the_store(world: World, search: MemorySearch) -> None:
    """An index that missed an archive still never shows the memory."""
    memory = remember(world, "Globex lunch", "lunch at Globex canteen")
    assert ids(search.memory_search("alice", "globex")) == [str(memory)]
    world.lifecycle.archive("alice", memory)  # nobody refreshes the index
    assert search.memory_search("alice", "globex") == []
    assert ids(search.memory_search("alice", "globex", statuses=["archived"])) == [str(memory)]


def test_citing_moves_a_memory_above_an_otherwise_equal_one(
    world: World, search: MemorySearch
) -> None:
    first = remember(world, "Zephyr runbook alpha", "zephyr restarts nightly")
    second = remember(world, "Zephyr runbook gamma", "zephyr restarts weekly")
    before = search.memory_search("alice", "zephyr runbook")
    assert set(ids(before)) == {str(first), str(second)}
    assert before[0].score == before[1].score  # equal in every signal
    loser = before[1].id
    citation = search.memory_cite("alice", loser)
    assert (citation.id, citation.kind, citation.use_count) == (loser, "memory", 1)
    after = search.memory_search("alice", "zephyr runbook")
    assert after[0].id == loser and after[0].score > after[1].score
    assert "cited 1 time" in after[0].why and "recently used" in after[0].why
    record = world.memory(URIRef(loser))
    assert record.use_count == 1 and record.last_used_at == NOW and record.strength > 1.0


def test_pinned_memory_ranks_above_an_equal_one(world: World, search: MemorySearch) -> None:
    first = remember(world, "Vault key alpha", "the vault key is in the drawer")
    second = remember(world, "Vault key gamma", "the vault key is in the safe")
    loser = search.memory_search("alice", "vault key")[1].id
    world.lifecycle.pin("alice", URIRef(loser))
    search_after = searcher(world)  # a fresh index reads the pin from the store
    top = search_after.memory_search("alice", "vault key")[0]
    assert top.id == loser and "pinned" in top.why
    assert {str(first), str(second)} >= {loser}


def test_citing_a_page_counts_its_uses(world: World, search: MemorySearch) -> None:
    page = write_page(world, "Acme", "# Acme\n\nA company.", NOW)
    other = write_page(world, "Acme Labs", "# Acme Labs\n\nA company.", NOW)
    first = search.memory_search("alice", "acme company")
    assert {h.id for h in first} == {str(page), str(other)}
    citation = search.memory_cite("alice", str(page))
    assert (citation.kind, citation.use_count) == ("page", 1)
    assert search.memory_cite("alice", str(page)).use_count == 2
    [top, _] = search.memory_search("alice", "acme company")
    assert top.id == str(page) and "cited 2 times" in top.why


def test_time_cue_prefers_memories_of_that_period(world: World, search: MemorySearch) -> None:
    may = remember(
        world,
        "Dinner with Bob",
        "dinner with Bob at the harbour",
        kind="episodic",
        occurred_at="2026-05-20T19:00:00Z",
    )
    march = remember(
        world,
        "Dinner with Bob",
        "dinner with Bob, dinner at home",
        kind="episodic",
        occurred_at="2026-03-20T19:00:00Z",
    )
    assert ids(search.memory_search("alice", "dinner with bob")) == [str(march), str(may)]
    cued = search.memory_search("alice", "dinner with bob last May")
    assert ids(cued) == [str(may), str(march)] and "happened last May" in cued[0].why
    assert "happened last May" not in cued[1].why
    assert search.memory_search("alice", "dinner with bob in March")[0].id == str(march)
    # a time alone finds what happened then
    assert ids(search.memory_search("alice", "what happened in May 2026?")) == [str(may)]


def test_time_cue_yesterday_is_relative_to_the_clock(world: World, search: MemorySearch) -> None:
    lunch = remember(
        world,
        "Lunch",
        "I had lunch with Dana",
        kind="episodic",
        occurred_at=(NOW - timedelta(days=1)).isoformat(),
    )
    remember(world, "Lunch spot", "the lunch spot near work is closed on Mondays")
    [top, *_] = search.memory_search("alice", "lunch yesterday")
    assert top.id == str(lunch) and "happened yesterday" in top.why
    world.clock.advance(timedelta(days=10))
    assert str(lunch) not in ids(search.memory_search("alice", "yesterday"))


def test_another_users_memories_never_appear(world: World, search: MemorySearch) -> None:
    mine = remember(world, "Acme contract", "the acme contract ends in June")
    theirs = remember_for(world, "bob", "Acme secrets", "acme plans a merger")
    assert ids(search.memory_search("alice", "acme merger", k=100)) == [str(mine)]
    assert ids(search.memory_search("bob", "acme merger", k=100)) == [str(theirs)]
    assert search.memory_search("alice", "merger") == []
