"""The lexical index: analysis, what each document holds, BM25 order, refresh and scoping."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from rdflib import Literal

from kgmem.index.lexical import LexicalIndex, analyze, stem, words
from kgmem.memory.model import Authority, MemoryKind, MemoryStatus, SourceType, SupportKind
from kgmem.memory.records import EvidenceRecord, MemoryRecord, record_quads
from kgmem.memory.source_inputs import MessageIn
from kgmem.ontology import DeclareProperty, DeltaPatch, OntologyService, Provenance, delta_term
from kgmem.store import Changeset, NodeKind, Quad, QueryRegistry, new_node, stable_node
from kgmem.vocab import KGM, SDO
from tests.memory.world import ALICE, NOW, World, works_at
from tests.retrieval.support import remember, remember_for, write_note, write_page

QUERIES = QueryRegistry.load()


def found(index: LexicalIndex, text: str, uid: str = "alice") -> list[str]:
    return [doc_id for doc_id, _ in index.search(uid, text, 100)]


def counted_reads(world: World, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the queries the store runs from now on, in order."""
    reads: list[str] = []
    select = world.store.select

    def counting(query: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(query.name)
        return select(query, *args, **kwargs)

    monkeypatch.setattr(world.store, "select", counting)
    return reads


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("The Meetings were RUNNING late", ["meet", "run", "late"]),
        ("Café Müller's naïve façade", ["cafe", "muller", "naiv", "facad"]),
        ("companies, boxes and classes", ["compani", "box", "class"]),
        ("moved / move / moving", ["move", "move", "move"]),
        ("東京 tower 2023", ["東京", "tower", "2023"]),
        ("snake_case and camelCase", ["snake", "case", "camelcas"]),
        ("don't we'll", ["don"]),
        ("what is this, and who are you?", []),
    ],
)
def test_analysis(text: str, terms: list[str]) -> None:
    assert analyze(text) == terms


def test_words_and_stems_agree_between_query_and_document() -> None:
    assert words("Re-use: it's") == ["re", "use", "it", "s"]  # "re" and "s" are stopwords
    for pair in (("meeting", "meetings"), ("run", "running"), ("party", "parties")):
        assert stem(pair[0]) == stem(pair[1])


def test_rebuild_indexes_memories_pages_and_notes(world: World) -> None:
    msg = world.say("user", "I work at Acme Corp.")
    [job] = world.draft(works_at(msg, "Acme Corp", tags=["career"], body="Backend engineer."))
    page = write_page(world, "Acme Corp", '---\ndigest: "sha256:ab12"\n---\n# Acme\nWidgets.', NOW)
    note = write_note(world, "work/acme-notes.md", "Quarterly widgets review")
    index = LexicalIndex(world.store, QUERIES)
    assert index.rebuild("alice") == 3
    memory = index.doc("alice", str(job.memory))
    assert memory is not None and memory.kind == "memory" and memory.status == "active"
    assert dict(memory.fields)["entity"] == "Acme Corp\nAlice"
    assert memory.tags == ("career",) and memory.confidence == 0.9 and memory.recorded_at == NOW
    assert set(found(index, "acme")) == {str(job.memory), str(page), str(note)}
    assert found(index, "career") == [str(job.memory)]  # a tag
    assert found(index, "backend") == [str(job.memory)]  # the body
    assert found(index, "widgets") == [str(note), str(page)]  # shorter text, higher score
    assert found(index, "quarterly") == [str(note)] and found(index, "ab12") == []
    page_doc = index.doc("alice", str(page))
    assert page_doc is not None and page_doc.path == "entities/acme corp.md"
    assert page_doc.excerpt == "Widgets." and page_doc.about == (
        str(stable_node("alice", NodeKind.ENTITY, "Acme Corp")),
    )


def test_predicate_labels_of_the_users_schema_are_searchable(world: World) -> None:
    OntologyService(world.store, QUERIES).apply_delta(
        "alice",
        DeltaPatch(
            (DeclareProperty("reportsTo", "line manager", SDO.Person, SDO.Person),),
            Provenance("user:alice", NOW),
        ),
    )
    msg = world.say("user", "I report to Dana.")
    draft = works_at(msg, "Dana", quote="I report to Dana", title="Reporting line")
    draft["claims"][0]["predicate"] = str(delta_term("alice", "reportsTo"))
    draft["entities"] = [{"name": "Dana", "types": ["schema:Person"]}]
    [item] = world.draft(draft)
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "manager") == [str(item.memory)]  # the label
    assert found(index, "reports") == [str(item.memory)]  # the local name


def test_search_is_bm25_ordered_and_capped(world: World) -> None:
    short = remember(world, "Kiwi", "kiwi")
    long = remember(world, "Fruit list", "apples pears kiwi plums figs")
    twice = remember(world, "Kiwi kiwi", "kiwi kiwi")
    index = LexicalIndex(world.store, QUERIES)
    hits = index.search("alice", "kiwi", 3)
    assert [h for h, _ in hits] == [str(twice), str(short), str(long)]
    assert hits[0][1] > hits[1][1] > hits[2][1] > 0
    assert len(index.search("alice", "kiwi", 1)) == 1
    assert index.search("alice", "mango", 5) == [] and index.search("alice", "the", 5) == []


def test_refresh_follows_new_archived_and_forgotten_memories(world: World) -> None:
    first = remember(world, "Ferry times", "the ferry leaves at nine")
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "ferry") == [str(first)]
    second = remember(world, "Ferry tickets", "ferry tickets are sold at the pier")
    assert found(index, "ferry") == [str(first)]  # a projection: nothing changes by itself
    assert index.refresh("alice", [second]) == 1
    assert set(found(index, "ferry")) == {str(first), str(second)}
    world.lifecycle.archive("alice", first)
    assert index.refresh("alice", [first]) == 1
    archived = index.doc("alice", str(first))
    assert archived is not None and archived.status == "archived"
    assert index.refresh("alice", [first]) == 0  # nothing changed since
    world.lifecycle.forget("alice", second)
    assert index.refresh("alice", [second]) == 1
    assert index.doc("alice", str(second)) is None and found(index, "pier") == []
    assert index.size("alice") == 1


def test_refresh_of_an_entity_reindexes_the_memories_about_it(world: World) -> None:
    msg = world.say("user", "I work at Initech.")
    [job] = world.draft(works_at(msg, "Initech"))
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "penguin") == []
    [named] = world.store.quads(ALICE.kg, None, KGM.name, Literal("Initech"))
    alias = Quad(named.subject, KGM.alias, Literal("Penguin Co"), ALICE.kg)
    world.store.commit(Changeset.of([alias]))
    unknown = stable_node("alice", NodeKind.ENTITY, "nobody")
    assert index.refresh("alice", [unknown, named.subject]) == 1
    assert found(index, "penguin") == [str(job.memory)]


def test_refresh_of_an_entity_reads_its_documents_again_only_when_its_names_change(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's own entity is in most commits (a fact about them): its hundreds of
    documents are read again only when a name or alias of it changed."""
    msg = world.say("user", "I work at Initech.")
    [job] = world.draft(works_at(msg, "Initech"))
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "initech") == [str(job.memory)]
    [named] = world.store.quads(ALICE.kg, None, KGM.name, Literal("Initech"))
    reads = counted_reads(world, monkeypatch)
    founded = Quad(named.subject, SDO.foundingDate, Literal("1999"), ALICE.kg)
    world.store.commit(Changeset.of([founded]))
    assert index.refresh("alice", [named.subject]) == 0
    assert "index/lexical_memory_texts" not in reads, reads
    world.store.commit(Changeset.of([Quad(named.subject, KGM.alias, Literal("Inny"), ALICE.kg)]))
    assert index.refresh("alice", [named.subject]) == 1
    assert "index/lexical_memory_texts" in reads and found(index, "inny") == [str(job.memory)]


def test_a_refresh_of_many_memories_reads_what_they_quote_once_and_equals_a_rebuild(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A drain carries a batch's memories, which quote a few chats: no chat is read whole
    (at 1M memories a cold chat is 14-18 ms), the messages around the quotes are read once
    for all of them by their nodes, and every document (context and reply included) is
    what a rebuild makes."""
    said = ["We sail on Friday.", "Pack the blue tent.", "The ferry leaves at nine.", "Bring tea."]
    turns = [world.say("user", text, chat="trip") for text in said]
    memories: list[Any] = []
    for msg, text in zip(turns[1:], said[1:], strict=True):
        draft = {"kind": "semantic", "title": text, "confidence": 0.9}
        [item] = world.draft(draft | {"evidence": [{"source": msg, "quote": text}]})
        memories.append(item.memory)
    index = LexicalIndex(world.store, QUERIES)
    index.rebuild("alice")
    rebuilt = {str(m): index.doc("alice", str(m)) for m in memories}
    reads = counted_reads(world, monkeypatch)
    assert index.refresh("alice", memories) == 0  # read again, unchanged
    assert "index/lexical_chat_messages" not in reads, reads
    assert reads.count("index/lexical_message_texts") == 1, reads
    assert reads.count("index/lexical_quoted_messages") == len(memories), reads
    # one read a memory: found in the kg graph, none is looked for among the quarantined
    assert reads.count("index/lexical_memories") == len(memories), reads
    assert {str(m): index.doc("alice", str(m)) for m in memories} == rebuilt
    assert found(index, "friday") == [str(memories[0])]  # the message before, as context


def test_the_context_of_a_quote_is_the_users_own_message_and_a_report_only_stands_in(
    world: World,
) -> None:
    """Around a quoted turn, the user's own message is the context; an agent's second-hand
    report of a turn counts only when the user's message of that turn is not stored. A
    refresh reads the same neighbours a rebuild does."""

    def said(turn: int, text: str, *, reported: bool = False, role: str = "user") -> str:
        msg = MessageIn(chat="call", turn=turn, role=role, text=text, agent_reported=reported)
        return str(world.sources.ingest_message("alice", msg).iri)

    said(0, "The venue is the old mill by the weir.")
    said(0, "Alice said the venue is a converted barn.", reported=True, role="assistant")
    quoted = said(1, "We booked it for the second week of June.")
    said(2, "She wants a brass band at the reception.", reported=True, role="assistant")
    text = "We booked it for the second week of June"
    draft = {"kind": "semantic", "title": "Booked for June", "confidence": 0.9}
    [item] = world.draft(draft | {"evidence": [{"source": quoted, "quote": text}]})
    index = LexicalIndex(world.store, QUERIES)
    index.rebuild("alice")
    rebuilt = index.doc("alice", str(item.memory))
    assert index.refresh("alice", [item.memory]) == 0  # the same neighbours, read by node
    assert index.doc("alice", str(item.memory)) == rebuilt
    assert found(index, "weir") == [str(item.memory)]  # the user's own turn 0
    assert found(index, "brass band") == [str(item.memory)]  # only a report of turn 2
    assert str(item.memory) not in found(index, "converted barn")


def test_a_refresh_finds_a_memory_in_whichever_graph_holds_it(world: World) -> None:
    """A memory moved into quarantine (and back) is read from the graph it is in now: the
    quarantine graph is looked in for the memories the kg graph does not hold."""
    memory = remember(world, "Zephyr lives in Oslo", "zephyr moved to oslo")
    index = LexicalIndex(world.store, QUERIES)
    index.rebuild("alice")

    def move(into: Any, out: Any) -> None:
        held = [q for q in world.store.quads(out) if q.subject == memory]
        assert held
        world.store.commit(Changeset.of([q._replace(graph=into) for q in held], held))
        index.refresh("alice", [memory])

    move(ALICE.quarantine, ALICE.kg)
    doc = index.doc("alice", str(memory))
    assert doc is not None and doc.graph == str(ALICE.quarantine)
    move(ALICE.kg, ALICE.quarantine)
    doc = index.doc("alice", str(memory))
    assert doc is not None and doc.graph == str(ALICE.kg)


def test_refresh_keeps_the_latest_note_revision(world: World) -> None:
    first = write_note(world, "plans.md", "visit the lighthouse", revision=1)
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "lighthouse") == [str(first)]
    second = write_note(world, "plans.md", "visit the aquarium", revision=2)
    assert index.refresh("alice", [second]) == 1
    assert found(index, "lighthouse") == [] and found(index, "aquarium") == [str(second)]
    index.refresh("alice", [first])  # an older revision named again
    assert found(index, "aquarium") == [str(second)] and found(index, "lighthouse") == []


def test_a_short_note_is_a_note_document_from_a_rebuild_or_a_refresh(world: World) -> None:
    kept = world.sources.remember("alice", "the spare key is under the blue pot", chat="c1")
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "spare key") == [str(kept.iri)]
    doc = index.doc("alice", str(kept.iri))
    assert doc is not None and (doc.kind, doc.path, doc.chats) == ("note", None, ())
    later = world.sources.remember("alice", "the boiler code is 4711")
    assert found(index, "boiler") == []  # not refreshed yet
    assert index.refresh("alice", [later.iri]) == 1
    assert found(index, "boiler") == [str(later.iri)]


def test_refresh_after_a_page_revision(world: World) -> None:
    page = write_page(world, "Orchard", "# Orchard\nApple trees.", NOW)
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "apple") == [str(page)]
    revision = f"{page}#r1"
    world.store.commit(
        Changeset.of(
            [Quad(page, KGM.useCount, Literal(3), ALICE.kg)],
        )
    )
    assert index.refresh("alice", [revision]) == 1
    doc = index.doc("alice", str(page))
    assert doc is not None and doc.use_count == 3


def test_another_users_documents_and_nodes_stay_out(world: World) -> None:
    mine = remember(world, "Acme badge", "my acme badge is blue")
    theirs = remember_for(world, "bob", "Acme badge", "my acme badge is red")
    index = LexicalIndex(world.store, QUERIES)
    assert found(index, "acme badge") == [str(mine)]
    assert found(index, "acme badge", "bob") == [str(theirs)]
    assert index.refresh("alice", [theirs, "https://example.org/x"]) == 0
    assert found(index, "red") == [] and index.doc("alice", str(theirs)) is None


def test_a_term_in_most_documents_only_rescores_rarer_matches(world: World) -> None:
    """Past 500 documents, a term in over half of them does not widen the candidates.

    Written straight to the store (600 gate writes would take half a minute): the index
    reads records, whoever wrote them."""
    quads = []
    for i in range(600):
        text = f"common words number {i}" + (" rare" if i < 3 else "")
        record = MemoryRecord(
            new_node("alice", NodeKind.MEMORY),
            MemoryKind.SEMANTIC,
            MemoryStatus.ACTIVE,
            text,
            0.9,
            NOW - timedelta(minutes=i),
            evidence=(
                EvidenceRecord(
                    new_node("alice", NodeKind.EVIDENCE),
                    stable_node("alice", NodeKind.MESSAGE, "c", str(i)),
                    SourceType.USER_MESSAGE,
                    SupportKind.EXPLICIT,
                    Authority.USER,
                ),
            ),
        )
        quads += record_quads(record, ALICE.kg)
    world.store.commit(Changeset.of(quads))
    index = LexicalIndex(world.store, QUERIES)
    assert index.size("alice") == 600
    assert len(index.search("alice", "rare common", 100)) == 3
    assert len(index.search("alice", "common", 1000)) == 600
    assert len(index.search("alice", "number", 1000)) == 600


def test_refresh_leaves_a_user_not_built_yet_alone(world: World) -> None:
    memory = remember(world, "Sailing", "we go sailing in July")
    index = LexicalIndex(world.store, QUERIES)
    assert index.refresh("alice", [memory]) == 0  # nothing built, nothing read
    assert found(index, "sailing") == [str(memory)]  # the first search builds from the store


def test_the_documents_about_an_entity_in_id_order_or_only_the_first(world: World) -> None:
    memories = [
        str(remember(world, f"Acme note {i}", f"Acme: note {i}", entities=[{"name": "Acme"}]))
        for i in range(5)
    ]
    index = LexicalIndex(world.store, QUERIES)
    [acme] = {q.subject for q in world.store.quads(ALICE.kg, None, KGM.name, Literal("Acme"))}
    assert index.about("alice", str(acme)) == sorted(memories)
    assert index.about("alice", str(acme), first=2) == sorted(memories)[:2]
    assert index.about("bob", str(acme)) == []
