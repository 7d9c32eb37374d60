"""The kgmem command line, run as a real process."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from rdflib import Literal, URIRef

from kgmem import __version__
from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM
from tests.conftest import REPO, free_port
from tests.helpers import holding


def kgmem(home: Path, *args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgmem.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KGMEM_HOME": str(home), **env},
        cwd=REPO,
    )


def seed(home: Path) -> None:
    store = OxigraphStore(home / "store")
    queries = QueryRegistry.load()
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    store.commit(
        Changeset.of(
            [
                Quad(
                    URIRef("urn:m:a"), KGM.title, Literal("alice's memory"), UserGraphs("alice").kg
                ),
                Quad(URIRef("urn:m:b"), KGM.title, Literal("bob's memory"), UserGraphs("bob").kg),
            ]
        )
    )
    store.close()


def test_version_and_help(home: Path) -> None:
    assert kgmem(home, "--version").stdout.strip() == f"kgmem, version {__version__}"
    out = kgmem(home, "--help").stdout
    for command in ("serve", "status", "sparql"):
        assert command in out


def test_the_cli_loads_without_the_web_surfaces() -> None:
    """Every command starts a process: the CLI imports the services, not the server, its
    MCP and GraphQL surfaces or the model client (together ~1.4 s more a command)."""
    heavy = ("kgmem.api.app", "mcp", "strawberry", "starlette", "uvicorn", "dspy", "litellm")
    probe = f"import sys, kgmem.cli; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_term_search_reads_only_the_kept_term_index(home: Path) -> None:
    """``kgmem ontology search`` (#28: 9-10 s a call) loads only the command it runs (not
    the services, the pipeline or the other commands) and, after the first, reads the term
    index kept in ``index/catalogue.sqlite3`` rather than the whole catalogue."""
    assert kgmem(home, "users", "add", "alice").returncode == 0  # a store, bundled catalogue
    kept = home / "index" / "catalogue.sqlite3"
    first = kgmem(home, "ontology", "search", "person")
    assert first.returncode == 0, first.stderr
    assert "person" in first.stdout.lower() and kept.is_file()
    made = kept.stat().st_mtime_ns
    probe = (
        "import sys; from kgmem.cli import main\n"
        "try:\n    main(['ontology', 'search', 'person'])\n"
        "except SystemExit:\n    pass\n"
        "heavy = ('kgmem.api.services', 'kgmem.pipeline', 'kgmem.memory.gate',"
        " 'kgmem.cli.memories')\n"
        "print('LOADED', [m for m in heavy if m in sys.modules])"
    )
    again = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KGMEM_HOME": str(home)},
        cwd=REPO,
    )
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == "LOADED []"
    assert again.stdout.splitlines()[:-1] == first.stdout.splitlines()
    assert kept.stat().st_mtime_ns == made  # read, not made again


def test_ingest_then_draft_finds_no_drift(home: Path, tmp_path: Path) -> None:
    """An ingest from the shell went to the store without its outbox entry, so the next
    command found the user's graph projection behind ("drift found; rebuilt users alice",
    #28). It now writes as the server does: nothing to repair, and the check agrees."""
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            {"chat": "c1", "messages": [{"role": "user", "text": "I am allergic to peanuts"}]}
        )
    )
    draft = tmp_path / "draft.json"
    draft.write_text(
        json.dumps(
            {
                "kind": "semantic",
                "title": "Allergic to peanuts",
                "evidence": [{"source": "chat:c1#0", "quote": "I am allergic to peanuts"}],
            }
        )
    )
    assert kgmem(home, "ingest", str(chat), "--user", "bob").returncode == 0
    assert kgmem(home, "memories", "draft", str(draft), "--user", "bob").returncode == 0
    ingested = kgmem(home, "ingest", str(chat), "--user", "alice")  # new to the projection
    assert ingested.returncode == 0, ingested.stderr
    drafted = kgmem(home, "memories", "draft", str(draft), "--user", "alice")
    assert drafted.returncode == 0 and "active" in drafted.stdout, drafted.stderr
    assert "drift" not in drafted.stderr and "rebuilt" not in drafted.stderr
    check = kgmem(home, "index", "check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_status_on_a_fresh_home_writes_nothing(home: Path) -> None:
    result = kgmem(home, "status")
    assert result.returncode == 0
    assert "not running" in result.stdout and "triples: 0" in result.stdout
    assert not (home / "store").exists()


def test_status_reports_graphs_and_counts(home: Path) -> None:
    seed(home)
    report = json.loads(kgmem(home, "status", "--json").stdout)
    graphs = report["store"]["graphs"]
    assert graphs["urn:kgmem:user:alice:kg"] == 1
    assert graphs["urn:kgmem:catalogue:kgmem"] > 100
    assert report["store"]["triples"] == sum(graphs.values())
    assert report["store"]["size_bytes"] > 0 and report["version"] == __version__
    table = kgmem(home, "status").stdout
    assert "urn:kgmem:user:bob:kg" in table
    # the table says the size in decimal units and in bytes, as /health's size_bytes counts
    # (each open of the store writes logs: two runs need not find the same size)
    [said] = re.findall(r"\(([\d,]+) bytes\)", table)
    size = int(said.replace(",", ""))
    assert size > 0 and f"{size / 1e6:.1f} MB ({said} bytes)" in table


def test_sparql_formats(home: Path) -> None:
    seed(home)
    query = "SELECT ?t WHERE { ?m kgm:title ?t } ORDER BY ?t"
    table = kgmem(home, "sparql", query).stdout
    assert "alice's memory" in table and "(2 rows)" in table
    rows = json.loads(kgmem(home, "sparql", query, "--format", "json").stdout)
    assert rows == [{"t": "alice's memory"}, {"t": "bob's memory"}]
    tsv = kgmem(home, "sparql", "-", "--format", "tsv", stdin=query).stdout.splitlines()
    assert tsv == ["t", "alice's memory", "bob's memory"]
    assert kgmem(home, "sparql", 'ASK { ?m kgm:title "carol\'s memory" }').stdout.strip() == (
        "False"
    )
    assert kgmem(home, "sparql", "ASK { ?m kgm:title ?t }").stdout.strip() == "True"
    triples = kgmem(home, "sparql", "CONSTRUCT { ?m kgm:excerpt ?t } WHERE { ?m kgm:title ?t }")
    assert triples.stdout.count(" .") == 2


def test_sparql_user_scope_hides_other_users(home: Path) -> None:
    seed(home)
    for query in (
        "SELECT ?t WHERE { ?m kgm:title ?t }",
        "SELECT ?t WHERE { GRAPH <urn:kgmem:user:bob:kg> { ?m kgm:title ?t } }",
    ):
        rows = json.loads(
            kgmem(home, "sparql", query, "--user", "alice", "--format", "json").stdout
        )
        assert {r["t"] for r in rows} <= {"alice's memory"}
    # The catalogue stays visible to a user.
    assert kgmem(home, "sparql", "ASK { kgm:Memory a ?t }", "--user", "alice").stdout.strip() == (
        "True"
    )


def test_sparql_refuses_updates_and_limits_results(home: Path) -> None:
    seed(home)
    result = kgmem(home, "sparql", "DELETE WHERE { ?s ?p ?o }")
    assert result.returncode == 2
    assert (
        result.stderr.strip() == "kgmem: error: query refused: an update is not allowed: "
        "this endpoint is read-only and offline"
    )
    limited = kgmem(home, "sparql", "SELECT * WHERE { ?s ?p ?o }", "--limit", "3")
    assert limited.returncode == 2 and "more than 3 rows" in limited.stderr


def test_sparql_while_the_store_is_held(home: Path) -> None:
    seed(home)
    with holding(home / "store"):
        result = kgmem(home, "sparql", "ASK {}")
    assert result.returncode == 2
    assert "held by a running kgmem server" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_sparql_without_a_store(home: Path) -> None:
    result = kgmem(home, "sparql", "ASK {}")
    assert result.returncode == 2 and "no store" in result.stderr
    assert not (home / "store").exists()


def test_bad_settings_give_one_line_errors(home: Path) -> None:
    result = kgmem(home, "status", KGMEM_PROT="1")
    assert result.returncode == 2
    assert result.stderr.strip() == "kgmem: error: unknown setting 'prot' in environment (KGMEM_*)"
    (home / "kgmem.toml").write_text("port = [\n")
    result = kgmem(home, "serve")
    assert result.returncode == 2 and "kgmem.toml" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (home / "store").exists()


def test_serve_refuses_locked_and_corrupt_stores(home: Path) -> None:
    seed(home)
    with holding(home / "store"):
        result = kgmem(home, "serve", "--port", str(free_port()))
    assert result.returncode == 2 and "locked" in result.stderr
    (home / "store" / "CURRENT").write_text("garbage\n")
    result = kgmem(home, "serve", "--port", str(free_port()))
    assert result.returncode == 2 and "cannot be opened" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_serve_answers_health_then_shuts_down_cleanly(home: Path) -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "kgmem.cli", "serve", "--port", str(port)],
        env={**os.environ, "KGMEM_HOME": str(home)},
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        started = time.monotonic()
        body = None
        while time.monotonic() - started < 10:
            try:
                body = httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).json()
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert body is not None and body["status"] == "ok", "no /health within 10 s"
        assert json.loads((home / "server.json").read_text())["pid"] == process.pid
        status = json.loads(kgmem(home, "status", "--json").stdout)
        assert status["server"] == f"http://127.0.0.1:{port}"
        assert status["store"]["graphs"]["urn:kgmem:catalogue:kgmem"] > 100
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=20)
    assert process.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output
    assert not (home / "server.json").exists()
    OxigraphStore(home / "store").close()  # the lock is released


def test_status_says_whether_a_model_is_configured(home: Path) -> None:
    plain = kgmem(home, "status")
    assert "models:  none configured" in plain.stdout
    configured = json.loads(
        kgmem(home, "status", "--json", KGMEM_MODEL_MEMORY="openai/local-model").stdout
    )
    assert configured["models"] == {"memory": "openai/local-model", "primary": None}


def test_mcp_while_the_store_is_held_says_to_use_the_servers(home: Path) -> None:
    seed(home)
    with holding(home / "store"):
        result = kgmem(home, "mcp")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.endswith(
        "held by a running kgmem server; point the agent at its /mcp with an API key "
        "instead, or stop it first"
    ), line


def test_a_failing_model_call_is_one_line_and_debug_shows_its_traceback(
    home: Path, tmp_path: Path
) -> None:
    said = {"role": "user", "text": "I work at Acme.", "timestamp": "2025-03-01T10:00:00Z"}
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps({"chat": "c1", "messages": [said]}))
    assert kgmem(home, "ingest", str(chat), "--user", "me").returncode == 0
    closed = {"KGMEM_MODEL_MEMORY": "openai/m", "KGMEM_MODEL_API_BASE": "http://127.0.0.1:9/v1"}
    plain = kgmem(home, "consolidate", "--user", "me", "--now", **closed)
    assert plain.returncode == 1 and "parked (at extract" in plain.stdout
    [line] = [x for x in plain.stderr.splitlines() if x.strip()]
    assert "consolidation stage failed: extract: ModelCallError" in line and "[openai/m]" in line
    home_two = tmp_path / "two"
    assert kgmem(home_two, "ingest", str(chat), "--user", "me").returncode == 0
    debug = kgmem(home_two, "--debug", "consolidate", "--user", "me", "--now", **closed)
    assert "Traceback" in debug.stderr and "Connection refused" in debug.stderr
