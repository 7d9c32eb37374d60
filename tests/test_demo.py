"""``kgmem demo``, run as a real process: on a fresh home with no server (the store opened by
the command), against a real ``kgmem serve`` (the same outcomes, over HTTP), and run again
(nothing written). What the gate answered is read back from the store, not only from what
the command printed."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgmem.api.accounts import Accounts, Role
from kgmem.store import OxigraphStore, QueryRegistry
from tests.conftest import REPO
from tests.helpers import kgmem_serve

STALE = "Lake District trip starts 12 June 2026"  # true, then moved by the user
TRUE_CASES = {"fact", "preference", "routine", "event", "change"}


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGMEM_")}
    # no consolidation sweep of the idle demo chat while a test compares the store
    return env | {"KGMEM_HOME": str(home), "KGMEM_SWEEP_INTERVAL_SECONDS": "86400"}


def kgmem(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgmem.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(home),
        cwd=REPO,
    )


def run_demo(home: Path, *args: str) -> dict[str, Any]:
    done = kgmem(home, "demo", "--json", *args)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def cli_json(home: Path, *args: str) -> Any:
    done = kgmem(home, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def the(report: dict[str, Any], case: str) -> dict[str, Any]:
    [draft] = [d for d in report["drafts"] if d["case"] == case]
    return draft


def answers(report: dict[str, Any]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """What the gate answered each draft, without the memory ids (new on every home)."""
    return [(d["case"], d["title"], d["outcome"], tuple(d["reasons"])) for d in report["drafts"]]


def assert_gate_answers(report: dict[str, Any]) -> None:
    assert not report["already"]
    invention = the(report, "invention")
    assert invention["outcome"] == "refused" and invention["memory"] is None
    assert any("Felix" in reason for reason in invention["reasons"]), invention
    contradiction = the(report, "contradiction")
    assert contradiction["outcome"] == "quarantined"
    assert contradiction["reasons"] == [
        f'contradicts a pinned or higher-authority memory: "{STALE}"'
    ]
    assert the(report, "change")["reasons"] == [f'supersedes "{STALE}"']
    true = [d for d in report["drafts"] if d["case"] in TRUE_CASES]
    assert len(true) == len(report["drafts"]) - 2 >= 8
    assert {d["outcome"] for d in true} == {"active"}, answers(report)
    assert report["counts"] == {"active": len(true), "refused": 1, "quarantined": 1}


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A fresh home the demo ran on once, with no server, and what it printed."""
    home = tmp_path_factory.mktemp("demo-local")
    return home, run_demo(home)


def test_demo_on_a_fresh_home_keeps_the_truths_refuses_the_invention_quarantines_the_contradiction(
    local: tuple[Path, dict[str, Any]],
) -> None:
    home, report = local
    assert report["server"] is None and report["user"] == "demo"
    assert_gate_answers(report)
    by_title = {m["title"]: m for m in cli_json(home, "memories", "list", "--user", "demo")}
    [held] = cli_json(home, "memories", "list", "--user", "demo", "--status", "quarantined")
    for draft in report["drafts"]:
        if draft["case"] in TRUE_CASES:
            memory = by_title.pop(draft["title"])
            assert memory["iri"].endswith("/" + draft["memory"])
            assert memory["status"] == ("superseded" if draft["title"] == STALE else "active")
    assert by_title == {}  # nothing else: the invention and the contradiction are not memories
    contradiction = the(report, "contradiction")
    assert held["title"] == contradiction["title"]
    assert held["iri"].endswith("/" + contradiction["memory"])
    feed = cli_json(home, "memories", "decisions", "--user", "demo")
    [refusal] = [d for d in feed if d["action"] == "refuse"]
    assert refusal["draft"]["title"] == the(report, "invention")["title"]
    assert refusal["reason"] == the(report, "invention")["reasons"][0]


def test_demo_leaves_a_key_of_the_demo_users_own_and_an_admin_for_the_server(
    local: tuple[Path, dict[str, Any]],
) -> None:
    home, report = local
    key = Path(report["key_file"])
    assert key == home / "api-key.demo"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    store = OxigraphStore(home / "store")
    try:
        accounts = Accounts(store, QueryRegistry.load())
        principal = accounts.authenticate(key.read_text())
        assert (principal.uid, principal.role) == ("demo", Role.USER)
        # what a server's first start makes, so `kgmem serve` after the demo has an admin
        admin = accounts.authenticate((home / "api-key").read_text())
        assert (admin.uid, admin.role) == ("me", Role.ADMIN)
    finally:
        store.close()


def test_demo_prints_the_outcomes_and_commands_for_the_demo_user(
    local: tuple[Path, dict[str, Any]],
) -> None:
    home, report = local
    page = report["page_file"]
    assert page is not None and "**start date**: 2026-06-19" in Path(page).read_text()
    commands = [step["command"] for step in report["next"]]
    assert "kgmem memories list --user demo --status quarantined" in commands
    assert any("/api/search?q=" in c for c in commands)
    assert any("/api/context -d" in c for c in commands)
    assert any("/api/pages/by-entity?entity=Lake+District+trip" in c for c in commands)
    assert any("/api/decisions" in c for c in commands)
    assert "http://127.0.0.1:8765/" in commands
    text = kgmem(home, "demo")
    assert text.returncode == 0, text.stderr
    assert "already" in text.stdout and "nothing was written" in text.stdout
    for draft in report["drafts"]:
        assert draft["title"] in text.stdout
    assert "refused        invention" in text.stdout
    assert "quarantined    contradiction" in text.stdout
    assert f"cat {home / 'api-key.demo'}" in text.stdout


def _graphs(home: Path) -> dict[str, int]:
    graphs: dict[str, int] = cli_json(home, "status")["store"]["graphs"]
    return graphs


def test_demo_run_again_writes_nothing_and_shows_where_its_memories_stand(
    local: tuple[Path, dict[str, Any]],
) -> None:
    home, first = local
    before, key = _graphs(home), (home / "api-key.demo").read_text()
    again = run_demo(home)
    assert _graphs(home) == before
    assert (home / "api-key.demo").read_text() == key
    assert again["already"] is True
    now = {d["title"]: d for d in again["drafts"]}
    for draft in first["drafts"]:
        standing = now[draft["title"]]
        assert standing["memory"] == draft["memory"]
        expected = "superseded" if draft["title"] == STALE else draft["outcome"]
        assert standing["outcome"] == expected
        assert standing["reasons"] == draft["reasons"]  # what the gate said then


def test_demo_replaces_a_key_the_store_no_longer_accepts(
    local: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(local[0], home)
    (home / "api-key.demo").write_text("kgm_000000000000_" + "A" * 43 + "\n")
    report = run_demo(home)
    assert report["already"] is True
    store = OxigraphStore(home / "store")
    try:
        principal = Accounts(store, QueryRegistry.load()).authenticate(
            (home / "api-key.demo").read_text()
        )
    finally:
        store.close()
    assert principal.uid == "demo"


@contextmanager
def served(home: Path) -> Iterator[str]:
    """``kgmem serve`` on a free loopback port of ``home``; its base URL."""
    with kgmem_serve(_env(home), home.parent / "serve.log") as server:
        yield server.url


def _settled(url: str, admin: str) -> dict[str, int]:
    """The store's triples per graph, once the pages following the drafts are written."""
    headers = {"Authorization": f"Bearer {admin}"}
    last: dict[str, int] = {}
    for _ in range(100):
        health = httpx.get(f"{url}/health", params={"detail": "1"}, headers=headers, timeout=5)
        graphs: dict[str, int] = health.json()["store"]["graphs"]
        if graphs == last:
            return graphs
        last = graphs
        time.sleep(0.3)
    raise AssertionError("the store kept changing")


@pytest.mark.integration
def test_demo_through_a_running_server_answers_as_without_it(
    local: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with served(home) as url:
        report = run_demo(home)
        assert report["server"] == url
        assert_gate_answers(report)
        assert answers(report) == answers(local[1])
        headers = {"Authorization": f"Bearer {(home / 'api-key.demo').read_text().strip()}"}
        with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
            me = http.get("/api/me").json()
            assert (me["user"], me["role"]) == ("demo", "user")  # made by the admin route
            listed = {m["title"]: m for m in http.get("/api/memories").json()["memories"]}
            [held] = http.get("/api/memories", params={"status": "quarantined"}).json()["memories"]
            feed = http.get("/api/decisions").json()["decisions"]
        for draft in report["drafts"]:
            if draft["case"] in TRUE_CASES:
                assert listed[draft["title"]]["short_id"] == draft["memory"]
                expected = "superseded" if draft["title"] == STALE else "active"
                assert listed[draft["title"]]["status"] == expected
        assert the(report, "invention")["title"] not in listed
        assert held["short_id"] == the(report, "contradiction")["memory"]
        [refusal] = [d for d in feed if d["action"] == "refuse"]
        assert refusal["draft"]["title"] == the(report, "invention")["title"]
        commands = [step["command"] for step in report["next"]]
        assert f"{url}/" in commands and not any(c.startswith("kgmem ") for c in commands)
        admin = (home / "api-key").read_text().strip()
        before = _settled(url, admin)
        again = run_demo(home)
        assert again["already"] is True and again["server"] == url
        assert _settled(url, admin) == before


@pytest.mark.integration
def test_demo_through_a_server_started_after_it_reuses_its_key(
    local: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(local[0], home)
    key = (home / "api-key.demo").read_text()
    with served(home) as url:
        report = run_demo(home)
    assert report["already"] is True and report["server"] == url
    assert (home / "api-key.demo").read_text() == key
    assert answers(report) == answers(run_demo(home))  # the store, after the server stopped


def test_the_demo_script_ships_as_package_data() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["kgmem"]
    assert any(fnmatch("cli/demo/chat.json", pattern) for pattern in patterns)
