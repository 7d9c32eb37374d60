"""SourceStore: idempotent ingest, conflicts, batches, tasks, notes, reads, authority, SHACL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from pyshacl import validate
from rdflib import Graph, Literal, URIRef

from kgmem.clock import FixedClock
from kgmem.errors import SourceConflict
from kgmem.memory.model import Authority, Role, SourceType
from kgmem.memory.source_inputs import (
    MAX_SOURCE_TEXT,
    IngestStatus,
    MessageIn,
    NoteIn,
    TaskIn,
)
from kgmem.memory.source_rdf import content_hash
from kgmem.memory.sources import SourceStore
from kgmem.store import NodeKind, OxigraphStore, QueryRegistry, UserGraphs, stable_node
from kgmem.vocab import KGM

REPO = Path(__file__).resolve().parents[2]
T0 = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def sources(store: OxigraphStore, queries: QueryRegistry, clock: FixedClock) -> SourceStore:
    return SourceStore(store, queries, clock)


def msg(turn: int = 0, text: str = "I work at Acme since March.", **fields: Any) -> MessageIn:
    values: dict[str, Any] = {"chat": "chat-1", "turn": turn, "role": "user", "text": text}
    return MessageIn(**(values | fields))


def task(*states: str, result: str | None = None, task_id: str = "task-7") -> TaskIn:
    changes = [{"state": s, "at": T0 + timedelta(hours=i)} for i, s in enumerate(states)]
    return TaskIn(task_id=task_id, text="rotate the API keys", states=changes, result=result)


def graph_count(store: OxigraphStore, uid: str = "alice") -> int:
    return store.count(UserGraphs(uid).sources)


# -- messages -----------------------------------------------------------------------------


def test_ingest_message_creates_then_is_unchanged(
    sources: SourceStore, store: OxigraphStore, clock: FixedClock
) -> None:
    first = sources.ingest_message("alice", msg())
    size = graph_count(store)
    clock.advance(timedelta(hours=1))  # a re-send without a timestamp is still the same message
    again = sources.ingest_message("alice", msg())
    assert first.status is IngestStatus.CREATED and again.status is IngestStatus.UNCHANGED
    assert first.iri == again.iri == stable_node("alice", NodeKind.MESSAGE, "chat-1", "0")
    assert first.type is SourceType.USER_MESSAGE
    assert graph_count(store) == size > 0
    stored = sources.get("alice", [str(first.iri)])[str(first.iri)]
    assert stored.timestamp == datetime(2026, 1, 1, tzinfo=UTC)  # the clock at first ingest


def test_a_block_reads_each_source_once_and_anew_after_an_ingest(
    sources: SourceStore, store: OxigraphStore
) -> None:
    first = str(sources.ingest_message("alice", msg()).iri)
    later = str(stable_node("alice", NodeKind.MESSAGE, "chat-1", "1"))
    with sources.once():
        held = sources.get("alice", [first])[first]
        with sources.once():  # nested: the same records
            assert sources.get("alice", [first])[first] is held
        assert sources.get("alice", [later]) == {}
        sources.ingest_message("alice", msg(1, "Now at Globex."))  # the gate's reported source
        assert sources.get("alice", [later])[later].text == "Now at Globex."
        assert sources.get("alice", [first])[first] is not held  # read anew, once
    # outside the block every read goes to the store: another user's thread never sees these
    assert sources.get("alice", [first])[first] is not sources.get("alice", [first])[first]


def test_ingest_message_with_other_text_is_refused_and_writes_nothing(
    sources: SourceStore, store: OxigraphStore
) -> None:
    sources.ingest_message("alice", msg(speaker="Alice"))
    before = sorted(store.quads(UserGraphs("alice").sources))
    with pytest.raises(SourceConflict) as raised:
        sources.ingest_message("alice", msg(text="I work at Initech.", speaker="Bob"))
    assert raised.value.source == str(stable_node("alice", NodeKind.MESSAGE, "chat-1", "0"))
    assert raised.value.reason.startswith("text differs")
    assert sorted(store.quads(UserGraphs("alice").sources)) == before


def test_ingest_message_with_other_explicit_timestamp_is_refused(sources: SourceStore) -> None:
    sources.ingest_message("alice", msg(timestamp=T0))
    sources.ingest_message("alice", msg(timestamp="2025-03-01T11:00:00+01:00"))  # same instant
    with pytest.raises(SourceConflict, match="timestamp differs"):
        sources.ingest_message("alice", msg(timestamp=T0 + timedelta(seconds=1)))


def test_batch_is_all_or_nothing(sources: SourceStore, store: OxigraphStore) -> None:
    sources.ingest_message("alice", msg(turn=1, text="stored"))
    batch = [msg(turn=0), msg(turn=1, text="different"), msg(turn=2)]
    with pytest.raises(SourceConflict):
        sources.ingest_messages("alice", batch)
    assert set(sources.get("alice", [str(r) for r in _iris(0, 1, 2)])) == {str(_iris(1)[0])}
    results = sources.ingest_messages("alice", [msg(turn=0), msg(turn=1, text="stored")])
    assert [r.status for r in results] == [IngestStatus.CREATED, IngestStatus.UNCHANGED]
    assert graph_count(store) > 0


def test_batch_with_the_same_turn_twice(sources: SourceStore, store: OxigraphStore) -> None:
    results = sources.ingest_messages("alice", [msg(), msg()])
    assert [r.status for r in results] == [IngestStatus.CREATED, IngestStatus.UNCHANGED]
    size = graph_count(store)
    with pytest.raises(SourceConflict):
        sources.ingest_messages("alice", [msg(turn=5), msg(turn=5, text="other")])
    assert graph_count(store) == size


def _iris(*turns: int) -> list[URIRef]:
    return [stable_node("alice", NodeKind.MESSAGE, "chat-1", str(t)) for t in turns]


def test_tool_message_needs_an_outcome() -> None:
    with pytest.raises(ValidationError) as raised:
        msg(role="tool", tool_name="shell")
    assert raised.value.errors()[0]["loc"] == ("tool_outcome",)
    assert msg(role="tool", tool_name="shell", tool_outcome="failure").tool_outcome == "failure"
    with pytest.raises(ValidationError) as other:
        msg(role="user", tool_outcome="success")
    assert other.value.errors()[0]["loc"] == ("tool_outcome",)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"turn": -1}, "turn"),
        ({"role": "system"}, "role"),
        ({"text": ""}, "text"),
        ({"text": "   \n"}, "text"),
        ({"text": "x" * (MAX_SOURCE_TEXT + 1)}, "text"),
        ({"chat": ""}, "chat"),
        ({"colour": "red"}, "colour"),
        ({"timestamp": "yesterday"}, "timestamp"),
        ({"tool_name": "shell"}, "tool_name"),
    ],
)
def test_message_errors_name_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as raised:
        msg(**fields)
    assert raised.value.errors()[0]["loc"] == (field,)


def test_text_is_kept_verbatim(sources: SourceStore) -> None:
    text = "  leading spaces, é, 🙂 and a newline\n"
    iri = str(sources.ingest_message("alice", msg(text=text)).iri)
    assert sources.get("alice", [iri])[iri].text == text


def test_recall_tools_are_marked_whatever_the_host_says(sources: SourceStore) -> None:
    search = msg(role="tool", tool_name="memory_search", tool_outcome="success")
    shell = msg(turn=1, role="tool", tool_name="shell", tool_outcome="failure")
    flagged = msg(turn=2, role="tool", tool_name="kb", tool_outcome="success", recall_tool=True)
    ids = [str(sources.ingest_message("alice", m).iri) for m in (search, shell, flagged)]
    got = sources.get("alice", ids)
    assert [got[i].recall_tool for i in ids] == [True, False, True]
    assert [got[i].tool_succeeded for i in ids] == [True, False, True]
    assert got[ids[1]].tool_name == "shell" and got[ids[1]].role is Role.TOOL


# -- reads ----------------------------------------------------------------------------------


def test_get_hides_other_users_and_unknown_ids(sources: SourceStore) -> None:
    mine = str(sources.ingest_message("alice", msg()).iri)
    theirs = str(sources.ingest_message("bob", msg()).iri)
    unknown = str(stable_node("alice", NodeKind.MESSAGE, "chat-9", "0"))
    got = sources.get("alice", [mine, theirs, unknown, "not an iri", "urn:x:y", mine])
    assert list(got) == [mine]
    assert set(sources.get("bob", [mine, theirs])) == {theirs}


def test_get_does_not_see_a_foreign_iri_planted_in_another_graph(
    sources: SourceStore, store: OxigraphStore
) -> None:
    theirs = sources.ingest_message("bob", msg()).iri
    # Even an IRI in alice's namespace is invisible unless it is in alice's sources graph.
    forged = str(theirs).replace("/user/bob/", "/user/alice/")
    assert sources.get("alice", [forged]) == {}


def test_previous_message(sources: SourceStore) -> None:
    agent = msg(turn=3, role="assistant", text="You work at Acme, right?")
    sources.ingest_messages("alice", [agent, msg(turn=4, text="Yes, that's right.")])
    sources.ingest_message("alice", msg(turn=0, chat="chat-2"))
    confirmation = sources.get("alice", [str(_iris(4)[0])])[str(_iris(4)[0])]
    previous = sources.previous_message("alice", confirmation)
    assert previous is not None and previous.turn == 3 and previous.role is Role.ASSISTANT
    assert previous.text == "You work at Acme, right?"
    assert sources.previous_message("alice", previous) is None  # turn 2 was never ingested
    first = next(iter(sources.get("alice", [str(_chat2())]).values()))
    assert sources.previous_message("alice", first) is None  # turn 0 has none
    note = sources.remember("alice", "Alice prefers tea")
    assert sources.previous_message("alice", note) is None


def _chat2() -> URIRef:
    return stable_node("alice", NodeKind.MESSAGE, "chat-2", "0")


@pytest.mark.parametrize(
    ("fields", "source_type", "authority"),
    [
        ({"role": "user"}, SourceType.USER_MESSAGE, Authority.USER),
        ({"role": "user", "agent_reported": True}, SourceType.USER_MESSAGE, Authority.AGENT),
        ({"role": "assistant"}, SourceType.AGENT_MESSAGE, Authority.AGENT),
        (
            {"role": "tool", "tool_name": "shell", "tool_outcome": "success"},
            SourceType.TOOL_RESULT,
            Authority.TOOL,
        ),
    ],
)
def test_message_authority(
    sources: SourceStore, fields: dict[str, Any], source_type: SourceType, authority: Authority
) -> None:
    iri = str(sources.ingest_message("alice", msg(**fields)).iri)
    record = sources.get("alice", [iri])[iri]
    assert (record.type, record.authority) == (source_type, authority)
    assert record.agent_reported is fields.get("agent_reported", False)


def test_agent_report_never_blocks_the_first_hand_message(sources: SourceStore) -> None:
    reported = sources.ingest_message("alice", msg(text="I work at Acme", agent_reported=True))
    first_hand = sources.ingest_message("alice", msg(text="I work at Acme since March."))
    assert first_hand.status is IngestStatus.CREATED and reported.iri != first_hand.iri
    got = sources.get("alice", [str(reported.iri), str(first_hand.iri)])
    assert got[str(reported.iri)].authority is Authority.AGENT
    assert got[str(first_hand.iri)].authority is Authority.USER


def test_other_source_authorities(sources: SourceStore) -> None:
    task_iri = str(sources.ingest_task("alice", task("created"))[0].iri)
    note_iri = str(sources.ingest_note("alice", NoteIn(path="a/b.md", text="hello")).iri)
    short = sources.remember("alice", "call Bob on Monday")
    got = sources.get("alice", [task_iri, note_iri, str(short.iri)])
    assert got[task_iri].authority is Authority.TASK and got[task_iri].task_id == "task-7"
    assert got[note_iri].authority is Authority.USER and got[note_iri].note_path == "a/b.md"
    assert got[str(short.iri)] == short and short.authority is Authority.AGENT


# -- tasks ------------------------------------------------------------------------------------


def test_task_appends_state_changes(sources: SourceStore, store: OxigraphStore) -> None:
    first = sources.ingest_task("alice", task("created", "started"))
    later = sources.ingest_task("alice", task("created", "started", "completed", result="3 keys"))
    assert [r.status for r in first] == [IngestStatus.CREATED] * 2
    assert [r.status for r in later] == [IngestStatus.UNCHANGED] * 2 + [IngestStatus.CREATED]
    assert [r.iri for r in later[:2]] == [r.iri for r in first]
    done = sources.get("alice", [str(later[2].iri)])[str(later[2].iri)]
    assert done.text == "rotate the API keys\n3 keys" and done.type is SourceType.TASK_RECORD
    assert (
        store.count(UserGraphs("alice").sources)
        == len(list(store.quads(UserGraphs("alice").sources, predicate=KGM.taskState))) * 5 + 1
    )  # five facts per record, and the one result


def test_task_state_change_cannot_change(sources: SourceStore, store: OxigraphStore) -> None:
    sources.ingest_task("alice", task("created", "started"))
    before = store.count(UserGraphs("alice").sources)
    with pytest.raises(SourceConflict, match="taskState differs"):
        sources.ingest_task("alice", task("created", "cancelled", "failed"))
    assert store.count(UserGraphs("alice").sources) == before


def test_task_result_is_set_once(sources: SourceStore) -> None:
    sources.ingest_task("alice", task("created", "completed"))
    results = sources.ingest_task("alice", task("created", "completed", result="done: 3 keys"))
    assert results[1].status is IngestStatus.UPDATED
    iri = str(results[1].iri)
    assert sources.get("alice", [iri])[iri].text.endswith("\ndone: 3 keys")
    assert sources.ingest_task("alice", task("created", "completed"))[1].status is (
        IngestStatus.UNCHANGED  # not reporting the result again is not changing it
    )
    with pytest.raises(SourceConflict, match="differs"):
        sources.ingest_task("alice", task("created", "completed", result="done: 4 keys"))


def test_task_input_rules() -> None:
    with pytest.raises(ValidationError, match="completed or failed"):
        task("created", "started", result="half done")
    # states sent out of order are kept in time order: the same records whatever the order
    shuffled = TaskIn(
        task_id="t",
        text="x",
        states=[{"state": "started", "at": T0}, {"state": "created", "at": T0 - timedelta(1)}],
    )
    assert [c.state.value for c in shuffled.states] == ["created", "started"]
    # the result goes with the latest completed or failed state
    retried = TaskIn(
        task_id="t",
        text="x",
        states=[
            {"state": "failed", "at": T0},
            {"state": "completed", "at": T0 + timedelta(2)},
            {"state": "started", "at": T0 + timedelta(1)},
        ],
        result="done on the second try",
    )
    assert retried.result_index == 2 and retried.states[2].state.value == "completed"
    with pytest.raises(ValidationError) as raised:
        TaskIn(task_id="t", text="x", states=[{"state": "paused", "at": T0}])
    assert raised.value.errors()[0]["loc"][0] == "states"


# -- notes ------------------------------------------------------------------------------------


def test_note_revisions(sources: SourceStore) -> None:
    one = sources.ingest_note("alice", NoteIn(path="vpn.md", text="use wireguard", revision=1))
    same = sources.ingest_note("alice", NoteIn(path="vpn.md", text="use wireguard", revision=1))
    two = sources.ingest_note("alice", NoteIn(path="vpn.md", text="use openvpn", revision=2))
    assert (one.status, same.status, two.status) == (
        IngestStatus.CREATED,
        IngestStatus.UNCHANGED,
        IngestStatus.CREATED,
    )
    assert one.iri != two.iri
    with pytest.raises(SourceConflict, match="text differs"):
        sources.ingest_note("alice", NoteIn(path="vpn.md", text="use ipsec", revision=1))
    by_hash = sources.ingest_note("alice", NoteIn(path="vpn.md", text="use ipsec"))
    assert by_hash.iri == stable_node("alice", NodeKind.NOTE, "vpn.md", content_hash("use ipsec"))


@pytest.mark.parametrize("path", ["/etc/passwd", "../up.md", "a//b.md", "a\\b.md", "./a.md"])
def test_note_path_must_be_vault_relative(path: str) -> None:
    with pytest.raises(ValidationError) as raised:
        NoteIn(path=path, text="x")
    assert raised.value.errors()[0]["loc"] == ("path",)


# -- shapes -------------------------------------------------------------------------------------


@cache
def _ontology() -> Graph:
    return Graph().parse(REPO / "ontologies" / "kgmem.ttl", format="turtle")


@cache
def _shapes() -> Graph:
    return Graph().parse(REPO / "shapes" / "core.ttl", format="turtle")


def test_stored_sources_conform_to_the_core_shapes(
    sources: SourceStore, store: OxigraphStore
) -> None:
    sources.ingest_messages(
        "alice",
        [
            msg(speaker="Alice", timestamp=T0),
            msg(turn=1, role="assistant", text="Noted.", agent_reported=True),
            msg(turn=2, role="tool", tool_name="memory_search", tool_outcome="success"),
            msg(turn=3, role="tool", tool_name="shell", tool_outcome="failure"),
        ],
    )
    sources.ingest_task("alice", task("created", "started", "failed", result="exit 1"))
    sources.ingest_notes("alice", [NoteIn(path="n.md", text="note", revision=3), _hashed()])
    sources.remember("alice", "Alice prefers tea", chat="chat-1")
    data = Graph()
    for quad in store.quads(UserGraphs("alice").sources):
        data.add((quad.subject, quad.predicate, quad.object))
    assert len(data) > 40
    conforms, _, report = validate(
        data, shacl_graph=_shapes(), ont_graph=_ontology(), inference="none"
    )
    assert conforms, report


def _hashed() -> NoteIn:
    return NoteIn(path="dir/hashed.md", text="# Title\nbody")


def test_the_shapes_check_would_catch_a_bad_source() -> None:
    """The conformance test above can fail: a message without its turn does not conform."""
    data = Graph()
    node = URIRef("https://w3id.org/kgmem/user/alice/msg/x")
    data.add((node, URIRef(str(KGM) + "text"), Literal("hi")))
    data.add((node, URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type"), KGM.Message))
    conforms, _, _ = validate(data, shacl_graph=_shapes(), ont_graph=_ontology(), inference="none")
    assert not conforms


def test_messages_can_be_cited_by_chat_and_turn(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    from kgmem.clock import FixedClock
    from kgmem.memory import MessageIn, SourceStore

    sources = SourceStore(store, queries, FixedClock())
    made = sources.ingest_message("alice", MessageIn(chat="c#1", turn=2, role="user", text="hi"))
    found = sources.get("alice", ["chat:c#1#2", "chat:c#1#3", "chat:nope", "chat:c#1#x"])
    assert list(found) == ["chat:c#1#2"] and found["chat:c#1#2"].iri == made.iri
    assert sources.get("bob", ["chat:c#1#2"]) == {}  # bob has no such message
