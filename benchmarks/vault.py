"""The vault's start-up reconciliation at scale: N stored pages, reconciled against a real
folder on disk.

    .venv/bin/python benchmarks/vault.py [--pages 10000] [--damaged 0.01] [--dir DIR]

An on-disk Oxigraph store gets N entities with a page each, stored by the same code the
page follower and the author stage use (``revision_quads``: page node, path, revision with
its exact Markdown and content hash), rendered by the deterministic renderer from page
inputs with a few facts and memories each; 1 page in 50 has a second revision. Then timed,
each on the same vault folder:

- cold: an empty vault, every file written;
- intact: every file already right, nothing written;
- damaged: ``--damaged`` of the files hurt the ways people and tools hurt them, in equal
  parts: deleted, moved and renamed into another folder, replaced by an unedited copy of
  the older revision (pages with two), copied next to themselves (a stale duplicate), and
  edited (which must be left alone); the report's counts are checked against what was done.

Prints a table (seconds, files per second, what the report says) and last
``vault_reconcile_10k_s=<the damaged run's seconds>`` (the goal: <= 10 s at 10,000 pages).
How long an edit takes to become a memory operation: ``benchmarks/vault_edit.py``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from rdflib import Literal, URIRef

from kgmem.memory.model import MemoryKind
from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.pages import (
    FactLine,
    MemoryLine,
    PageDraft,
    PageInput,
    Vault,
    VaultReport,
    render_page,
    revision_quads,
    stored_page,
)
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM, RDF

REPO = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
UID = "alice"
WORDS = [
    "amber",
    "birch",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "harbor",
    "iris",
    "juniper",
    "kestrel",
    "lumen",
]


def entity(n: int) -> URIRef:
    return URIRef(f"https://w3id.org/kgmem/user/{UID}/entity/{n:032x}")


def page_input(n: int, rng: random.Random, version: int) -> PageInput:
    name = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {n}"
    facts = tuple(
        FactLine(f"knows {k}", f"{rng.choice(WORDS)} {version}", (f"m:{n:06x}{k:02x}",))
        for k in range(rng.randint(1, 6))
    )
    memories = tuple(
        MemoryLine(f"m:{n:06x}{k + 50:02x}", MemoryKind.EPISODIC, f"Met at the {w}", "", (), NOW)
        for k, w in enumerate(rng.sample(WORDS, rng.randint(0, 4)))
    )
    return PageInput(entity(n), name, types=("person",), facts=facts, memories=memories)


def build(store: OxigraphStore, queries: QueryRegistry, pages: int) -> None:
    kg = UserGraphs(UID).kg
    rng = random.Random(7)
    reserved: dict[str, URIRef] = {}
    chunk: list[Quad] = []
    for n in range(pages):
        page = page_input(n, rng, 1)
        chunk += [
            Quad(page.entity, RDF.type, KGM.Entity, kg),
            Quad(page.entity, KGM.name, Literal(page.name), kg),
        ]
        draft = PageDraft(page, render_page(page, NOW))
        _, add, _ = revision_quads(store, queries, UID, None, draft, NOW, reserved)
        chunk += add
        if len(chunk) > 20_000:
            store.commit(Changeset.of(chunk))
            chunk = []
    store.commit(Changeset.of(chunk))
    second = []  # 1 page in 50 has a second revision
    for n in range(0, pages, 50):
        page = page_input(n, random.Random(n), 2)
        stored = stored_page(store, queries, kg, page.entity)
        draft = PageDraft(page, render_page(page, NOW))
        _, add, remove = revision_quads(store, queries, UID, stored, draft, NOW, reserved)
        second.append(Changeset.of(add, remove))
    for change in second:
        store.commit(change)


def damage(vault: Vault, store: OxigraphStore, share: float) -> dict[str, int]:
    """Hurt ``share`` of the files, in five equal parts; how many of each."""
    files = vault.pages(UID)
    rng = random.Random(11)
    twice = [p for p in files if p.revision == 2]
    once = [p for p in files if p.revision == 1]
    per = max(1, int(len(files) * share) // 5)
    memory = vault.memory(UID)
    done = {"deleted": 0, "moved": 0, "stale": 0, "duplicated": 0, "edited": 0}
    picked = rng.sample(once, 4 * per)
    for page in picked[:per]:
        (memory / page.path).unlink()
        done["deleted"] += 1
    (memory / "Moved").mkdir(exist_ok=True)
    for page in picked[per : 2 * per]:
        (memory / page.path).rename(memory / "Moved" / f"renamed {page.id[:6]}.md")
        done["moved"] += 1
    for page in picked[2 * per : 3 * per]:
        (memory / f"{page.path[:-3]} copy.md").write_text(page.markdown, "utf-8")
        done["duplicated"] += 1
    for page in picked[3 * per :]:
        (memory / page.path).write_text(page.markdown + "\n- Plays the cello\n", "utf-8")
        done["edited"] += 1
    kg = UserGraphs(UID).kg
    for page in rng.sample(twice, min(per, len(twice))):
        [old] = [str(q.object) for q in store.quads(kg, URIRef(f"{page.page}#r1"), KGM.markdown)]
        (memory / page.path).write_text(old, "utf-8")
        done["stale"] += 1
    return done


def timed(vault: Vault) -> tuple[float, VaultReport]:
    start = time.perf_counter()
    report = vault.reconcile(UID)
    return time.perf_counter() - start, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--damaged", type=float, default=0.01)
    parser.add_argument("--dir", type=Path, default=None, help="work here (default: a temp dir)")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="kgmem-vault-bench-"))
    shutil.rmtree(work / "store", ignore_errors=True)
    shutil.rmtree(work / "vault", ignore_errors=True)
    store = OxigraphStore(work / "store")
    queries = QueryRegistry.load()
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    start = time.perf_counter()
    build(store, queries, args.pages)
    print(f"N={args.pages} pages stored in {time.perf_counter() - start:.1f} s ({work})")
    vault = Vault(store, queries, lambda uid: work / "vault" / uid)
    rows = []
    cold_s, cold = timed(vault)
    assert len(cold.written) == args.pages, cold.summary()
    rows.append(("cold (empty vault)", cold_s, cold))
    intact_s, intact = timed(vault)
    assert intact.intact == args.pages and intact.changed == 0, intact.summary()
    rows.append(("intact", intact_s, intact))
    hurt = damage(vault, store, args.damaged)
    damaged_s, report = timed(vault)
    rows.append((f"damaged ({sum(hurt.values())} files)", damaged_s, report))
    found = {
        "deleted": len(report.written),
        "moved": len(report.moved),
        "stale": len(report.replaced),
        "duplicated": len(report.removed),
        "edited": len(report.edited),
    }
    print(f"{'run':<24} {'seconds':>8} {'files/s':>9}  report")
    for name, seconds, rep in rows:
        print(f"{name:<24} {seconds:>8.2f} {rep.pages / seconds:>9.0f}  {rep.summary()}")
    print(f"damage done:  {hurt}")
    print(f"damage found: {found}")
    assert found == hurt, "the report does not match the damage"
    store.close()
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)
    print(f"vault_reconcile_10k_s={damaged_s:.2f}")


if __name__ == "__main__":
    main()
