"""README.md as a script: every shell block it shows runs, in order, on a fresh machine's home.

Each ```` ```sh ```` block is preceded by a comment saying how it runs:

- ``<!-- run: offline -->``: with no server (the commands open the store themselves);
- ``<!-- run: server -->``: while ``kgmem serve`` runs (what ``make serve`` starts), its
  address as the README writes it (``127.0.0.1:8765``) turned into the test server's;
- ``<!-- run: never, <why> -->``: not run, for the reason given (``make``, a model server,
  an MCP session on stdin...).

A block without such a comment fails the test: a new block is run or says why it is not.
Blocks run in the README's order in ``bash -euo pipefail``, in a directory holding the
repository's ``.venv`` and ``../shared`` as a clone has them, with ``HOME`` a new empty
directory (so ``~/.local/share/kgmem``, the default home, is fresh) and ``curl`` failing on
an HTTP error (``--fail-with-body``: a 409 in the tour is a failure). A command whose
comment states its time (``# ~11 s``) is timed and fails when it takes more than twice or
less than half of that.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import Served, kgmem_serve

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
SHARED = REPO.parent / "shared"
_BLOCK = re.compile(r"(?:<!-- run: (?P<how>[^>]*?) -->\n)?```sh\n(?P<body>.*?)```", re.S)
_TIMED = re.compile(r"#.*?~(?P<seconds>\d+(?:\.\d+)?) s\b")
_PRELUDE = r"""
curl() { command curl --fail-with-body --show-error --max-time 120 "$@"; }
__timed() { __started=$EPOCHREALTIME; }
__took() { echo "$1 $__started $EPOCHREALTIME" >> "$TOUR_TIMINGS"; }
"""


@dataclass(frozen=True)
class Block:
    line: int
    how: str  # offline | server | never
    body: str


def blocks(text: str) -> list[Block]:
    """Every shell block of ``text`` with how it runs."""
    found = []
    for match in _BLOCK.finditer(text):
        line = text.count("\n", 0, match.start("body"))
        how = (match.group("how") or "").strip()
        if how not in ("offline", "server") and not how.startswith("never,"):
            raise AssertionError(
                f"README.md:{line}: a ```sh block needs <!-- run: offline -->, "
                f"<!-- run: server --> or <!-- run: never, <why> --> before it (found {how!r})"
            )
        found.append(Block(line, how.split(",")[0], match.group("body")))
    return found


def timed(block: Block) -> tuple[str, dict[int, float]]:
    """The block's script with each timed command wrapped, and the times it documents."""
    lines, documented = [], {}
    for number, line in enumerate(block.body.splitlines(), start=block.line + 1):
        found = _TIMED.search(line)
        command = line.split("#", 1)[0].rstrip()
        if found is None or not command or command.endswith(("\\", "|", "&&")):
            lines.append(line)
            continue
        documented[number] = float(found.group("seconds"))
        lines += ["__timed", line, f"__took {number}"]
    return "\n".join(lines) + "\n", documented


@pytest.fixture
def machine(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A clone's directory (``.venv`` and ``../shared`` beside it) and a fresh user's env."""
    work = tmp_path / "clone"
    work.mkdir()
    (work / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "shared").symlink_to(SHARED)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGMEM_", "XDG_"))}
    env |= {"HOME": str(home), "TOUR_TIMINGS": str(tmp_path / "timings")}
    yield work, env


def test_every_shell_block_says_how_it_runs() -> None:
    found = blocks(README.read_text(encoding="utf-8"))
    assert README.read_text(encoding="utf-8").count("```sh") == len(found)
    assert sum(b.how != "never" for b in found) >= 10


@pytest.mark.shared
def test_the_readme_runs(machine: tuple[Path, dict[str, str]]) -> None:
    work, env = machine
    server: Served | None = None
    documented: dict[int, float] = {}
    with ExitStack() as running:
        for block in blocks(README.read_text(encoding="utf-8")):
            if block.how == "never":
                continue
            if block.how == "server" and server is None:
                serving = kgmem_serve(env, work.parent / "server.log", cwd=work, within=120)
                server = running.enter_context(serving)
            if block.how == "offline" and server is not None:
                running.close()  # Ctrl-C, as the README says
                server = None
            script, times = timed(block)
            documented |= times
            if server is not None:
                script = script.replace("127.0.0.1:8765", f"127.0.0.1:{server.port}")
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", _PRELUDE + script],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, (
                f"README.md block at line {block.line} failed ({done.returncode}):\n"
                f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
            )
    measured = {}
    timings = Path(env["TOUR_TIMINGS"])
    for row in timings.read_text().splitlines() if timings.exists() else ():
        number, started, ended = row.split()
        measured[int(number)] = float(ended) - float(started)
    assert set(measured) == set(documented)
    wrong = {
        n: (documented[n], round(measured[n], 1))
        for n in documented
        if not documented[n] / 2 <= measured[n] <= documented[n] * 2
    }
    assert not wrong, f"README.md timings off by more than 2x (line: documented, measured): {wrong}"
