"""How long an edit made in the vault takes to become a memory operation.

    .venv/bin/python benchmarks/vault_edit.py [--entities 200] [--edits 40] [--dir DIR]

Full services on an on-disk store (the write gate, the change feed, the page follower and the
vault, as the server runs them) get ``--entities`` memories, one about each entity, through
the real gate; every entity's page is written to the vault. Then the watcher runs (watchdog,
real file-system events) and, one at a time, ``--edits`` page files are edited the way a
person does in an editor: a line added under History. Timed from the write of the file to
the sync's report that the new memory is stored and the page file rewritten to show it:

- watched: through the watcher (its ``quiet`` delay included: the time an editor's burst of
  saves is given to end);
- direct (the floor, same run): the same kind of edit read by calling the sync itself, no
  watcher: what reading, deciding and rewriting cost on their own.

Prints a table (p50, p95, max milliseconds) and last ``vault_edit_to_op_p95_ms=<watched p95>``
(the goal: <= 2000 ms).
"""

from __future__ import annotations

import argparse
import queue
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from kgmem.api.services import Services, build_services
from kgmem.config import load_settings
from kgmem.memory import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.pages import SyncReport, SyncStatus, VaultWatcher

UID = "alice"
NAMES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell", "Cyberdyne"]


def entity_name(n: int) -> str:
    return f"{NAMES[n % len(NAMES)]} {n}"


def seed(services: Services, entities: int) -> None:
    """One memory about each entity, through the gate (as an agent writes them)."""
    for n in range(entities):
        name = entity_name(n)
        said = f"I met {name} at the fair."
        msg = services.sources.ingest_message(
            UID, MessageIn(chat="bench", turn=n, role="user", text=said)
        )
        draft = {
            "kind": "episodic",
            "title": f"Met {name} at the fair",
            "occurred_at": "2026-10-01T10:00:00Z",
            "entities": [{"name": name, "types": ["schema:Organization"]}],
            "evidence": [{"source": str(msg.iri), "quote": said.rstrip(".")}],
        }
        [item] = services.gate.draft(UID, [draft]).items
        assert item.outcome is Outcome.ACTIVE, item


def edit(path: Path, k: int) -> str:
    """Add a dated line under History, as a person types it; the line."""
    text = path.read_text("utf-8")
    line = f"2026-11-{k % 28 + 1:02d}: Signed contract number {k}"
    head, sep, rest = text.partition("## History\n\n")
    assert sep, path
    path.write_text(f"{head}{sep}- {line}\n{rest}", "utf-8")
    return line.split(": ", 1)[1]


def percentiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95, ordered[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=200)
    parser.add_argument("--edits", type=int, default=40)
    parser.add_argument("--dir", type=Path, default=None, help="work here (default: a temp dir)")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="kgmem-vault-edit-"))
    shutil.rmtree(work / "home", ignore_errors=True)
    (work / "home").mkdir(parents=True)
    settings = load_settings(env={"KGMEM_HOME": str(work / "home")}, port=1)
    services = build_services(settings)
    try:
        start = time.perf_counter()
        seed(services, args.entities)
        assert services.settle() and services.vault is not None and services.sync is not None
        pages = sorted(services.vault.memory(UID).glob("entities/*.md"))
        pages = [p for p in pages if p.name != "alice.md"]
        print(
            f"N={len(pages)} pages from {args.entities} memories in "
            f"{time.perf_counter() - start:.1f} s ({work})"
        )
        direct: list[float] = []
        for k in range(args.edits):
            path = pages[(2 * k + 1) % len(pages)]
            began = time.perf_counter()
            words = edit(path, k)
            report = services.sync.read(UID, path)
            direct.append((time.perf_counter() - began) * 1000)
            assert report.status is SyncStatus.APPLIED and len(report.created) == 1, report
            assert words in path.read_text("utf-8")
        reports: queue.Queue[SyncReport] = queue.Queue()
        watcher = VaultWatcher(services.sync, services.vault, lambda: [UID], done=reports.put)
        watcher.start()
        watched: list[float] = []
        try:
            for k in range(args.edits):
                path = pages[(2 * k) % len(pages)]
                began = time.perf_counter()
                words = edit(path, 1000 + k)
                while True:
                    got = reports.get(timeout=30)
                    if got.status is SyncStatus.APPLIED and got.path.endswith(path.name):
                        break
                watched.append((time.perf_counter() - began) * 1000)
                assert len(got.created) == 1 and words in path.read_text("utf-8"), got
        finally:
            watcher.stop()
    finally:
        services.close()
    print(f"{'edit read':<28} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, values in (("direct (sync, no watcher)", direct), ("watched (file event)", watched)):
        p50, p95, top = percentiles(values)
        print(f"{name:<28} {len(values):>4} {p50:>8.0f} {p95:>8.0f} {top:>8.0f}")
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"vault_edit_to_op_p95_ms={percentiles(watched)[1]:.0f}")


if __name__ == "__main__":
    main()
