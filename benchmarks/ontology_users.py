"""What each served user costs in ontology state, with the official catalogue installed.

    .venv/bin/python benchmarks/ontology_users.py [--mirror ../shared/ontologies] [--users 20]
                                                  [--disk DIR]

Installs the catalogue (the official releases from the mirror, as ``kgmem ontology install``
does) into an on-disk store (``--disk`` keeps it for the next run), loads the shared
catalogue view, then builds each user's effective ontology as the server does
(``OntologyService.effective``: the user's vocabulary is a layer over the view). In the same
run, the baseline: the same users given what every user had before, a full copy of the
catalogue's vocabulary (the copy ``Vocabulary.copy`` used to make), with the same effective
ontology built over it. Prints resident memory and seconds per user for both, and last
``ontology_user_mb=`` (layered, per user).
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from kgmem.ontology.bundled import bundled_files, default_ontologies_dir, ensure_bundled
from kgmem.ontology.catalogue import Catalogue
from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.manifest import load_manifest
from kgmem.ontology.service import STARTER, OntologyService
from kgmem.ontology.vocabulary import Vocabulary, load_vocabulary
from kgmem.ontology.vocabulary.terms import copy_property
from kgmem.store import OxigraphStore, QueryRegistry, UserGraphs

ROOT = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def full_copy(vocab: Vocabulary) -> Vocabulary:
    """Every container of ``vocab`` copied: what each user held before layers."""
    clone = Vocabulary()
    clone.parents = defaultdict(set, {k: set(v) for k, v in vocab.parents.items()})
    clone.classes = set(vocab.classes)
    clone.properties = {k: copy_property(v) for k, v in vocab.properties.items()}
    clone.origin = dict(vocab.origin)
    clone.labels = defaultdict(list, {k: list(v) for k, v in vocab.labels.items()})
    clone.alt_labels = defaultdict(list, {k: list(v) for k, v in vocab.alt_labels.items()})
    clone.disjoint = defaultdict(dict, {k: dict(v) for k, v in vocab.disjoint.items()})
    return clone


def measure(
    users: int, build: Callable[[str], EffectiveOntology]
) -> tuple[float, float, list[EffectiveOntology]]:
    """(MB per user, seconds per user) of ``build`` for ``users`` users, all kept."""
    gc.collect()
    before = rss_mb()
    held = []
    started = time.perf_counter()
    for n in range(users):
        held.append(build(f"u{n:03d}"))
    seconds = (time.perf_counter() - started) / users
    gc.collect()
    return (rss_mb() - before) / users, seconds, held


def run(mirror: Path, directory: Path, users: int) -> None:
    queries = QueryRegistry.load()
    store = OxigraphStore(directory / "store")
    try:
        ensure_bundled(store, queries, bundled_files(default_ontologies_dir().parent / "shapes"))
        started = time.perf_counter()
        Catalogue(store, queries, load_manifest()).install(mirror=mirror, download=False)
        install_s = time.perf_counter() - started
        service = OntologyService(store, queries)
        started = time.perf_counter()
        view = service.vocabulary()
        view_s = time.perf_counter() - started
        classes = len(view.classes)

        def copied(uid: str) -> EffectiveOntology:
            graphs = UserGraphs(uid)
            vocab = load_vocabulary(store, queries, (graphs.schema,), into=full_copy(view))
            return EffectiveOntology.build(
                uid, vocab, vocab.declared_in((STARTER, graphs.schema)), graphs.schema
            )

        layer_mb, layer_s, kept = measure(users, service.effective)
        copy_mb, copy_s, kept_copies = measure(users, copied)
        assert all(a.classes == b.classes for a, b in zip(kept, kept_copies, strict=True))
    finally:
        store.close()
    print(f"catalogue: {classes} classes (installed in {install_s:.1f} s, view {view_s:.1f} s)")
    print(f"{'per served user':<44} {'MB':>7} {'seconds':>8}")
    print(f"{'layer over the shared view (now)':<44} {layer_mb:>7.2f} {layer_s:>8.3f}")
    print(f"{'full copy of the vocabulary (before)':<44} {copy_mb:>7.2f} {copy_s:>8.3f}")
    print(f"ontology_user_mb={layer_mb:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "ontologies")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--disk", type=Path, help="Directory for the store (default: temp).")
    args = parser.parse_args()
    if args.disk is not None:
        args.disk.mkdir(parents=True, exist_ok=True)
        run(args.mirror, args.disk, args.users)
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(args.mirror, Path(tmp), args.users)


if __name__ == "__main__":
    main()
