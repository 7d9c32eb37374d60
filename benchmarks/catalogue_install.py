"""Full catalogue install from a local mirror into a fresh on-disk store, then the re-install.

    .venv/bin/python benchmarks/catalogue_install.py --mirror ../shared/ontologies [--disk DIR]

Prints a table of seconds and triples per ontology, the re-install time, then
`catalogue_install_s=<total seconds of the first install>` as the last line.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from kgmem.ontology.bundled import bundled_files, default_ontologies_dir, ensure_bundled
from kgmem.ontology.catalogue import Catalogue
from kgmem.ontology.manifest import load_manifest
from kgmem.ontology.outcomes import InstallReport
from kgmem.store import OxigraphStore, QueryRegistry


def table(report: InstallReport) -> None:
    print(f"{'ontology':<12} {'status':<10} {'files':>5} {'triples':>9} {'seconds':>8}")
    for outcome in report.outcomes:
        print(
            f"{outcome.ontology_id:<12} {outcome.status.value:<10} {outcome.files:>5} "
            f"{outcome.triples:>9} {outcome.seconds:>8.2f}"
        )


def run(mirror: Path, directory: Path) -> None:
    queries = QueryRegistry.load()
    manifest = load_manifest()
    store = OxigraphStore(directory / "store")
    try:
        started = time.perf_counter()
        ensure_bundled(store, queries, bundled_files(default_ontologies_dir().parent / "shapes"))
        bundled_s = time.perf_counter() - started
        catalogue = Catalogue(store, queries, manifest)
        first = catalogue.install(mirror=mirror, download=False)
        total = time.perf_counter() - started
        table(first)
        again = time.perf_counter()
        second = catalogue.install(mirror=mirror, download=False)
        reinstall_s = time.perf_counter() - again
        listing = catalogue.list()
    finally:
        store.close()
    print()
    print(f"bundled start-up load: {bundled_s:.2f} s")
    print(f"install (bundled + catalogue): {total:.2f} s; catalogue after it:")
    for info in listing:
        print(
            f"  {info.ontology_id:<12} {info.origin.value:<8} triples={info.triples:<7} "
            f"classes={info.classes:<6} properties={info.properties}"
        )
    print(
        f"re-install: {reinstall_s:.2f} s, unchanged: {len(second.unchanged)}, "
        f"loaded: {len(second.loaded)}"
    )
    print(f"catalogue_install_s={total:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, required=True)
    parser.add_argument("--disk", type=Path, help="Directory for the store (default: a temp dir).")
    args = parser.parse_args()
    if args.disk is not None:
        args.disk.mkdir(parents=True, exist_ok=True)
        run(args.mirror, args.disk)
        return
    with tempfile.TemporaryDirectory() as tmp:
        run(args.mirror, Path(tmp))


if __name__ == "__main__":
    main()
