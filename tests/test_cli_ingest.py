"""``kgmem ingest`` run as a real process: chat JSON, JSONL, note folders, errors."""

from __future__ import annotations

import json
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from kgmem.clock import SystemClock
from kgmem.memory.model import Authority, SourceType
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.sources import SourceStore, source_iri
from kgmem.store import NodeKind, OxigraphStore, QueryRegistry, UserGraphs, stable_node
from tests.test_cli import holding, kgmem

pytestmark = pytest.mark.integration


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, *rows: Any) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def chat(tmp_path: Path) -> Path:
    return write_json(
        tmp_path / "chat.json",
        {
            "chat": "c1",
            "messages": [
                {"role": "user", "text": "I work at Acme.", "timestamp": "2025-03-01T10:00:00Z"},
                {"role": "assistant", "text": "Noted: you work at Acme."},
                {
                    "role": "tool",
                    "text": "3 results",
                    "tool_name": "memory_search",
                    "tool_outcome": "success",
                },
                {"role": "user", "text": "Yes.", "turn": 7, "speaker": "Alice"},
            ],
        },
    )


def read(home: Path, uid: str, *iris: str) -> dict[str, Any]:
    store = OxigraphStore(home / "store")
    try:
        return dict(SourceStore(store, QueryRegistry.load(), SystemClock()).get(uid, iris))
    finally:
        store.close()


def count(home: Path, uid: str = "alice") -> int:
    store = OxigraphStore(home / "store")
    try:
        return store.count(UserGraphs(uid).sources)
    finally:
        store.close()


def msg_iri(chat_id: str, turn: int, uid: str = "alice") -> str:
    return str(stable_node(uid, NodeKind.MESSAGE, chat_id, str(turn)))


def test_ingest_chat_json_numbers_turns_and_is_idempotent(home: Path, tmp_path: Path) -> None:
    path = chat(tmp_path)
    first = kgmem(home, "ingest", str(path), "--user", "alice")
    assert first.returncode == 0, first.stderr
    assert "user messages: 2 created, 0 unchanged" in first.stdout
    assert "assistant messages: 1 created" in first.stdout
    assert "tool results: 1 created" in first.stdout
    got = read(home, "alice", *(msg_iri("c1", t) for t in (0, 1, 2, 7)))
    assert [r.turn for r in got.values()] == [0, 1, 2, 7]
    assert got[msg_iri("c1", 2)].recall_tool and got[msg_iri("c1", 7)].speaker == "Alice"
    assert got[msg_iri("c1", 0)].authority is Authority.USER
    size = count(home)
    again = kgmem(home, "ingest", str(path), "--user", "alice")
    assert again.returncode == 0
    assert "user messages: 0 created, 2 unchanged" in again.stdout
    assert count(home) == size
    assert read(home, "bob", msg_iri("c1", 0, "alice")) == {}


def test_ingest_jsonl(home: Path, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "log.jsonl",
        {"chat": "a", "turn": 0, "role": "user", "text": "hello", "agent_reported": True},
        {"chat": "b", "turn": 3, "role": "assistant", "text": "hi"},
    )
    (tmp_path / "log.jsonl").write_text(path.read_text() + "\n\n", encoding="utf-8")
    result = kgmem(home, "ingest", str(path), "--user", "alice")
    assert result.returncode == 0, result.stderr
    reported = MessageIn(chat="a", turn=0, role="user", text="hello", agent_reported=True)
    reported_iri = str(source_iri("alice", reported))
    got = read(home, "alice", reported_iri, msg_iri("b", 3))
    assert got[reported_iri].authority is Authority.AGENT  # reported second-hand
    assert got[reported_iri].agent_reported and got[reported_iri].text == "hello"
    assert got[msg_iri("b", 3)].type is SourceType.AGENT_MESSAGE


def test_ingest_errors_name_file_and_line_and_write_nothing(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"chat": "a", "turn": 0, "role": "user", "text": "fine"}),
                "{not json",
                json.dumps({"chat": "a", "turn": 1, "role": "tool", "text": "out"}),
                json.dumps({"chat": "a", "turn": -2, "role": "user", "text": "x"}),
                json.dumps(["a list"]),
            ]
        ),
        encoding="utf-8",
    )
    result = kgmem(home, "ingest", str(path), "--user", "alice")
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kgmem: error: bad.jsonl:2: not JSON")
    assert lines[1] == (
        "kgmem: error: bad.jsonl:3: tool_outcome: required when role is 'tool' (success or failure)"
    )
    assert lines[2].startswith("kgmem: error: bad.jsonl:4: turn: ")
    assert lines[3] == "kgmem: error: bad.jsonl:5: expected a JSON object"
    assert "nothing was ingested" in lines[-1]
    assert "Traceback" not in result.stderr
    assert not (home / "store").exists() or count(home) == 0


def test_ingest_chat_item_errors(home: Path, tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "c.json", {"chat": "c", "messages": [{"role": "user", "txt": "typo"}]}
    )
    result = kgmem(home, "ingest", str(path), "--user", "alice")
    assert result.returncode == 2
    assert "kgmem: error: c.json: messages[0]: text: Field required" in result.stderr
    assert "kgmem: error: c.json: messages[0]: txt: Extra inputs" in result.stderr
    shape = kgmem(home, "ingest", str(write_json(tmp_path / "d.json", [1])), "--user", "alice")
    assert shape.returncode == 2 and '"messages"' in shape.stderr


def test_ingest_conflict_names_the_item_and_writes_nothing(home: Path, tmp_path: Path) -> None:
    assert kgmem(home, "ingest", str(chat(tmp_path)), "--user", "alice").returncode == 0
    size = count(home)
    path = write_jsonl(
        tmp_path / "more.jsonl",
        {"chat": "c9", "turn": 0, "role": "user", "text": "new"},
        {"chat": "c1", "turn": 1, "role": "assistant", "text": "Something else."},
    )
    result = kgmem(home, "ingest", str(path), "--user", "alice")
    assert result.returncode == 2
    assert result.stderr.startswith("kgmem: error: more.jsonl:2: text differs")
    assert count(home) == size  # the new message in line 1 was not written either


def test_ingest_note_folder(home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "projects").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / "projects" / "acme.md").write_bytes(b"# Acme\r\nuse the wireguard profile\n")
    (vault / "todo.txt").write_text("call Bob", encoding="utf-8")
    (vault / "empty.md").write_text("  \n", encoding="utf-8")
    (vault / "image.png").write_bytes(b"\x89PNG")
    (vault / ".obsidian" / "workspace.md").write_text("ignored", encoding="utf-8")
    result = kgmem(home, "ingest", str(vault), "--user", "alice")
    assert result.returncode == 0, result.stderr
    assert "notes: 2 created, 0 unchanged" in result.stdout
    assert "skipped: 1 empty" in result.stdout
    content = b"# Acme\r\nuse the wireguard profile\n"
    revision = "sha256:" + sha256(content).hexdigest()
    iri = str(stable_node("alice", NodeKind.NOTE, "projects/acme.md", revision))
    note = read(home, "alice", iri)[iri]
    assert note.note_path == "projects/acme.md" and note.text == content.decode()
    assert note.type is SourceType.EXTERNAL_NOTE
    assert (
        "notes: 0 created, 2 unchanged"
        in kgmem(home, "ingest", str(vault), "--user", "alice").stdout
    )
    (vault / "todo.txt").write_text("call Bob on Monday", encoding="utf-8")
    changed = kgmem(home, "ingest", str(vault), "--user", "alice")
    assert "notes: 1 created, 1 unchanged" in changed.stdout  # a new revision, the old one kept


def test_ingest_note_folder_errors(home: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    result = kgmem(home, "ingest", str(vault), "--user", "alice")
    assert result.returncode == 2
    assert "kgmem: error: latin1.md: not UTF-8 text" in result.stderr


def test_ingest_usage_errors(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "chat.csv"
    other.write_text("a,b", encoding="utf-8")
    unknown = kgmem(home, "ingest", str(other), "--user", "alice")
    assert unknown.returncode == 2 and "unknown format" in unknown.stderr
    bad_user = kgmem(home, "ingest", str(chat(tmp_path)), "--user", "al:ice")
    assert bad_user.returncode == 2 and "user id" in bad_user.stderr
    missing = kgmem(home, "ingest", str(tmp_path / "nope.json"), "--user", "alice")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert "--user" in kgmem(home, "ingest", str(chat(tmp_path))).stderr
    assert "log.jsonl" in kgmem(home, "ingest", "--help").stdout


def test_ingest_with_the_store_held_is_one_line(home: Path, tmp_path: Path) -> None:
    path = chat(tmp_path)
    assert kgmem(home, "ingest", str(path), "--user", "alice").returncode == 0
    with holding(home / "store"):
        result = kgmem(home, "ingest", str(path), "--user", "alice")
    assert result.returncode == 2
    assert "held by a running kgmem server; ingest through the server" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_ingest_a_task_run_and_its_result_reported_later(home: Path, tmp_path: Path) -> None:
    states = [
        {"state": "started", "at": "2026-03-01T09:00:05Z"},
        {"state": "created", "at": "2026-03-01T09:00:00Z"},  # out of order: kept in time order
        {"state": "completed", "at": "2026-03-01T09:01:40Z"},
    ]
    run = {"task_id": "rotate-keys", "text": "Rotate the API keys", "states": states}
    first = kgmem(home, "ingest", str(write_json(tmp_path / "task.json", run)), "--user", "alice")
    assert first.returncode == 0, first.stderr
    assert "task records: 3 created, 0 unchanged" in first.stdout
    done = write_json(tmp_path / "done.json", {"tasks": [run | {"result": "rotated 3 keys"}]})
    later = kgmem(home, "ingest", str(done), "--user", "alice")
    assert later.returncode == 0, later.stderr
    assert "task records: 0 created, 2 unchanged, 1 updated (a result reported)" in later.stdout
    records = [str(stable_node("alice", NodeKind.TASK, "rotate-keys", str(i))) for i in range(3)]
    got = read(home, "alice", *records)
    assert [got[r].type for r in records] == [SourceType.TASK_RECORD] * 3
    assert (
        got[records[2]].text.endswith("rotated 3 keys") and got[records[2]].task_id == "rotate-keys"
    )

    changed = write_json(tmp_path / "changed.json", run | {"result": "rotated 4 keys"})
    refused = kgmem(home, "ingest", str(changed), "--user", "alice")
    assert refused.returncode != 0 and "changed.json" in refused.stderr
    bad = write_json(
        tmp_path / "bad.json", run | {"states": [{"state": "paused", "at": "2026-03-01"}]}
    )
    invalid = kgmem(home, "ingest", str(bad), "--user", "alice")
    assert invalid.returncode != 0 and "bad.json: states.0.state" in invalid.stderr
