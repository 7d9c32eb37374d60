"""``kgmem demo``: what kgmem does, in seconds, with no model.

A chat written for the demo (:mod:`kgmem.cli.demo.script`) becomes the demo user's source,
as ``kgmem ingest`` or ``POST /api/messages`` would keep it; then the drafts an agent writes
about it go through the write gate in one batch, as ``POST /api/memories/batch-draft`` sends
them: true ones, one invention and one contradiction of an accepted memory. What is printed
is what the gate answered. With no server it opens the store here; with one running (the
address in ``$KGMEM_HOME/server.json``) it calls the server, as the demo user.

Run again, it writes nothing: the gate would not answer the same twice (a draft that repeats
a known fact is folded, but the procedure, the episode and the stale trip date would be
drafted anew: a second procedure, a second episode, the current date weakened), so a user
who holds any of the demo's memories is shown where they stand instead.
"""

from __future__ import annotations

import re
from typing import Any

import click

from kgmem.cli.demo.clients import (
    DemoClient,
    demo_key_file,
    find_server,
    local_client,
    server_client,
)
from kgmem.cli.demo.report import Cited, DemoReport, DraftOutcome, next_steps, show, show_json
from kgmem.cli.demo.script import DemoDraft, Script, load_script
from kgmem.config import Settings, load_settings
from kgmem.store import USER_NODE_BASE, check_id

__all__ = ["demo"]

_ALL = 1000  # the most list_memories and decisions_feed answer at once
_MADE = frozenset({"active", "pending", "quarantined"})  # outcomes naming a new memory
_OUTCOMES = frozenset({*_MADE, "merged", "discarded", "refused"})  # a reason when none given
_MEMORY_IRI = re.compile(re.escape(USER_NODE_BASE) + r"[^/\s]+/memory/([0-9a-f]+)")


def _named(reason: str, titles: dict[str, str]) -> str:
    """A gate reason with each memory IRI as the title of the draft that made it ("..."),
    or as its short id."""

    def name(match: re.Match[str]) -> str:
        title = titles.get(match.group(0))
        return f'"{title}"' if title is not None else match.group(1)

    return _MEMORY_IRI.sub(name, reason)


def _outcome(
    script: Script, d: DemoDraft, outcome: str, reasons: tuple[str, ...], memory: str | None
) -> DraftOutcome:
    cited = tuple(Cited(turn, script.speaker(turn), quote) for turn, quote in d.evidence)
    return DraftOutcome(d.title, d.case, d.note, cited, outcome, reasons, memory)


def _draft(client: DemoClient, script: Script, batch_max: int) -> tuple[DraftOutcome, ...]:
    """Ingest the chat, send the drafts (in batches of at most ``batch_max``): the gate's
    answers, in the drafts' order."""
    client.call("ingest_messages", {"messages": script.turns()})
    drafts = [d.draft for d in script.drafts]
    items: list[dict[str, Any]] = []
    for start in range(0, len(drafts), batch_max):
        batch = drafts[start : start + batch_max]
        items += client.call("draft_memory", {"drafts": batch})["items"]
    titles = {
        str(item["memory"]): d.title
        for d, item in zip(script.drafts, items, strict=True)
        if item["memory"] is not None and item["outcome"] in _MADE
    }
    return tuple(
        _outcome(
            script,
            d,
            str(item["outcome"]),
            tuple(_named(str(r), titles) for r in item["reasons"]),
            item["short_id"],
        )
        for d, item in zip(script.drafts, items, strict=True)
    )


def _held(client: DemoClient, script: Script) -> dict[str, dict[str, Any]]:
    """The user's memories bearing a demo draft's title (the newest of each), any status."""
    titles = {d.title for d in script.drafts}
    found: dict[str, dict[str, Any]] = {}
    for args in ({"limit": _ALL}, {"status": "quarantined", "limit": _ALL}):
        for memory in client.call("list_memories", args)["memories"]:
            if memory["title"] in titles:
                found.setdefault(memory["title"], memory)
    return found


def _gate_reasons(decisions: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    """What the gate said when it made each memory: the reasons of the oldest decision
    about it (``decisions``: the feed, newest first)."""
    said: dict[str, tuple[str, ...]] = {}
    for decision in decisions:
        if decision["target"] is not None:
            reasons = str(decision["reason"]).split("; ")
            said[str(decision["target"])] = tuple(r for r in reasons if r not in _OUTCOMES)
    return said


def _standing(
    client: DemoClient, script: Script, held: dict[str, dict[str, Any]]
) -> tuple[DraftOutcome, ...]:
    """Where each demo draft stands now: its memory's status and what the gate said when it
    made it, or its refusal in the feed."""
    feed = client.call("decisions_feed", {"limit": _ALL})["decisions"]
    refused = {
        d["draft"]["title"]: d["reason"]
        for d in reversed(feed)
        if d["action"] == "refuse" and d["draft"] is not None
    }
    said = _gate_reasons(feed)
    titles = {str(m["id"]): title for title, m in held.items()}
    out = []
    for d in script.drafts:
        memory = held.get(d.title)
        if memory is not None:
            reasons = tuple(_named(r, titles) for r in said.get(str(memory["id"]), ()))
            out.append(_outcome(script, d, memory["status"], reasons, memory["short_id"]))
        elif d.title in refused:
            out.append(_outcome(script, d, "refused", (refused[d.title],), None))
        else:  # forgotten since, or never drafted
            out.append(_outcome(script, d, "not held", (), None))
    return tuple(out)


def _run(client: DemoClient, settings: Settings, script: Script, uid: str) -> DemoReport:
    held = _held(client, script)
    drafts = _standing(client, script, held) if held else _draft(client, script, settings.batch_max)
    # pages follow each commit only with the vault on (else consolidation writes them)
    page = client.page(script.next.entity) if settings.vault == "on" else None
    return DemoReport(
        user=uid,
        chat=script.chat,
        server=client.server,
        store=str(settings.store_dir),
        already=bool(held),
        key_file=demo_key_file(settings, uid),
        page_file=None if page is None else page.get("file"),
        drafts=drafts,
    )


@click.command()
@click.option(
    "--user",
    "uid",
    default="demo",
    show_default=True,
    metavar="USER",
    help="The user the demo writes for (made, with a key, if missing).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
def demo(uid: str, as_json: bool) -> None:
    """Show what kgmem does, in seconds, with no model.

    A short chat (someone planning a hiking weekend) becomes USER's source; then an agent's
    drafts about it go through the write gate: true ones, an invented detail and a claim
    against a memory the gate accepted. Prints what the gate answered to each (active,
    refused with its reason, quarantined...), then commands to look further (the key they
    use is kept in $KGMEM_HOME/api-key.USER).

    With a server running (`kgmem serve`) it goes through the server; otherwise it opens the
    store. Run again, it writes nothing and shows where the demo's memories stand now.
    """
    settings = load_settings()
    check_id(uid, "user id")
    script = load_script()
    url = find_server(settings)
    if url is None:
        with local_client(settings, uid) as client:
            report = _run(client, settings, script, uid)
    else:
        with server_client(settings, url, uid) as client:
            report = _run(client, settings, script, uid)
    steps = next_steps(report, script.next, url or settings.base_url)
    if as_json:
        show_json(report, steps)
    else:
        show(report, script, steps)
