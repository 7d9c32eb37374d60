"""The shell commands a newcomer types first, timed as they type them (#28).

    .venv/bin/python benchmarks/cli.py [--runs 5] [--mirror ../shared/ontologies]

On a fresh ``KGMEM_HOME`` it installs the catalogue (the official releases from the mirror;
only the bundled ontologies when there is none), adds a user, ingests a chat, and then runs
each command ``--runs`` times as a separate ``kgmem`` process, the way a shell runs it (with
bytecode caching on, as a user's Python has it: the first, untimed, run writes the caches):

- ``kgmem --version``: the floor, what any command costs before it does anything;
- ``kgmem ontology search "chemical element"``, and the same with the kept term index
  removed before each run (what every search cost before it was kept: the whole catalogue
  read from the store and indexed);
- ``kgmem memories draft`` of one new draft (a different quote each run).

Prints a table (median and slowest of the runs, the goal) and ends with
``cli_search_p50_s=`` and ``cli_draft_p50_s=``; the catalogue install's seconds are printed
too (the README quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KGMEM = [sys.executable, "-m", "kgmem.cli"]
CHAT = [
    "I am allergic to peanuts",
    "My sister Dana lives in Lisbon",
    "I work at Northwind as a data engineer",
    "I run every Tuesday morning before work",
    "My daughter is called Ines",
    "We adopted a cat named Pixel last spring",
    "I prefer window seats on long flights",
    "My partner Sam teaches chemistry",
    "I drink my coffee black",
    "I grew up in Porto",
    "My bike is a green Brompton",
    "I speak Portuguese and German",
]
GOALS = {"search": 1.0, "draft": 2.0}


def _run(args: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        KGMEM + args, env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"kgmem {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "ontologies")
    args = parser.parse_args()
    runs = max(1, min(args.runs, len(CHAT) - 1))
    work = Path(tempfile.mkdtemp(prefix="kgmem-cli-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGMEM_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python caches bytecode
    env |= {"KGMEM_HOME": str(work / "home"), "HF_HUB_OFFLINE": "1"}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    try:
        _run(["--help"], env, work)  # writes the bytecode caches, as a first use would
        install = 0.0
        if args.mirror.is_dir():
            install = _run(["ontology", "install", "--mirror", str(args.mirror)], env, work)
        _run(["users", "add", "bench"], env, work)
        messages = [{"role": "user", "text": text} for text in CHAT]
        (work / "chat.json").write_text(json.dumps({"chat": "c1", "messages": messages}))
        _run(["ingest", "chat.json", "--user", "bench"], env, work)

        rows: dict[str, list[float]] = {"version": [], "search": [], "search-cold": [], "draft": []}
        kept = work / "home" / "index" / "catalogue.sqlite3"
        for turn in range(runs):
            rows["version"].append(_run(["--version"], env, work))
            rows["search"].append(_run(["ontology", "search", "chemical element"], env, work))
            draft = {
                "kind": "semantic",
                "title": CHAT[turn + 1],
                "confidence": 0.9,
                "evidence": [{"source": f"chat:c1#{turn + 1}", "quote": CHAT[turn + 1]}],
            }
            (work / "draft.json").write_text(json.dumps(draft))
            rows["draft"].append(
                _run(["memories", "draft", "draft.json", "--user", "bench"], env, work)
            )
        saved = kept.read_bytes()
        for _ in range(runs):
            kept.unlink()
            rows["search-cold"].append(_run(["ontology", "search", "chemical element"], env, work))
        kept.write_bytes(saved)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    catalogue = "the official releases" if args.mirror.is_dir() else "the bundled ontologies only"
    print(f"kgmem from the shell, {runs} runs each, catalogue: {catalogue}")
    if install:
        print(f"catalogue install (with the kept term index): {install:.1f} s")
    print(f"{'command':<40} {'p50 s':>7} {'max s':>7} {'goal s':>7}")
    names = {
        "version": "kgmem --version (floor)",
        "search": 'ontology search "chemical element"',
        "search-cold": "  the same, kept index removed (before)",
        "draft": "memories draft (one new draft)",
    }
    for key, label in names.items():
        goal = GOALS.get(key)
        print(
            f"{label:<40} {statistics.median(rows[key]):>7.2f} {max(rows[key]):>7.2f} "
            f"{goal if goal else '':>7}"
        )
    print(f"cli_search_p50_s={statistics.median(rows['search']):.2f}")
    print(f"cli_draft_p50_s={statistics.median(rows['draft']):.2f}")


if __name__ == "__main__":
    main()
