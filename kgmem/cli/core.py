"""``kgmem serve``, ``kgmem status``, ``kgmem sparql``: the server and the raw store."""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

import click
import httpx
from rdflib import Literal, URIRef

from kgmem import __version__
from kgmem.cli.common import fail, local_store, running_server
from kgmem.config import Settings, apply_offline_env, load_settings
from kgmem.errors import StoreLocked
from kgmem.pipeline.lm import ModelGroup, ModelSet
from kgmem.store import (
    AskResult,
    Dataset,
    OxigraphStore,
    QueryRegistry,
    QueryResult,
    SelectResult,
    Term,
    UserGraphs,
    collect_facts,
)

__all__ = ["serve", "sparql", "status"]


@click.command()
@click.option("--host", help="Bind address (default: the host setting, 127.0.0.1).")
@click.option("--port", type=int, help="Port (default: the port setting, 8765).")
def serve(host: str | None, port: int | None) -> None:
    """Start the HTTP server on the embedded store."""
    import uvicorn

    from kgmem.api import create_app
    from kgmem.api.auth import key_file

    apply_offline_env()
    overrides: dict[str, Any] = {k: v for k, v in (("host", host), ("port", port)) if v}
    settings = load_settings(**overrides)
    app = create_app(settings)
    info = {"pid": os.getpid(), "url": settings.base_url, "store": str(settings.store_dir)}
    settings.server_file.write_text(json.dumps(info), encoding="utf-8")
    click.echo(f"kgmem {__version__} serving {settings.store_dir}")
    click.echo(f"  URL:    {settings.base_url}  (health: {settings.base_url}/health)")
    keys, written = key_file(settings), app.state.default_key
    if written is not None:
        click.echo(f"  Key:    new API key {written.key_id} of admin {written.uid}, in {keys}")
    if keys.is_file():
        curl = f'curl -H "Authorization: Bearer $(cat {keys})" {settings.base_url}/...'
        click.echo(f"  Auth:   every route but /health takes a Bearer key; an admin's is in {keys}")
        click.echo(f"          {curl}")
    else:  # the admins were made by hand
        click.echo("  Auth:   every route but /health takes a Bearer key: kgmem users token USER")
    click.echo("          (more users and keys: kgmem users add|list|revoke|token)")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the
    # handler it found: make that handler a clean exit so the cleanup below runs.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_cleanly)
    try:
        uvicorn.run(app, host=settings.host, port=settings.port, log_level=settings.log_level)
    finally:
        settings.server_file.unlink(missing_ok=True)


def _exit_cleanly(signum: int, frame: object) -> None:
    sys.exit(0)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def status(as_json: bool) -> None:
    """Show the store: path, size, graphs and triple counts, version."""
    settings = load_settings()
    facts: dict[str, Any]
    server = running_server(settings)
    if not settings.store_dir.exists():
        facts = {
            "location": str(settings.store_dir),
            "triples": 0,
            "graphs": {},
            "size_bytes": 0,
            "note": "no store yet",
        }
    else:
        try:
            store = OxigraphStore(settings.store_dir)
        except StoreLocked:
            facts = _server_facts(settings, server)
        else:
            try:
                facts = collect_facts(store, QueryRegistry.load()).as_dict()
            finally:
                store.close()
            server = None
    models = _models(settings)
    report: dict[str, Any] = {
        "version": __version__,
        "home": str(settings.home),
        "server": server["url"] if server else None,
        "store": facts,
        "models": models,
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(f"kgmem {__version__}")
    click.echo(f"home:    {settings.home}")
    click.echo(f"server:  {report['server'] or 'not running'}")
    if models["memory"] is None:
        click.echo(
            "models:  none configured: agent drafts run every deterministic stage; "
            "raw transcripts wait for a model"
        )
    else:
        click.echo(f"models:  memory {models['memory']}, primary {models['primary']}")
    click.echo(f"store:   {facts['location']}  ({_size(facts.get('size_bytes'))})")
    click.echo(f"triples: {facts['triples']}  in {len(facts['graphs'])} graphs")
    for graph, count in facts["graphs"].items():
        click.echo(f"  {count:>10}  {graph}")


def _models(settings: Settings) -> dict[str, str | None]:
    """Which model each group uses (None: no model, a supported mode)."""
    models = ModelSet.from_settings(settings)
    out: dict[str, str | None] = {}
    for group in (ModelGroup.MEMORY, ModelGroup.PRIMARY):
        spec = models.spec(group)
        out[group.value] = None if spec is None else spec.model
    return out


def _server_facts(settings: Settings, server: dict[str, Any] | None) -> dict[str, Any]:
    if server is None:
        fail(f"the store at {settings.store_dir} is locked by another process")
    # The detail names every user's graphs, so it takes an admin's key: the one the first
    # start wrote beside the store.
    keys = settings.home / "api-key"
    headers = {"Authorization": f"Bearer {keys.read_text().strip()}"} if keys.is_file() else {}
    try:
        answer = httpx.get(
            f"{server['url']}/health", params={"detail": "1"}, headers=headers, timeout=5
        )
        body = answer.json()
    except (httpx.HTTPError, ValueError) as exc:
        fail(f"the store is locked but the server at {server['url']} does not answer: {exc}")
    if answer.status_code != 200:
        fail(f"the server at {server['url']} refused the store's detail ({keys}): {answer.text}")
    return dict(body["store"])


def _size(size: object) -> str:
    """``2.4 MB (2,359,296 bytes)``: decimal units, as /health's size_bytes reads."""
    if not isinstance(size, int):
        return "in memory"
    value, unit = float(size), "B"
    for bigger in ("kB", "MB", "GB", "TB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    shown = f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
    return f"{shown} ({size:,} bytes)" if unit != "B" else shown


@click.command()
@click.argument("query")
@click.option("--user", "uid", help="Limit the dataset to this user's graphs and the catalogue.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "tsv", "json"]),
    default="table",
    show_default=True,
)
@click.option("--limit", type=int, default=None, help="Most rows (default: the setting).")
def sparql(query: str, uid: str | None, fmt: str, limit: int | None) -> None:
    """Run a read-only SPARQL QUERY (or '-' to read it from stdin) on the local store."""
    settings = load_settings()
    text = sys.stdin.read() if query == "-" else query
    with local_store(settings, "query it") as store:
        dataset = Dataset()
        if uid is not None:
            graphs = UserGraphs(uid)
            catalogue = tuple(
                g for g in store.graphs() if str(g).startswith("urn:kgmem:catalogue:")
            )
            allowed = (*graphs.standing, *catalogue)
            dataset = Dataset(default=allowed, named=allowed)
        result = store.query_text(
            text, dataset=dataset, limit=limit or settings.sparql_result_limit
        )
    click.echo(_render(result, fmt))


def _term(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, URIRef):
        return f"<{term}>"
    if isinstance(term, Literal):
        return str(term)
    return f"_:{term}"


def _render(result: QueryResult, fmt: str) -> str:
    if isinstance(result, AskResult):
        return json.dumps({"boolean": result.value}) if fmt == "json" else str(result.value)
    if isinstance(result, SelectResult):
        if fmt == "json":
            return json.dumps(
                [{k: str(v) for k, v in row.items()} for row in result.rows], indent=2
            )
        lines = [[_term(row.get(v)) for v in result.variables] for row in result.rows]
        if fmt == "tsv":
            return "\n".join("\t".join(cells) for cells in [list(result.variables), *lines])
        widths = [
            max([len(v), *(len(line[i]) for line in lines)]) for i, v in enumerate(result.variables)
        ]
        out = ["  ".join(v.ljust(w) for v, w in zip(result.variables, widths, strict=True))]
        out += [
            "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) for cells in lines
        ]
        out.append(f"({len(lines)} rows)")
        return "\n".join(out)
    return "\n".join(f"{_term(s)} {_term(p)} {_term(o)} ." for s, p, o in result.triples)
