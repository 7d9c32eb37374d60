"""The progress of long commands, run as real processes: drawn on stderr when it is a terminal
(a pseudo-terminal here), nothing extra off one; stdout the same either way."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.ontology.catalogue_fixtures import standard_ontologies, write_manifest, write_mirror
from tests.test_cli_ingest import write_json, write_jsonl
from tests.test_cli_memories import ACME, LISBON, draft, ingested

pytestmark = pytest.mark.integration

# what rich reads to decide a stream is a terminal whatever it is, or how wide
RICH_ENV = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "NO_COLOR", "COLUMNS", "TERM")
TIMEOUT = 120


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str  # control sequences removed; each redrawn line on a line of its own


def run(home: Path, *args: str, terminal: bool) -> Ran:
    """``kgmem ARGS`` with stderr a pseudo-terminal (``terminal``) or a pipe; stdout a file."""
    env = {k: v for k, v in os.environ.items() if k not in RICH_ENV}
    env |= {"KGMEM_HOME": str(home), "TERM": "xterm-256color", "COLUMNS": "120"}
    command = [sys.executable, "-m", "kgmem.cli", *args]
    out = home.parent / f"{home.name}.stdout"
    with out.open("w+", encoding="utf-8") as stdout:
        if not terminal:
            done = subprocess.run(
                command, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
                stdin=subprocess.DEVNULL, timeout=TIMEOUT,
            )  # fmt: skip
            code, raw = done.returncode, done.stderr
        else:
            primary, secondary = pty.openpty()
            process = subprocess.Popen(
                command, stdout=stdout, stderr=secondary, env=env, cwd=REPO,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            os.close(secondary)
            raw = _drain(primary).decode("utf-8", "replace")
            code = process.wait(timeout=TIMEOUT)
        stdout.seek(0)
        return Ran(code, stdout.read(), _plain(raw))


def _drain(fd: int) -> bytes:
    """All a pseudo-terminal's program writes, until it closes its end."""
    chunks, deadline = [], time.monotonic() + TIMEOUT
    try:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                chunk = os.read(fd, 65536)  # OSError (EIO) once the other end is closed
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks)


def _plain(text: str) -> str:
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return re.sub(r"\r\n?", "\n", text)


def both(
    tmp_path: Path, *args: str, setup: Callable[[Path], None] | None = None
) -> tuple[Ran, Ran]:
    """``kgmem ARGS`` on a terminal and off one, each on a home of its own made alike."""
    ran = []
    for terminal in (True, False):
        home = tmp_path / ("tty" if terminal else "pipe")
        home.mkdir()
        if setup is not None:
            setup(home)
        ran.append(run(home, *args, terminal=terminal))
    on, off = ran
    assert on.code == off.code == 0, (on, off)
    assert off.stderr == "", off.stderr  # nothing extra off a terminal
    return on, off


def timings(text: str) -> str:
    """``text`` with what a second run cannot repeat (seconds, pass ids) made alike."""
    text = re.sub(r"\d+\.\d+( s|$)", r"T\1", text, flags=re.MULTILINE)
    return re.sub(r"\b[0-9a-f]{8}\b", "PASS", text)


def test_install_shows_each_ontology_on_a_terminal(tmp_path: Path) -> None:
    ontologies = standard_ontologies()
    mirror = write_mirror(tmp_path / "mirror", ontologies)
    manifest = write_manifest(tmp_path / "catalogue.toml", ontologies)
    args = ("ontology", "install", "--mirror", str(mirror), "--manifest", str(manifest))
    on, off = both(tmp_path, *args, "--no-download")
    # 6 files fetched and 4 ontologies loaded; the last drawn state stays in the stream
    assert re.search(r"install .*10/10 loading delta", on.stderr), on.stderr
    assert timings(on.stdout) == timings(off.stdout)
    assert off.stdout.splitlines()[0].split()[:3] == ["ontology", "status", "origin"]
    assert "loaded 4, unchanged 0 in " in off.stdout


def test_ingest_of_a_folder_counts_its_files(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name in ("a.md", "b.txt", "c.markdown"):
        (notes / name).write_text(f"note {name}\n", encoding="utf-8")
    on, off = both(tmp_path, "ingest", str(notes), "--user", "alice")
    assert re.search(r"read .*3/3 files", on.stderr), on.stderr
    assert re.search(r"store .* writing", on.stderr), on.stderr
    assert on.stdout == off.stdout == "ingested notes for alice\n  notes: 3 created, 0 unchanged\n"


def test_ingest_of_a_long_log_counts_its_lines(tmp_path: Path) -> None:
    log = write_jsonl(
        tmp_path / "log.jsonl",
        *({"chat": "c1", "turn": i, "role": "user", "text": f"message {i}"} for i in range(300)),
    )
    on, off = both(tmp_path, "ingest", str(log), "--user", "alice")
    assert "300/300 lines" in on.stderr, on.stderr
    expected = "ingested log.jsonl for alice\n  user messages: 300 created, 0 unchanged\n"
    assert on.stdout == off.stdout == expected


def two_users(home: Path) -> None:
    for uid in ("alice", "bob"):
        chat = write_json(
            home.parent / f"{home.name}-{uid}.json",
            {"chat": "c1", "messages": [{"role": "user", "text": f"I am {uid}."}]},
        )
        result = run(home, "ingest", str(chat), "--user", uid, terminal=False)
        assert result.code == 0, result.stderr


def test_index_rebuild_shows_users_and_tables_then_sums_up(tmp_path: Path) -> None:
    on, off = both(tmp_path, "index", "rebuild", setup=two_users)
    assert re.search(r"users .*2/2 bob", on.stderr), on.stderr
    assert re.search(r"tables .*8/9 write SHARES_MEMORY", on.stderr), on.stderr
    last = on.stderr.strip().splitlines()[-1]
    assert re.fullmatch(r"rebuilt the index of 2 users in \d+\.\d s", last), on.stderr
    assert timings(on.stdout) == timings(off.stdout)
    assert [line.split(":")[0] for line in off.stdout.splitlines()] == ["alice", "bob"]


def test_users_reset_shows_its_steps(tmp_path: Path) -> None:
    on, off = both(
        tmp_path, "users", "reset", "alice", "--yes", setup=lambda home: ingested(home, tmp_path)
    )
    assert re.search(r"reset alice .*3/4 clearing the vault's Memory/ folder", on.stderr)
    assert on.stdout == off.stdout
    assert off.stdout.splitlines()[-1].startswith("user alice: reset (")


def queued(home: Path, tmp_path: Path) -> None:
    ingested(home, tmp_path)
    draft(home, tmp_path, ACME, LISBON, flags=("--queue",))


def test_consolidate_shows_the_stage_under_way(tmp_path: Path) -> None:
    on, off = both(
        tmp_path, "consolidate", "--user", "alice", setup=lambda home: queued(home, tmp_path)
    )
    assert re.search(r"consolidate .*8/9 pass [0-9a-f]{8}: author", on.stderr), on.stderr
    assert timings(on.stdout) == timings(off.stdout)
    assert off.stdout.splitlines()[-1].endswith(": committed")
