"""``kgmem memories`` and ``kgmem review``: read, draft, review and change a user's memories.

Every command builds the same services the server does (:func:`local_services`) over the
local store, so a draft goes through the same gate and an action is the same lifecycle step,
recorded as a decision that ``kgmem memories revert`` can undo.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rdflib import URIRef

from kgmem.api.tools.args import short_id
from kgmem.cli.common import fail, local_services
from kgmem.cli.memory_views import (
    echo_json,
    jsonable,
    short,
    show_decisions,
    show_items,
    show_record,
    show_summaries,
)
from kgmem.config import Settings, load_settings
from kgmem.errors import BatchSizeError, DraftInvalid, GraphNameError
from kgmem.memory import (
    Actor,
    Lifecycle,
    MemoryKind,
    MemoryList,
    MemoryRecord,
    MemoryStatus,
    NodeKind,
    WriteMode,
    node_iri,
    parse_node,
)
from kgmem.memory.times import parse_time
from kgmem.store import TripleStore, UserGraphs, check_id, iri_problem
from kgmem.vocab import KGM, PREFIXES

__all__ = ["memories", "resolve", "review"]

Action = Callable[[Lifecycle, str, URIRef], URIRef]


def resolve(uid: str, text: str, kind: NodeKind) -> URIRef:
    """A memory or decision id from the command line: its full IRI or its last segment."""
    if "/" not in text and ":" not in text:
        return node_iri(uid, kind, text)
    try:
        owner, found, _ = parse_node(text)
    except GraphNameError:
        fail(f"{text}: not a kgmem {kind.value} id")
    if found is not kind:
        fail(f"{text}: is a {found.value}, not a {kind.value}")
    if owner != uid:
        fail(f"{text}: belongs to user {owner!r}, not {uid!r}")
    return URIRef(text)


def _user_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--user",
        "uid",
        metavar="USER",
        help="The user whose memories these are (default: the default_user setting).",
    )(command)


def _json_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(command)


def _settings(uid: str | None) -> tuple[Settings, str]:
    settings = load_settings()
    return settings, check_id(uid or settings.default_user, "user id")


@click.group()
def memories() -> None:
    """List, show, draft and change a user's memories."""


@click.group()
def review() -> None:
    """The review inbox: drafts waiting for a person."""


# -- reading ---------------------------------------------------------------------------


@memories.command("list")
@_user_option
@click.option("--kind", type=click.Choice([k.value for k in MemoryKind]), help="Only this kind.")
@click.option(
    "--status", type=click.Choice([s.value for s in MemoryStatus]), help="Only this status."
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option(
    "--valid-at",
    metavar="TIME",
    help="Which values held then (valid time, ISO 8601): active or since superseded/outdated.",
)
@click.option("--entity", help="Only claims about this entity (a name or IRI; I is you).")
@click.option("--predicate", help="Only claims of this predicate (schema:memberOf or an IRI).")
@_json_option
def list_memories(
    uid: str | None,
    kind: str | None,
    status: str | None,
    limit: int,
    valid_at: str | None,
    entity: str | None,
    predicate: str | None,
    as_json: bool,
) -> None:
    """The user's memories, newest first (quarantined ones with --status quarantined)."""
    settings, user = _settings(uid)
    try:
        when = None if valid_at is None else parse_time(valid_at)
    except ValueError as exc:
        fail(f"--valid-at: {exc}")
    with local_services(settings, "read memories") as services:
        found = MemoryList(services.store, services.queries).memories(
            user,
            MemoryKind(kind) if kind else None,
            MemoryStatus(status) if status else None,
            limit=limit,
            valid_at=when,
            entity=entity,
            predicate=None if predicate is None else _predicate(predicate),
        )
    if as_json:  # with the short id every other command and route takes, as REST has it
        echo_json([{**jsonable(m), "short_id": short_id(m.iri)} for m in found])
    else:
        show_summaries(found)


def _predicate(term: str) -> URIRef:
    """``schema:memberOf`` (kgmem's standard prefixes) or an IRI, as its IRI."""
    prefix, _, local = term.strip().partition(":")
    known = prefix in PREFIXES and local and not local.startswith("//")
    text = PREFIXES[prefix] + local if known else term.strip()
    problem = iri_problem(text)
    if problem is not None:
        fail(f"--predicate: an IRI or a prefixed name such as schema:memberOf ({problem})")
    return URIRef(text)


@memories.command("show")
@click.argument("memory_id", metavar="ID")
@_user_option
@_json_option
def show(memory_id: str, uid: str | None, as_json: bool) -> None:
    """Every field of memory ID, its claims and its evidence."""
    settings, user = _settings(uid)
    memory = resolve(user, memory_id, NodeKind.MEMORY)
    with local_services(settings, "read memories") as services:
        record = services.lifecycle.get(user, memory)
        names = _entity_names(services.store, user, record)
    if as_json:
        echo_json({**jsonable(record), "entity_names": names})
    else:
        show_record(record, names)


def _entity_names(store: TripleStore, uid: str, record: MemoryRecord) -> dict[str, str]:
    """The names of the entities ``record`` is about and its claims relate."""
    nodes = {*record.about, *(c.subject for c in record.claims)}
    nodes |= {c.object for c in record.claims if c.object is not None}
    names = {}
    for node in sorted(nodes):
        for quad in store.quads(UserGraphs(uid).kg, node, KGM.name):
            names[str(node)] = str(quad.object)
    return names


@memories.command("decisions")
@_user_option
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@_json_option
def decisions(uid: str | None, limit: int, as_json: bool) -> None:
    """The decisions feed, newest first: every gate and lifecycle decision."""
    settings, user = _settings(uid)
    with local_services(settings, "read decisions") as services:
        feed = services.lifecycle.decisions.feed(user, limit=limit)
    if as_json:
        echo_json(feed)
    else:
        show_decisions(feed)


# -- drafting --------------------------------------------------------------------------


def _read_drafts(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        fail(f"{path.name}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except json.JSONDecodeError as exc:
        fail(f"{path.name}:{exc.lineno}: not JSON: {exc.msg}")
    except OSError as exc:
        fail(f"{path.name}: cannot be read: {exc.strerror or exc}")
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            fail(f"{path.name}: draft {index}: expected a JSON object")
    return items


@memories.command("draft")
@click.argument(
    "path", metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@_user_option
@click.option(
    "--review",
    "held",
    is_flag=True,
    help="Review mode for this file: every agent draft waits (default: the user's mode).",
)
@click.option("--person", is_flag=True, help="Draft as the user (not as an agent).")
@click.option(
    "--queue",
    "queued",
    is_flag=True,
    help="Hand the drafts to the next consolidation pass instead of deciding now.",
)
@_json_option
def draft(
    path: Path, uid: str | None, held: bool, person: bool, queued: bool, as_json: bool
) -> None:
    """Run the drafts in FILE through the write gate.

    FILE is JSON: one draft object or a list of up to batch_max drafts. A draft has kind,
    title, claims ({subject, predicate, object | value}), evidence ({source, quote}) and
    optional entities, excerpt, body, tags, confidence, occurred_at, ttl. Each evidence
    source is an ingested source's IRI. Prints one line per draft: index, outcome, memory
    id and reasons. A malformed draft refuses the whole file before anything is written.
    With --queue the drafts wait for `kgmem consolidate` (or the server's sweep), which runs
    them through every consolidation stage; one line per queued draft.
    """
    settings, user = _settings(uid)
    payloads = _read_drafts(path)
    with local_services(settings, "draft memories") as services:
        try:
            if queued:
                nodes = services.consolidation.queue(user, payloads)
                for index, node in enumerate(nodes):
                    click.echo(f"{index} queued {short(node)}")
                return
            result = services.gate.draft(
                user,
                payloads,
                actor=Actor.PERSON if person else Actor.AGENT,
                mode=WriteMode.REVIEW if held else None,  # None: the user's own mode
            )
        except DraftInvalid as exc:
            reason = exc.reason.removeprefix("Value error, ")
            fail(f"{path.name}: draft {exc.item}, field {exc.field}: {reason}; nothing was written")
        except BatchSizeError as exc:
            fail(f"{path.name}: {exc}")
    if as_json:
        echo_json(result.items)
    else:
        show_items(result.items)


# -- lifecycle actions -----------------------------------------------------------------


def _act(uid: str | None, memory_id: str, done: str, action: Action) -> None:
    settings, user = _settings(uid)
    memory = resolve(user, memory_id, NodeKind.MEMORY)
    with local_services(settings, "change memories") as services:
        decision = action(services.lifecycle, user, memory)
    click.echo(f"{done} {short(memory)} (decision {short(decision)})")


def _action_command(name: str, done: str, action: Action, summary: str) -> click.Command:
    @click.argument("memory_id", metavar="ID")
    @_user_option
    def command(memory_id: str, uid: str | None) -> None:
        _act(uid, memory_id, done, action)

    return click.command(name, help=summary)(command)


_ACTIONS: list[tuple[click.Group, str, str, Action, str]] = [
    (memories, "pin", "pinned", Lifecycle.pin, "Pin memory ID: protected from contradiction."),
    (memories, "unpin", "unpinned", Lifecycle.unpin, "Unpin memory ID."),
    (memories, "archive", "archived", Lifecycle.archive, "Archive memory ID (not forgotten)."),
    (memories, "restore", "restored", Lifecycle.restore, "Make archived memory ID active again."),
    (review, "approve", "approved", Lifecycle.approve, "Approve pending memory ID: active."),
    (review, "reject", "rejected", Lifecycle.reject, "Reject pending memory ID: archived."),
]
for _group, _name, _done, _method, _summary in _ACTIONS:
    _group.add_command(_action_command(_name, _done, _method, _summary))


@memories.command("rate", context_settings={"ignore_unknown_options": True})
@click.argument("memory_id", metavar="ID")
@click.argument("delta", type=click.Choice(["+1", "-1"]))
@_user_option
def rate(memory_id: str, delta: str, uid: str | None) -> None:
    """Rate memory ID +1 (it helped) or -1 (it did not): changes its strength."""
    _act(uid, memory_id, f"rated {delta}", lambda lc, u, m: lc.rate(u, m, int(delta)))


@memories.command("forget")
@click.argument("memory_id", metavar="ID")
@_user_option
def forget(memory_id: str, uid: str | None) -> None:
    """Purge memory ID, its claims, evidence, facts and decisions; leaves a tombstone."""
    settings, user = _settings(uid)
    memory = resolve(user, memory_id, NodeKind.MEMORY)
    with local_services(settings, "forget memories") as services:
        tombstone = services.lifecycle.forget(user, memory)
    click.echo(f"forgot {short(memory)}: purged from every graph (tombstone {tombstone})")


@memories.command("revert")
@click.argument("decision_id", metavar="DECISION")
@_user_option
def revert(decision_id: str, uid: str | None) -> None:
    """Undo DECISION exactly; refused if later changes touched the same memory."""
    settings, user = _settings(uid)
    decision = resolve(user, decision_id, NodeKind.DECISION)
    with local_services(settings, "revert decisions") as services:
        record = services.lifecycle.revert(user, decision)
    click.echo(f"reverted {short(decision)} (decision {short(record)})")


# -- review ----------------------------------------------------------------------------


@review.command("list")
@_user_option
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@_json_option
def inbox(uid: str | None, limit: int, as_json: bool) -> None:
    """Drafts waiting for a person, newest first."""
    settings, user = _settings(uid)
    with local_services(settings, "read the review inbox") as services:
        found = MemoryList(services.store, services.queries).inbox(user, limit=limit)
    if as_json:
        echo_json(found)
    else:
        show_summaries(found, "pending memories")
