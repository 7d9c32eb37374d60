"""Hostile input over REST, in bounded time: schemathesis drives every operation of
``/api/openapi.json`` on a real server (``kgmem serve`` in a process of its own, so the
generator's CPU is not the server's), authenticated with its first key, through its coverage,
fuzzing and stateful phases, valid and invalid input alike, with text that holds NUL, non-BMP
characters and the URL of a loopback tripwire. One run (fixed seed, derandomized, a capped
number of examples per operation) feeds the tests below:

- no answer is a 5xx;
- every answer is one the document promises: a documented status and schema, a valid input
  accepted (or refused with a documented 4xx), an invalid one refused, ``Allow`` right;
- nothing connects to the tripwire, which is also the configured model's API base: no input
  makes the server reach out;
- ``/health`` answers within a second throughout.

The admin operations that change what every other one stands on (:data:`DESTRUCTIVE`) are
left out of that run and driven by a run of their own right after it, under a second admin's
key and pinned to a user made to be revoked and reset (see :data:`DESTRUCTIVE`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
import schemathesis
from schemathesis.engine import events, from_schema
from schemathesis.schemas import BaseSchema

from tests.api.test_rest import allergy
from tests.hostile.conftest import HEALTH_EVERY, HEALTH_WITHIN, health_probe, served
from tests.regressions.tripwire import Tripwire, tripwire

pytestmark = [pytest.mark.hostile, pytest.mark.integration]

# CI runs the fixed seed; HOSTILE_SEED and HOSTILE_EXAMPLES explore further by hand.
SEED = int(os.environ.get("HOSTILE_SEED", "22"))
EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "25"))  # per operation and phase: ~1 min
# A body over max_body_bytes is refused whatever its schema says (JSON Schema cannot count
# bytes), and every operation with a body documents that 413.
TOO_LARGE = "413"
# Admin operations that would pull the ground from under the run: a revoke ends keys (with
# no key_id, the whole account: the run's own key, were the generator to name its user), a
# reset drops all of a user's memory (what the run's reads and changes work on), a shapes
# file applies to every later write, and the catalogue's ontologies are everyone's. The main
# run leaves them out by operation id; a run of their own follows it, under a second admin's
# key (ADMIN), with every user in a path pinned to VICTIM, a user made to be revoked and reset,
# so the run's own key and data are never theirs to touch.
DESTRUCTIVE = (
    "admin_revoke",
    "admin_reset",
    "admin_put_shapes",
    "admin_delete_shapes",
    "admin_put_ontology",
    "admin_delete_ontology",
)
# The admin writes the main run keeps: a new account, another key, or a backup (a copy of
# the store under the home's backups/) takes nothing from anyone. A new admin write must be
# put in one list or the other (the run checks).
KEPT = ("admin_add_user", "admin_issue_key", "admin_backup")
ADMIN, VICTIM = "hostile-admin", "hostile-victim"
# What JSON Schema cannot say, so a schema-valid input refused with a 422 is no finding here:
# a reset's confirm must repeat the path's user (its generated body names VICTIM half the
# time, so resets do happen), a shapes file must parse as Turtle and hold a shape that
# compiles, an ontology must parse in the syntax ?format= names. Every other check holds.
CONTENT_CHECKED = ("admin_reset", "admin_put_shapes", "admin_put_ontology")


@dataclass(frozen=True)
class Finding:
    operation: str
    check: str
    title: str
    message: str
    reproduce: str

    def __str__(self) -> str:
        return f"{self.operation}: {self.check}: {self.title}\n{self.message}\n{self.reproduce}"


@dataclass
class Run:
    """What one schemathesis run against the server saw."""

    operations: set[str] = field(default_factory=set)  # as the document lists them
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    answers: Counter[tuple[str, int]] = field(default_factory=Counter)  # (operation, status)
    sent: list[object] = field(default_factory=list)  # every body and decoded URL
    requests: list[tuple[float, float, str]] = field(default_factory=list)  # (start, end, what)
    health: list[tuple[float, float]] = field(default_factory=list)  # (wall time, seconds)
    connections: list[tuple[str, int]] = field(default_factory=list)
    seconds: float = 0.0


def _config(
    base: str, token: str, wire: Tripwire, operations: list[dict[str, object]] | None = None
) -> schemathesis.Config:
    hostile = ["\x00", "tea\x00time", "\U0001f375\U0001d54b\U00010348", "\x00\U0001f600", wire.url]
    hostile += [f"chat:{wire.url}#0", f"<{wire.url}>", wire.url.replace("http", "https")]
    expected = ["400", "401", "403", "404", "405", "409", TOO_LARGE, "415", "422"]
    return schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "suppress-health-check": ["all"],
            "base-url": base,
            "headers": {"Authorization": f"Bearer {token}"},
            "request-timeout": 30,
            "dictionaries": {"hostile": {"values": hostile}, "victim": {"values": [VICTIM]}},
            "operations": operations or [],
            "generation": {
                "mode": "all",
                "max-examples": EXAMPLES,
                "deterministic": True,
                "database": "none",
                "allow-x00": True,
                "codec": "utf-8",
                "dictionaries": {"string": {"dictionary": "hostile", "probability": 0.2}},
            },
            "checks": {
                "negative_data_rejection": {"expected-statuses": expected},
                "positive_data_acceptance": {
                    "expected-statuses": ["2xx", "401", "403", "404", "409", TOO_LARGE]
                },
            },
            "phases": {"stateful": {"max-steps": 10}},
        }
    )


def _record(run: Run, event: events.EngineEvent) -> None:
    if isinstance(event, events.NonFatalError | events.FatalError):
        run.errors.append(repr(getattr(event, "value", None) or getattr(event, "exception", "")))
        return
    if not isinstance(event, events.ScenarioFinished):
        return
    recorder = event.recorder
    for interaction in recorder.interactions.values():
        request = interaction.request
        response = interaction.response
        if response is not None:
            run.answers[(recorder.label, response.status_code)] += 1
            shown = f"{request.method} {unquote(request.uri)[:120]} ({request.body_size or 0} B)"
            end = interaction.timestamp
            run.requests.append((end - response.elapsed, end, shown))
        run.sent.append(unquote(request.uri))
        if request.body:
            run.sent.append(request.body.decode("utf-8", "replace"))
    for case_id, checks in recorder.checks.items():
        for check in checks:
            info = check.failure_info
            if info is not None:
                failure, seen = info.failure, recorder.interactions.get(case_id)
                answer = seen.response if seen is not None else None
                said = "" if answer is None else f"{answer.status_code} {answer.content[:300]!r}"
                reproduce = f"{info.code_sample[:1500]}\n-> {said}"
                run.findings.append(
                    Finding(recorder.label, check.name, failure.title, failure.message, reproduce)
                )


def _user(client: httpx.Client, uid: str, role: str = "user") -> str:
    """A new account's first key."""
    made = client.post("/api/admin/users", json={"user": uid, "role": role})
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def _destructive(document: dict[str, Any], base: str, token: str, wire: Tripwire) -> BaseSchema:
    """The schema of the DESTRUCTIVE operations alone, as ADMIN runs them on VICTIM."""
    pinned: dict[str, object] = {"user": VICTIM}
    pinned["body.confirm"] = {"dictionary": "victim", "probability": 0.5}
    operations: list[dict[str, object]] = [
        {"include-operation-id": list(DESTRUCTIVE), "parameters": pinned},
        {
            "include-operation-id": list(CONTENT_CHECKED),
            "checks": {"positive_data_acceptance": {"enabled": False}},
        },
    ]
    config = _config(base, token, wire, operations)
    schema = schemathesis.openapi.from_dict(document, config=config)
    # (an include would add to the selection the [[operations]] entries make: all of them)
    ids = {op["operationId"] for ops in document["paths"].values() for op in ops.values()}
    return schema.exclude(operation_id=sorted(ids - set(DESTRUCTIVE)))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    found = Run()
    home = tmp_path_factory.mktemp("hostile")
    with tripwire() as wire, served(home, wire) as client:
        allergy(client, "h1", "peanuts")  # something for input to find or change
        base = str(client.base_url).rstrip("/")
        second = _user(client, ADMIN, "admin")
        with httpx.Client(
            base_url=base, headers={"Authorization": f"Bearer {_user(client, VICTIM)}"}
        ) as victim:
            allergy(victim, "v1", "sesame")  # something for a reset to drop
        answer = client.get("/api/openapi.json")
        assert answer.status_code == 200, answer.text
        document = answer.json()
        token = str(client.headers["Authorization"]).removeprefix("Bearer ")
        schema = schemathesis.openapi.from_dict(document, config=_config(base, token, wire))
        found.operations = {
            f"{method.upper()} {path}"
            for path, operations in document["paths"].items()
            for method in operations
        }
        ids = {op["operationId"] for ops in document["paths"].values() for op in ops.values()}
        assert set(DESTRUCTIVE) <= ids, sorted(set(DESTRUCTIVE) - ids)
        writes = {
            op["operationId"]
            for ops in document["paths"].values()
            for method, op in ops.items()
            if method != "get" and "admin" in op.get("tags", ())
        }
        assert writes == {*DESTRUCTIVE, *KEPT}, "an admin write in neither DESTRUCTIVE nor KEPT"
        began = time.monotonic()
        with health_probe(str(client.base_url), home / "health.log") as samples:
            for event in from_schema(schema.exclude(operation_id=list(DESTRUCTIVE))).execute():
                _record(found, event)
            assert client.get("/api/me").status_code == 200  # the run's own key still works
            for event in from_schema(_destructive(document, base, second, wire)).execute():
                _record(found, event)
        found.health = samples()
        found.seconds = time.monotonic() - began
        found.connections = list(wire.connections)
    return found


def _report(findings: list[Finding]) -> str:
    return "\n\n".join(str(f) for f in findings[:10]) + f"\n({len(findings)} in all)"


def test_the_run_covered_every_operation_with_hostile_text(run: Run) -> None:
    assert not run.errors, run.errors
    called = {operation for operation, _ in run.answers}
    assert run.operations <= called, sorted(run.operations - called)
    succeeded = {operation for operation, status in run.answers if status < 300}
    assert len(succeeded & run.operations) >= 0.75 * len(run.operations), sorted(succeeded)
    texts = [str(s) for s in run.sent]
    assert any("\x00" in t or "\\u0000" in t for t in texts), "no NUL was sent"
    assert any(any(ord(c) > 0xFFFF for c in t) or "\\ud8" in t for t in texts), "no non-BMP"


def test_no_operation_answers_5xx(run: Run) -> None:
    server_errors = {key: n for key, n in run.answers.items() if key[1] >= 500}
    assert server_errors == {}, _report([f for f in run.findings if "server" in f.check])


def test_every_answer_is_one_the_document_promises(run: Run) -> None:
    assert run.findings == [], _report(run.findings)


def test_nothing_reaches_the_tripwire(run: Run) -> None:
    assert run.connections == []


def test_health_answers_within_a_second_throughout(run: Run) -> None:
    assert len(run.health) >= min(20, run.seconds / HEALTH_EVERY / 2), run.health
    slow = [(at, took) for at, took in run.health if took >= HEALTH_WITHIN]
    assert slow == [], "\n".join(
        f"/health took {took:.2f} s; meanwhile: "
        + "; ".join(r for start, end, r in run.requests if start <= at + took and end >= at)
        for at, took in slow[:5]
    )
