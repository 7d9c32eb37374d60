"""``kgmem ontology``: install, add, remove and list catalogue ontologies.

The group is exported so other modules can attach subcommands (``ontology.add_command``).
Every command opens the store directly; with a server running, they stop with one line.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from kgmem.cli.common import local_store
from kgmem.cli.progress import Display, Lane, shown
from kgmem.config import Settings, load_settings
from kgmem.ontology.bundled import bundled_files, check_bundled, ensure_bundled
from kgmem.ontology.catalogue import Catalogue
from kgmem.ontology.manifest import load_manifest
from kgmem.ontology.outcomes import (
    CatalogueInfo,
    InstallProgress,
    InstallReport,
    ProgressCallback,
)
from kgmem.ontology.service import OntologyService
from kgmem.store import OxigraphStore, QueryRegistry, RdfFormat

__all__ = ["ontology"]

_FORMATS = [f.value for f in (RdfFormat.TURTLE, RdfFormat.NTRIPLES, RdfFormat.RDFXML, RdfFormat.N3)]


@click.group()
def ontology() -> None:
    """The ontology catalogue: install official releases, add your own files, list them."""


def _catalogue(
    store: OxigraphStore, settings: Settings, manifest_path: Path | None = None
) -> Catalogue:
    """The catalogue on ``store``, with the bundled ontologies and shapes brought up to date
    first (what a server start-up would do), so a fresh store is complete."""
    queries = QueryRegistry.load()
    files = bundled_files(settings.shapes_dir, local_shapes=settings.local_shapes_dir)
    check_bundled(files)
    ensure_bundled(store, queries, files)
    return Catalogue(store, queries, load_manifest(manifest_path))


def _told(lane: Lane | None) -> ProgressCallback | None:
    """The install's events on ``lane``: ``3/79 fetching kbpedia`` (files fetched and
    ontologies loaded of all there are, and the ontology under way)."""
    if lane is None:
        return None

    def tell(event: InstallProgress) -> None:
        under_way = "fetching" if event.step.startswith("fetch") else "loading"
        lane(f"{under_way} {event.ontology_id}", event.done, event.total)

    return tell


@ontology.command()
@click.option(
    "--mirror",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Local mirror directory (paths in the manifest are relative to it).",
)
@click.option("--only", multiple=True, metavar="ID", help="Install only this id (repeatable).")
@click.option("--no-download", is_flag=True, help="Never use the network.")
@click.option(
    "--manifest",
    "manifest_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Catalogue manifest (default: kgmem's ontologies/catalogue.toml).",
)
def install(
    mirror: Path | None, only: tuple[str, ...], no_download: bool, manifest_path: Path | None
) -> None:
    """Install the manifest's ontologies (checksummed), from a mirror or their URLs."""
    settings = load_settings()
    with local_store(settings, "install ontologies", create=True) as store:
        catalogue = _catalogue(store, settings, manifest_path)
        with shown() as display:
            report = catalogue.install(
                mirror=mirror,
                only=only or None,
                progress=_told(display.lane("install")),
                download=not no_download,
            )
            _keep_terms(store, settings, display)
    _print_report(report)


def _print_report(report: InstallReport) -> None:
    click.echo(
        f"{'ontology':<16} {'status':<11} {'origin':<8} {'files':>5} {'triples':>9}  seconds"
    )
    for o in report.outcomes:
        origin = o.origin.value if o.origin else "-"
        click.echo(
            f"{o.ontology_id:<16} {o.status.value:<11} {origin:<8} {o.files:>5} "
            f"{o.triples:>9}  {o.seconds:.2f}"
        )
    click.echo(
        f"loaded {len(report.loaded)}, unchanged {len(report.unchanged)} in {report.seconds:.2f} s"
    )


@ontology.command()
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--id", "ontology_id", required=True, help="Catalogue id: [a-z0-9-]+.")
@click.option("--format", "fmt", type=click.Choice(_FORMATS), help="Syntax (default: by suffix).")
@click.option("--replace", is_flag=True, help="Replace an ontology that already has this id.")
@click.option("--title", help="Human-readable title (default: the id).")
def add(file: Path, ontology_id: str, fmt: str | None, replace: bool, title: str | None) -> None:
    """Add an RDF/OWL FILE (Turtle, N-Triples, RDF/XML, N3) to the catalogue."""
    settings = load_settings()
    with local_store(settings, "add ontologies", create=True) as store, shown() as display:
        outcome = _catalogue(store, settings).add(
            file, ontology_id, RdfFormat(fmt) if fmt else None, replace=replace, title=title
        )
        _keep_terms(store, settings, display)
    click.echo(f"added {outcome.ontology_id}: {outcome.triples} triples from {file.name}")


@ontology.command()
@click.argument("ontology_id", metavar="ID")
def remove(ontology_id: str) -> None:
    """Remove ontology ID (its graph and its reference shapes graph) from the catalogue."""
    settings = load_settings()
    with local_store(settings, "remove ontologies") as store, shown() as display:
        dropped = _catalogue(store, settings).remove(ontology_id)
        _keep_terms(store, settings, display)
    click.echo(f"removed {ontology_id}: {', '.join(dropped)}")


def _keep_terms(store: OxigraphStore, settings: Settings, display: Display) -> None:
    """Make the term index and vocabulary the next command reads (``ontology search``, a
    draft) now, once, rather than in that command (seconds with the official releases)."""
    lane = display.lane("terms")
    if lane is not None:
        lane("keeping the term index", 0, 0)
    started = time.perf_counter()
    ontology = OntologyService(store, QueryRegistry.load(), settings.catalogue_index_path)
    if ontology.keep():
        took = time.perf_counter() - started
        display.summary = f"term index and vocabulary kept for the next commands ({took:.1f} s)"


@ontology.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_(as_json: bool) -> None:
    """List the installed ontologies with their origin, release and counts."""
    settings = load_settings()
    with local_store(settings, "list ontologies") as store:
        queries = QueryRegistry.load()
        infos = Catalogue(store, queries, load_manifest()).list()
    if as_json:
        click.echo(json.dumps([_info_json(i) for i in infos], indent=2))
        return
    click.echo(
        f"{'ontology':<16} {'origin':<10} {'release':<11} {'triples':>9} {'classes':>8} "
        f"{'props':>6} {'files':>5}  title"
    )
    for i in infos:
        click.echo(
            f"{i.ontology_id:<16} {i.origin.value:<10} {i.release or '-':<11} {i.triples:>9} "
            f"{i.classes:>8} {i.properties:>6} {len(i.files):>5}  {i.title}"
        )


def _info_json(info: CatalogueInfo) -> dict[str, Any]:
    data = asdict(info)
    data["origin"] = info.origin.value
    data["files"] = [
        {**asdict(f), "origin": f.origin.value, "graph": str(f.graph)} for f in info.files
    ]
    return data
