"""What ``kgmem demo`` prints: each draft's outcome, then what to open next.

The outcomes are the gate's own answers (its outcome and reasons, a memory's IRI written as
the title of the draft that made it); the next steps are commands that work for the demo
user as things stand: the CLI while no server runs (it reads the store itself), curl and the
memory browser once a server does.
"""

from __future__ import annotations

import json
import shlex
import textwrap
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import click

from kgmem.cli.demo.script import NextSteps, Script

__all__ = ["Cited", "DemoReport", "DraftOutcome", "Step", "next_steps", "show", "show_json"]

_WIDTH = 15  # a column: "quarantined", "contradiction", and a gap
_LINE = 100
_SHOWN = frozenset({"invention", "contradiction"})  # the drafts whose quotes are printed


@dataclass(frozen=True)
class Cited:
    turn: int
    by: str  # the user, the assistant, the bookings tool
    quote: str


@dataclass(frozen=True)
class DraftOutcome:
    title: str
    case: str  # what the draft is: fact, preference, routine, event, change, invention, ...
    note: str
    cited: tuple[Cited, ...]
    outcome: str  # the gate's answer (on a re-run: where its memory stands now)
    reasons: tuple[str, ...]
    memory: str | None  # its memory's short id (None: refused, or gone)


@dataclass(frozen=True)
class DemoReport:
    user: str
    chat: str
    server: str | None  # None: the store was opened here
    store: str
    already: bool  # the user held the demo already: nothing was written
    key_file: Path
    page_file: str | None  # the entity page's file, when the page is there and has one
    drafts: tuple[DraftOutcome, ...]

    def counts(self) -> dict[str, int]:
        return dict(Counter(d.outcome for d in self.drafts))


@dataclass(frozen=True)
class Step:
    what: str
    command: str
    server: bool  # it needs a running server


def _curl(*args: str) -> str:
    return " ".join(("curl -s -H", '"$H"', *args))


def _server_steps(report: DemoReport, nxt: NextSteps, base: str) -> list[Step]:
    api, q = f"{base}/api", shlex.quote
    body = json.dumps({"task": nxt.task, "intent": nxt.intent})
    search = f"{api}/search?{urlencode({'q': nxt.search})}"
    page = f"{api}/pages/by-entity?{urlencode({'entity': nxt.entity})}"
    steps = [
        (
            "the demo user's key, for every request",
            f'H="Authorization: Bearer $(cat {q(str(report.key_file))})"',
        ),
        ("search (BM25 over titles, quotes, entities: no model)", _curl(q(search))),
        (
            "the context packet an agent gets for a task: facts, a procedure, warnings",
            _curl("-H 'Content-Type: application/json'", f"{api}/context -d {q(body)}"),
        ),
        (f"{nxt.entity}'s page", _curl(q(page))),
        ("the decisions feed, newest first", _curl(q(f"{api}/decisions?limit=5"))),
    ]
    if report.server is not None:  # with no server, the CLI lists them
        steps.append(
            ("the contradiction, held apart", _curl(q(f"{api}/memories?status=quarantined")))
        )
    steps.append((f"the memory browser: enter the key in {report.key_file}", f"{base}/"))
    return [Step(what, command, server=True) for what, command in steps]


def next_steps(report: DemoReport, nxt: NextSteps, base: str) -> list[Step]:
    """Commands that work for the demo user now (``base``: where the server is, or will be)."""
    steps: list[Step] = []
    if report.server is None:  # the CLI opens the store itself only while no server holds it
        user = shlex.quote(report.user)
        steps += [
            Step(
                f"what {report.user}'s memory holds now",
                f"kgmem memories list --user {user}",
                False,
            ),
            Step(
                "the contradiction, held apart",
                f"kgmem memories list --user {user} --status quarantined",
                False,
            ),
            Step(
                "every gate decision, the refusal too",
                f"kgmem memories decisions --user {user}",
                False,
            ),
        ]
    if report.page_file is not None:
        what = f"{nxt.entity}'s page, a Markdown file in {report.user}'s vault"
        steps.append(Step(what, f"cat {shlex.quote(report.page_file)}", False))
    return steps + _server_steps(report, nxt, base)


def _lines(draft: DraftOutcome) -> list[str]:
    indent = " " * (2 + 2 * _WIDTH)
    out = [f"  {draft.outcome:<{_WIDTH}}{draft.case:<{_WIDTH}}{draft.title}"]
    if draft.case in _SHOWN:
        out += [f'{indent}quotes "{c.quote}" ({c.by}, turn {c.turn})' for c in draft.cited]
    if draft.note:
        out.append(f"{indent}({draft.note})")
    out += [f"{indent}gate: {reason}" for reason in draft.reasons]
    return out


def _opening(report: DemoReport, script: Script) -> str:
    turns = f"{len(script.messages)} turns, kept as {report.user}'s source chat:{report.chat}"
    if report.already:
        then = (
            f"User {report.user} holds the demo already, so nothing was written; where its "
            "drafts stand now:"
        )
    else:
        then = (
            f"An agent drafted {len(report.drafts)} memories from it, each citing the chat "
            "with a short quote; the write gate answered:"
        )
    return textwrap.fill(f"The chat: {script.about} ({turns}). {then}", width=_LINE)


def show(report: DemoReport, script: Script, steps: list[Step]) -> None:
    where = f"the server at {report.server}" if report.server else f"the store at {report.store}"
    click.echo(f"kgmem demo: user {report.user}, on {where}; no model involved")
    click.echo("")
    click.echo(_opening(report, script))
    click.echo("")
    for draft in report.drafts:
        for line in _lines(draft):
            click.echo(line)
    click.echo("")
    click.echo(", ".join(f"{n} {outcome}" for outcome, n in report.counts().items()) + ".")
    click.echo("")
    click.echo("What to open next:")
    waits = report.server is None
    for step in steps:
        if waits and step.server:
            click.echo(
                "Then start the server (`kgmem serve`, or `make serve`), and in another terminal:"
            )
            waits = False
        click.echo(f"  # {step.what}")
        click.echo(f"  {step.command}")


def show_json(report: DemoReport, steps: list[Step]) -> None:
    out: dict[str, Any] = asdict(report)
    out["key_file"] = str(report.key_file)
    out["counts"] = report.counts()
    out["next"] = [asdict(step) for step in steps]
    click.echo(json.dumps(out, indent=2, ensure_ascii=False))
