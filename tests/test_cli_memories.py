"""``kgmem memories`` and ``kgmem review`` run as real processes, on an ingested chat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kgmem.cli.common import local_services
from kgmem.config import load_settings
from kgmem.store import NodeKind, node_iri, stable_node
from tests.test_cli import holding, kgmem
from tests.test_cli_ingest import write_json

pytestmark = pytest.mark.integration

MESSAGES = ["I work at Acme.", "I know Bob Smith.", "I live in Lisbon."]


def msg(turn: int) -> str:
    return str(stable_node("alice", NodeKind.MESSAGE, "c1", str(turn)))


def fact(turn: int, predicate: str, obj: str, obj_type: str, quote: str) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": quote,
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": predicate, "object": obj}],
        "entities": [{"name": obj, "types": [obj_type]}],
        "evidence": [{"source": msg(turn), "quote": quote}],
    }


ACME = fact(0, "schema:worksFor", "Acme", "schema:Organization", "I work at Acme")
BOB = fact(1, "schema:knows", "Bob Smith", "schema:Person", "I know Bob Smith")
LISBON = fact(2, "schema:homeLocation", "Lisbon", "schema:Place", "I live in Lisbon")


def ingested(home: Path, tmp_path: Path) -> None:
    messages = [
        {"role": "user", "text": text, "timestamp": f"2025-03-01T10:0{i}:00Z"}
        for i, text in enumerate(MESSAGES)
    ]
    chat = write_json(tmp_path / "chat.json", {"chat": "c1", "messages": messages})
    result = kgmem(home, "ingest", str(chat), "--user", "alice")
    assert result.returncode == 0, result.stderr


def ok(home: Path, *args: str, **env: str) -> str:
    result = kgmem(home, *args, **env)
    assert result.returncode == 0, result.stderr
    return result.stdout


def error(home: Path, *args: str, **env: str) -> str:
    """The one-line error of a command that must fail with exit code 2."""
    result = kgmem(home, *args, **env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgmem: error: "), result.stderr
    return lines[0]


def draft(home: Path, tmp_path: Path, *drafts: dict[str, Any], flags: tuple[str, ...] = ()) -> Any:
    path = write_json(tmp_path / "drafts.json", list(drafts) if len(drafts) > 1 else drafts[0])
    return ok(home, "memories", "draft", str(path), "--user", "alice", *flags).splitlines()


def as_json(home: Path, *args: str) -> Any:
    return json.loads(ok(home, *args, "--user", "alice", "--json"))


def test_draft_list_show_and_review(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    invented = {**ACME, "evidence": [{"source": msg(0), "quote": "I work at Globex"}]}
    lines = draft(home, tmp_path, ACME, invented, ACME)
    created, refused, again = (line.split(maxsplit=3) for line in lines)
    assert created[:2] == ["0", "active"] and len(created[2]) == 32
    assert refused[:3] == ["1", "refused", "-"] and "does not occur verbatim" in refused[3]
    assert again[:3] == ["2", "discarded", created[2]]
    [refusal] = [d for d in as_json(home, "memories", "decisions") if d["action"] == "refuse"]
    assert refusal["target"] is None and "does not occur verbatim" in refusal["reason"]
    shown_feed = ok(home, "memories", "decisions", "--user", "alice")
    assert "refuse         draft 'I work at Acme'  agent: claim 0:" in shown_feed
    held = draft(home, tmp_path, BOB, LISBON, flags=("--review",))
    bob, lisbon = (line.split()[2] for line in held)
    assert all(line.split()[1] == "pending" and "review mode" in line for line in held)

    listed = as_json(home, "memories", "list")
    assert {m["title"]: m["status"] for m in listed} == {
        "I work at Acme": "active",
        "I know Bob Smith": "pending",
        "I live in Lisbon": "pending",
    }
    acme = node_iri("alice", NodeKind.MEMORY, created[2])
    shown = ok(home, "memories", "show", created[2], "--user", "alice")
    assert f"iri            {acme}" in shown and "status         active" in shown
    assert "Acme <https://w3id.org/kgmem/user/alice/entity/" in shown  # claims name entities
    assert "<https://schema.org/worksFor>" in shown
    assert f"{msg(0)} (userMessage): support explicit, authority user, span 0-14" in shown
    assert 'quote: "I work at Acme"' in shown
    record = as_json(home, "memories", "show", str(acme))  # the full IRI works too
    [evidence] = record["evidence"]
    assert (evidence["source"], evidence["span"], evidence["quote"]) == (
        msg(0),
        [0, 14],
        "I work at Acme",
    )
    assert record["claims"][0]["predicate"] == "https://schema.org/worksFor"
    assert "Acme" in record["entity_names"].values()

    inbox = ok(home, "review", "list", "--user", "alice")
    assert bob in inbox and lisbon in inbox and "(2 pending memories)" in inbox
    assert ok(home, "review", "approve", bob, "--user", "alice").startswith(f"approved {bob}")
    assert ok(home, "review", "reject", lisbon, "--user", "alice").startswith(f"rejected {lisbon}")
    active = as_json(home, "memories", "list", "--status", "active", "--kind", "semantic")
    assert {m["title"] for m in active} == {"I work at Acme", "I know Bob Smith"}
    refusal = error(home, "review", "approve", lisbon, "--user", "alice")
    assert refusal.endswith("cannot activate a memory that is archived")

    held = ("memories", "list", "--valid-at", "2030-01-01", "--entity", "I")
    employer = as_json(home, *held, "--predicate", "schema:worksFor")
    assert [m["title"] for m in employer] == ["I work at Acme"]
    assert as_json(home, *held, "--predicate", "schema:knows")[0]["title"] == "I know Bob Smith"
    refused = error(home, "memories", "list", "--user", "alice", "--valid-at", "soon")
    assert refused.startswith("kgmem: error: --valid-at: ")


def test_lifecycle_revert_forget_and_decisions(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    [line] = draft(home, tmp_path, ACME, flags=("--person",))
    memory = line.split()[2]
    for action in ("pin", "archive", "restore"):
        ok(home, "memories", action, memory, "--user", "alice")
    assert ok(home, "memories", "rate", memory, "-1", "--user", "alice").startswith("rated -1")
    record = as_json(home, "memories", "show", memory)
    assert (record["pinned"], record["status"], record["rating"]) == (True, "active", -1)

    feed = as_json(home, "memories", "decisions")
    assert [d["action"] for d in feed] == ["rate", "restore", "archive", "pin", "create"]
    assert feed[-1]["actor"] == "person"
    archive, restore = feed[2]["iri"], feed[1]["iri"].rsplit("/", 1)[-1]
    assert "later changes touched" in error(home, "memories", "revert", archive, "--user", "alice")
    ok(home, "memories", "revert", feed[0]["iri"], "--user", "alice")  # the rating
    ok(home, "memories", "revert", restore, "--user", "alice")
    record = as_json(home, "memories", "show", memory)
    assert (record["status"], record["rating"]) == ("archived", 0)  # the store is back
    assert "already reverted" in error(home, "memories", "revert", restore, "--user", "alice")

    gone = ok(home, "memories", "forget", memory, "--user", "alice")
    assert gone.startswith(f"forgot {memory}")
    assert "no such memory" in error(home, "memories", "show", memory, "--user", "alice")
    assert memory not in ok(home, "memories", "decisions", "--user", "alice")


def test_errors_are_one_line(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    bad = write_json(tmp_path / "bad.json", [ACME, {**ACME, "confidence": 1.5}])
    message = error(home, "memories", "draft", str(bad), "--user", "alice")
    assert message.startswith("kgmem: error: bad.json: draft 1, field confidence: ")
    (tmp_path / "broken.json").write_text('[{"kind": ', encoding="utf-8")
    assert "broken.json:1: not JSON" in error(
        home, "memories", "draft", str(tmp_path / "broken.json"), "--user", "alice"
    )
    big = write_json(tmp_path / "big.json", [ACME] * 26)
    assert "1 to 25 drafts" in error(home, "memories", "draft", str(big), "--user", "alice")
    assert "(no memories)" in ok(home, "memories", "list", "--user", "alice")  # none written
    unknown = error(home, "memories", "pin", "deadbeef", KGMEM_DEFAULT_USER="alice")
    assert "/user/alice/memory/deadbeef: no such memory" in unknown
    assert "/user/me/memory/deadbeef" in error(home, "memories", "show", "deadbeef")
    wrong = str(node_iri("alice", NodeKind.MEMORY, "deadbeef"))
    assert "is a memory, not a decision" in error(
        home, "memories", "revert", wrong, "--user", "alice"
    )
    assert "belongs to user 'alice'" in error(home, "memories", "show", wrong, "--user", "bob")
    with holding(home / "store"):
        held = error(home, "memories", "list", "--user", "alice")
    assert "held by a running kgmem server; read memories through the server" in held


def test_queued_drafts_wait_for_consolidate(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    lines = draft(home, tmp_path, ACME, LISBON, flags=("--queue",))
    assert [line.split()[:2] for line in lines] == [["0", "queued"], ["1", "queued"]]
    assert as_json(home, "memories", "list") == []  # nothing decided yet
    out = ok(home, "consolidate", "--user", "alice").splitlines()
    assert out[0] == "no model configured: queued drafts only; raw transcripts wait"
    assert [line.split()[-1] for line in out[1:10]] == [
        "extract", "ground", "classify", "resolve", "assemble",
        "reconcile", "validate", "commit", "author",
    ]  # fmt: skip
    assert out[-1].endswith(": committed")
    titles = sorted(m["title"] for m in as_json(home, "memories", "list"))
    assert titles == ["I live in Lisbon", "I work at Acme"]
    history = ok(home, "consolidate", "--user", "alice", "--history").splitlines()
    assert history[:2] == [
        "user alice: model none (raw transcripts wait)",
        "waiting: 3 sources, 0 queued drafts",
    ]
    assert len(history) == 3 and ": committed  stage author  started " in history[2]
    assert "  attempts 1  recoveries 0  " in history[2]  # #28: it ran once, not "attempts 0"
    again = ok(home, "consolidate", "--user", "alice")
    assert again.strip() == (
        "no model configured: queued drafts only; raw transcripts wait\n"
        "nothing to consolidate for alice (3 sources and 0 drafts not yet taken)"
    )


SEATS = "Open the seat map, always pick an aisle seat for me, and pay with the work card."
STEPS = ["Open the seat map", "Pick an aisle seat", "Pay with the work card"]


def seats_said(home: Path, tmp_path: Path) -> None:
    said = {"chat": "c1", "messages": [{"role": "user", "text": SEATS}]}
    result = kgmem(home, "ingest", str(write_json(tmp_path / "chat.json", said)), "--user", "alice")
    assert result.returncode == 0, result.stderr


def procedure(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "procedural",
        "title": "Seat and payment",
        "confidence": 0.9,
        "steps": STEPS,
        "triggers": ["when booking a flight"],
        "evidence": [{"source": str(msg(0)), "quote": SEATS.rstrip(".")}],
        **extra,
    }


def test_a_drafted_procedure_shows_its_steps_and_reaches_the_packet(
    home: Path, tmp_path: Path
) -> None:
    seats_said(home, tmp_path)
    [line] = draft(home, tmp_path, procedure())
    index, outcome, memory = line.split()[:3]
    assert (index, outcome) == ("0", "active"), line
    shown = ok(home, "memories", "show", memory, "--user", "alice")
    assert "steps (3):\n  1. Open the seat map\n  2. Pick an aisle seat\n" in shown
    assert "triggers       when booking a flight" in shown
    record = as_json(home, "memories", "show", memory)
    assert (record["steps"], record["triggers"]) == (STEPS, ["when booking a flight"])
    settings = load_settings(env={"KGMEM_HOME": str(home)})
    with local_services(settings, "read the packet") as services:
        packet = services.retrieval.retrieve_memory("alice", "book a flight", "execute")
    assert packet.procedure is not None and packet.procedure.id.endswith(memory)
    assert list(packet.procedure.steps) == STEPS
    assert packet.procedure.triggers == ("when booking a flight",)


def test_a_queued_procedure_keeps_its_steps_through_consolidation(
    home: Path, tmp_path: Path
) -> None:
    seats_said(home, tmp_path)
    assert draft(home, tmp_path, procedure(), flags=("--queue",))[0].split()[1] == "queued"
    assert ok(home, "consolidate", "--user", "alice").splitlines()[-1].endswith(": committed")
    [listed] = as_json(home, "memories", "list")
    record = as_json(home, "memories", "show", listed["iri"])
    assert (record["status"], record["steps"]) == ("active", STEPS)


def test_bad_steps_are_refused_naming_the_field(home: Path, tmp_path: Path) -> None:
    seats_said(home, tmp_path)
    bad = write_json(tmp_path / "bad.json", [procedure(steps=["Open the seat map", " "])])
    message = error(home, "memories", "draft", str(bad), "--user", "alice")
    assert message.startswith("kgmem: error: bad.json: draft 0, field steps[1]: ")
    semantic = write_json(tmp_path / "semantic.json", [procedure(kind="semantic")])
    message = error(home, "memories", "draft", str(semantic), "--user", "alice")
    assert message.startswith("kgmem: error: semantic.json: draft 0, field steps: ")
    assert "only a procedural memory has steps" in message
    assert "(no memories)" in ok(home, "memories", "list", "--user", "alice")  # none written


def test_users_mode_sets_the_mode_drafts_follow(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    assert ok(home, "users", "mode", "alice").strip() == "user alice: autonomous"
    assert ok(home, "users", "mode", "alice", "review").strip() == "user alice: review (changed)"
    [line] = draft(home, tmp_path, ACME)  # no --review: the user's own mode holds
    assert line.split()[1] == "pending" and "review mode" in line
    assert ok(home, "users", "mode", "alice", "review").strip() == "user alice: review"
    assert "autonomous" in ok(home, "users", "mode", "alice", "autonomous")
    [line] = draft(home, tmp_path, LISBON)
    assert line.split()[1] == "active"
    refused = kgmem(home, "users", "mode", "alice", "sometimes")
    assert refused.returncode == 2 and "'sometimes' is not one of" in refused.stderr
