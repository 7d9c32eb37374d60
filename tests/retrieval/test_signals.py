"""The conversational signals of search: the message a memory answers and the reply it got,
the whole conversation, the entities a query names, "when" questions, and questions that
only ask. Each is checked by switching it off and seeing the ranking change."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rdflib import URIRef

from kgmem.index import KuzuProjection
from kgmem.index.lexical import LexicalIndex
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome
from kgmem.retrieval import MemorySearch, RankWeights, SearchHit
from kgmem.retrieval import search as search_module
from kgmem.retrieval.temporal import asks_when, is_question
from tests.memory.world import World, claim_draft, works_at
from tests.retrieval.support import QUERIES


def turn_memory(world: World, chat: str, text: str, **extra: Any) -> URIRef:
    """The next message of ``chat`` and an episodic memory quoting it whole."""
    msg = world.say("user", text, chat=chat)
    draft = {"kind": "episodic", "title": text, "occurred_at": "2026-01-01T10:00:00Z"}
    [item] = world.draft({**draft, "evidence": [{"source": msg, "quote": text}], **extra})
    assert item.outcome is Outcome.ACTIVE and item.memory is not None, item
    return item.memory


def searcher(world: World, **weights: float) -> MemorySearch:
    index = LexicalIndex(world.store, QUERIES)
    return MemorySearch(
        world.store, QUERIES, index, world.clock, world.lifecycle, weights=RankWeights(**weights)
    )


def by_id(hits: list[SearchHit]) -> dict[str, SearchHit]:
    return {hit.id: hit for hit in hits}


def test_a_reply_is_found_by_the_words_of_what_it_answered(world: World) -> None:
    world.say("assistant", "How long have you and Sam been married?", chat="wedding")
    answer = turn_memory(world, "wedding", "Five years already!")
    [hit] = searcher(world).memory_search("alice", "married to Sam")
    assert hit.id == str(answer)
    assert "matched 'sam', 'married' in context" in hit.why


def test_a_later_message_becomes_the_reply_of_the_memory_before_it(world: World) -> None:
    said = turn_memory(world, "run", "I finally finished it, four hours!")
    index = LexicalIndex(world.store, QUERIES)
    search = MemorySearch(world.store, QUERIES, index, world.clock, world.lifecycle)
    assert search.memory_search("alice", "marathon") == []
    reply = world.say("assistant", "Congratulations on the marathon!", chat="run")
    assert index.refresh("alice", [URIRef(reply)]) == 1  # the message, not the memory
    [hit] = search.memory_search("alice", "marathon")
    assert hit.id == str(said) and "matched 'marathon' in reply" in hit.why


def test_a_memory_of_the_conversation_the_query_is_about_ranks_first(world: World) -> None:
    turn_memory(world, "trip", "We flew to Lisbon on Friday.")
    world.say("user", "The weather was warm all week.", chat="trip")
    trip = turn_memory(world, "trip", "The hotel was lovely.")
    work = turn_memory(world, "work", "The hotel bill goes to finance.")
    with_chats = by_id(searcher(world).memory_search("alice", "Lisbon hotel"))
    without = by_id(searcher(world, conversation=0.0).memory_search("alice", "Lisbon hotel"))
    assert with_chats[str(trip)].score > 1.3 * with_chats[str(work)].score
    assert without[str(trip)].score == pytest.approx(without[str(work)].score, rel=0.15)


def test_a_memory_about_what_the_query_names_gets_the_named_boost(world: World) -> None:
    dana = turn_memory(world, "c1", "Went hiking at the lake.", entities=[{"name": "Dana"}])
    ravi = turn_memory(world, "c2", "Went hiking at the lake!", entities=[{"name": "Ravi"}])
    hits = searcher(world).memory_search("alice", "Did Dana go hiking at the lake?")
    plain = by_id(searcher(world, named=0.0).memory_search("alice", "Dana hiking lake"))
    assert [h.id for h in hits][:2] == [str(dana), str(ravi)]
    assert "about what the query names" in hits[0].why
    assert "about what the query names" not in hits[1].why
    assert str(ravi) in plain  # the named boost reorders; it filters nothing


def test_a_when_question_prefers_memories_that_say_when(world: World) -> None:
    moved = turn_memory(world, "c1", "I moved my office to Porto yesterday.")
    likes = turn_memory(world, "c2", "I moved my office plants to Porto.")
    when = by_id(searcher(world).memory_search("alice", "When did I move my office to Porto?"))
    plain = by_id(searcher(world, when=0.0).memory_search("alice", "When did I move to Porto?"))
    assert when[str(moved)].score > when[str(likes)].score
    assert "says when" in when[str(moved)].why and "says when" not in when[str(likes)].why
    where = by_id(searcher(world).memory_search("alice", "Where did I move my office?"))
    assert "says when" not in where[str(moved)].why
    assert set(plain) == {str(moved), str(likes)}


def test_a_memory_that_only_asks_does_not_outrank_the_answer(world: World) -> None:
    asked = turn_memory(world, "c1", "Did you make the black bowl?")
    made = turn_memory(world, "c2", "I did make the black bowl, in class.")
    question = searcher(world).memory_search("alice", "Did Ana make the black bowl?")
    off = by_id(searcher(world, question=0.0).memory_search("alice", "Did Ana make the bowl?"))
    on = by_id(searcher(world).memory_search("alice", "Did Ana make the bowl?"))
    assert question[0].id == str(made)
    assert on[str(asked)].score == pytest.approx(0.8 * off[str(asked)].score, rel=1e-6)
    keywords = by_id(searcher(world).memory_search("alice", "black bowl"))  # not a question
    assert keywords[str(asked)].score == pytest.approx(keywords[str(asked)].score)


def test_forgetting_a_memory_takes_its_words_out_of_its_conversation(world: World) -> None:
    index = LexicalIndex(world.store, QUERIES)
    kept = turn_memory(world, "c1", "We planted tomatoes.")
    world.say("assistant", "Nice.", chat="c1")  # so neither is the other's context or reply
    gone = turn_memory(world, "c1", "The greenhouse needs a new door.")
    index.rebuild("alice")
    assert index.chat_scores("alice", ["greenhous"]) == {"c1": 1.0}
    world.lifecycle.forget("alice", gone)
    index.refresh("alice", [gone])
    assert index.chat_scores("alice", ["greenhous"]) == {}
    assert index.chat_scores("alice", ["tomato"]) == {"c1": 1.0}
    assert index.doc("alice", str(kept)) is not None


@pytest.mark.parametrize(
    ("text", "when", "question"),
    [
        ("When did Ana move?", True, True),
        ("what year was that", True, True),
        ("How long ago did we meet?", True, True),
        ("Where does Ana live?", False, True),
        ("ana lisbon", False, False),
        ("Ana moved on Friday?", False, True),
    ],
)
def test_query_kinds(text: str, when: bool, question: bool) -> None:
    assert (asks_when(text), is_question(text)) == (when, question)


@dataclass(frozen=True)
class Linked:
    """Alice works at Initech (a memory about her); a news memory is about Initech only."""

    job: URIRef
    office: URIRef
    index: LexicalIndex
    search: MemorySearch  # over the index, expanding from what a query names


@pytest.fixture
def linked_world(world: World) -> Linked:
    msg = world.say("user", "I work at Initech.", chat="job")
    [job] = world.draft(works_at(msg, "Initech"))
    office = turn_memory(
        world, "news", "The office moved to Porto.", entities=[{"name": "Initech"}]
    )
    index = LexicalIndex(world.store, QUERIES)
    search = MemorySearch(world.store, QUERIES, index, world.clock, world.lifecycle, expand=True)
    return Linked(job.memory, office, index, search)


def test_graph_expansion_reaches_what_a_named_entity_is_linked_to(
    world: World, linked_world: Linked
) -> None:
    job, office, graph = linked_world.job, linked_world.office, linked_world.search
    index = linked_world.index
    flat = MemorySearch(world.store, QUERIES, index, world.clock, world.lifecycle)
    linked = "about something linked to what the query names"
    hits = by_id(graph.memory_search("alice", "Where did Alice's office move?"))
    assert linked in hits[str(office)].why
    assert linked not in by_id(flat.memory_search("alice", "Alice office"))[str(office)].why
    expanded = [h.id for h in graph.memory_search("alice", "Alice")]
    assert str(job) in expanded and str(office) in expanded  # by the graph alone
    assert [h.id for h in flat.memory_search("alice", "Alice")] == [str(job)]
    assert linked not in by_id(graph.memory_search("alice", "Porto Bob"))[str(office)].why
    # a new link reaches search with the write: the index has it before the write is
    # acknowledged (here: once refreshed), with no wait for the graph projection
    lab = turn_memory(world, "news2", "The lab opened downtown.", entities=[{"name": "Globex"}])
    said = world.say("user", "I work at Globex.", chat="job2")
    [second] = world.draft(works_at(said, "Globex"))
    index.refresh("alice", [lab, second.memory])
    assert str(lab) in [h.id for h in graph.memory_search("alice", "Alice")]
    # a link only a memory no longer active made is gone with it
    world.lifecycle.archive("alice", second.memory)
    index.refresh("alice", [second.memory])
    assert str(lab) not in [h.id for h in graph.memory_search("alice", "Alice")]


def test_a_hub_is_not_expanded_from(monkeypatch: pytest.MonkeyPatch, linked_world: Linked) -> None:
    """An entity more documents are about than the bound is named but not expanded from:
    its neighbours are too many to say anything of the query (and costly to read)."""
    job, office, search = linked_world.job, linked_world.office, linked_world.search
    about = len(linked_world.index.about("alice", str(self_entity("alice"))))
    assert about >= 1
    monkeypatch.setattr(search_module, "_HUB", about)  # at the bound: expanded
    assert str(office) in [h.id for h in search.memory_search("alice", "Alice")]
    monkeypatch.setattr(search_module, "_HUB", about - 1)  # past it: a hub
    assert [h.id for h in search.memory_search("alice", "Alice")] == [str(job)]


def test_the_index_links_an_entity_to_what_the_graph_projection_does(
    world: World, tmp_path: Path
) -> None:
    """The neighbours the search expands to, read from the index, are the entities the
    graph projection links each entity to (facts between entities, and entities sharing an
    active memory), in the same order and cut; a memory archived takes its links along."""
    said = [
        ("I work at Initech.", "I", "Initech"),
        ("Bob works at Initech too.", "Bob", "Initech"),
        ("Bob works at Globex now.", "Bob", "Globex"),
        ("Carol works at Globex.", "Carol", "Globex"),
    ]
    made = []
    for n, (text, person, company) in enumerate(said):
        msg = world.say("user", text, chat=f"c{n}")
        types = {company: "schema:Organization"} | (
            {} if person == "I" else {person: "schema:Person"}
        )
        quote = text.rstrip(".").removesuffix(" too").removesuffix(" now")
        draft = claim_draft(msg, quote, person, "schema:worksFor", types=types, object=company)
        made += world.draft(draft)
    assert all(item.memory is not None for item in made), made
    news = [{"name": "Initech"}, {"name": "Globex"}]
    turn_memory(world, "news", "Initech and Globex merged.", entities=news)
    world.lifecycle.archive("alice", made[-1].memory)  # Carol's job: no longer a link
    projection = KuzuProjection(tmp_path / "kuzu", world.store, QUERIES)
    try:
        projection.rebuild("alice")
        index = LexicalIndex(world.store, QUERIES)
        entities = {str(e) for e in index._shard("alice").by_entity}  # every entity named
        assert len(entities) >= 4
        for entity in sorted(entities):
            for first in (1, 50):
                near = projection.neighbourhood("alice", URIRef(entity), hops=1, limit=1000)
                expected = sorted(str(n.entity) for n in near)[:first]
                assert index.neighbours("alice", entity, first) == expected, entity
    finally:
        projection.close()


def test_what_the_gate_has_not_accepted_ranks_after_what_it_has(world: World) -> None:
    """An agent's own turn lands pending: it restates the user's words at length, so it
    matches a query as well as the user's turn, or better; the checked memory comes first."""
    said = turn_memory(world, "trip", "Booked my flight for May 3rd, finally.")
    text = "Great, your Lisbon flight is booked! Shall I plan the days in Lisbon too?"
    reply = world.say("assistant", text, chat="trip")
    draft = {"kind": "episodic", "title": text, "occurred_at": "2026-01-01T10:01:00Z"}
    [item] = world.draft({**draft, "evidence": [{"source": reply, "quote": text}]})
    assert item.outcome is Outcome.PENDING and item.memory is not None, item
    both = ("active", "pending")
    hits = searcher(world).memory_search("alice", "Lisbon flight", statuses=both)
    off = searcher(world, unaccepted=0.0).memory_search("alice", "Lisbon flight", statuses=both)
    assert [h.id for h in off] == [str(item.memory), str(said)]  # it matches better
    assert [h.id for h in hits] == [str(said), str(item.memory)]
    assert by_id(hits)[str(item.memory)].score == pytest.approx(
        0.6 * by_id(off)[str(item.memory)].score, rel=1e-6
    )
    assert "status pending" in by_id(hits)[str(item.memory)].why
    # a default search reads only what was accepted, weighed as before
    [alone] = searcher(world).memory_search("alice", "Lisbon flight")
    assert alone.id == str(said)
