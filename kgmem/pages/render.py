"""The deterministic page renderer: a :class:`~kgmem.pages.content.PageInput` as
Markdown.

:func:`render_page` is pure (same arguments, same bytes): front matter (with the input's
digest), title, a summary line (types, and what they are kinds of), then Facts, How-tos and
preferences, History and What changed (older values, superseded or outdated, with when),
every line citing its memories (``[m:3f2a9c01]``) and each cited memory's evidence as a
footnote (``[^1]``: the quote, and where it was said: a chat's turn, a link to a note).
:func:`frame_page` puts kgmem's front matter and top heading around a body, whoever wrote
it (this renderer or a model). Stored text is escaped so that it cannot open a link or
fake a citation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from kgmem.memory.model import MemoryKind
from kgmem.pages.content import ChangeLine, MemoryLine, PageInput

__all__ = ["frame_page", "inline", "render_page", "wikilink", "yaml_scalar"]

_ESCAPE = re.compile(r"([\\`*_\[\]<>])")
_EMPTY = "_Nothing recorded yet._"
_UNLINKABLE = re.compile(r"[\[\]|#^]")


def render_page(page: PageInput, updated: datetime) -> str:
    """The page of ``page`` as Markdown: front matter, title, summary, Facts, How-tos and
    preferences, History; every line cites its memories. Pure: same arguments, same bytes."""
    return frame_page(page, updated, _body(page))


def frame_page(page: PageInput, updated: datetime, body: str, *, writer: str = "kgmem") -> str:
    """Front matter and top heading (kgmem's, whoever wrote the body) around ``body``;
    ``writer`` says who wrote the body: ``kgmem`` (this renderer) or ``model``."""
    when = updated.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    front = [
        "---",
        f"title: {yaml_scalar(page.name)}",
        f"types: [{', '.join(yaml_scalar(t) for t in page.types)}]",
        f"entity: {yaml_scalar(str(page.entity))}",
        f"aliases: [{', '.join(yaml_scalar(a) for a in page.aliases)}]",
        f"updated: {when}",
        f"digest: {yaml_scalar(page.digest)}",
        f"writer: {writer}",
        "---",
        "",
        f"# {inline(page.name)}",
        "",
    ]
    return "\n".join(front) + "\n" + body.strip() + "\n"


def yaml_scalar(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's; YAML 1.1 line breaks too)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("\u0085", "\\N").replace("\u2028", "\\L").replace("\u2029", "\\P")


def inline(text: str) -> str:
    """Stored text as one Markdown line that cannot open a link or fake a citation."""
    return _ESCAPE.sub(r"\\\1", " ".join(text.split()))


def _body(page: PageInput) -> str:
    notes = _Notes(page)
    facts = _fact_lines(page, notes)
    howtos = [_howto(m, notes) for m in page.memories if m.kind is MemoryKind.PROCEDURAL]
    events = [_event(m, notes) for m in page.memories if m.kind is MemoryKind.EPISODIC]
    sections = [
        _summary(page, len(facts), len(howtos), len(events)),
        _section("Facts", facts),
        _section("How-tos and preferences", howtos),
        _section("History", events),
    ]
    if page.changes:
        sections.append(_section("What changed", [_change(c) for c in page.changes]))
    if page.truncated:
        sections.append(
            "_Only the newest memories are shown here; `kgmem memories list` has them all._"
        )
    if notes.used:
        sections.append("\n".join(notes.definitions()))
    return "\n\n".join(sections)


class _Notes:
    """The page's evidence footnotes: one a memory, numbered as the page first cites them
    (``[^1]``), each a quote and where it was said (a wikilink when it is a note)."""

    def __init__(self, page: PageInput) -> None:
        self._evidence = {e.memory: e for e in page.evidence}
        self.used: dict[str, int] = {}

    def ref(self, memories: Iterable[str]) -> str:
        """The citations of ``memories``, each followed by its footnote when it has one."""
        out = []
        for memory in memories:
            if memory in self._evidence:
                number = self.used.setdefault(memory, len(self.used) + 1)
                out.append(f"[{memory}][^{number}]")
            else:
                out.append(f"[{memory}]")
        return " ".join(out)

    def definitions(self) -> list[str]:
        lines = []
        for memory, number in self.used.items():
            e = self._evidence[memory]
            where = wikilink(e.link, e.source) if e.link else inline(e.source)
            lines.append(f'[^{number}]: "{inline(e.quote)}" ({where})')
        return lines


def _fact_lines(page: PageInput, notes: _Notes) -> list[str]:
    lines = []
    for fact in page.facts:
        predicate = ("not " if fact.negated else "") + fact.predicate
        value = wikilink(fact.link, fact.value) if fact.link else inline(fact.value)
        lines.append(f"- **{inline(predicate)}**: {value} {notes.ref(fact.memories)}")
    claimed = {c for f in page.facts for c in f.memories}
    for m in page.memories:  # semantic and reference memories no fact line already cites
        if m.kind in (MemoryKind.SEMANTIC, MemoryKind.REFERENCE) and m.memory not in claimed:
            lines.append(f"- {_text(m)} {notes.ref([m.memory])}")
    return lines


def wikilink(target: str, text: str) -> str:
    """``[[target|text]]``: Obsidian's link to another page, shown as ``text`` (which may hold
    no character that would end the link early)."""
    shown = " ".join(_UNLINKABLE.sub(" ", text).split()) or target.rsplit("/", 1)[-1]
    return f"[[{target}|{shown}]]"


def _howto(memory: MemoryLine, notes: _Notes) -> str:
    steps = [f"   {n}. {inline(step)}" for n, step in enumerate(memory.steps, 1)]
    return "\n".join([f"- {_text(memory)} {notes.ref([memory.memory])}", *steps])


def _event(memory: MemoryLine, notes: _Notes) -> str:
    when = memory.occurred_at.astimezone(UTC).date().isoformat() if memory.occurred_at else "?"
    return f"- {when}: {_text(memory)} {notes.ref([memory.memory])}"


def _change(change: ChangeLine) -> str:
    """An older value: ``- **works for**: Globex, superseded 2026-05-01 [m:caae7810]``."""
    predicate = ("not " if change.negated else "") + change.predicate
    when = f" {change.until.astimezone(UTC).date().isoformat()}" if change.until else ""
    return (
        f"- **{inline(predicate)}**: {inline(change.value)}, {change.status}{when} "
        f"[{change.memory}]"
    )


def _text(memory: MemoryLine) -> str:
    excerpt = " ".join(memory.excerpt.split())
    if excerpt and excerpt != " ".join(memory.title.split()):
        return f"{inline(memory.title)} ({inline(excerpt)})"
    return inline(memory.title)


def _section(title: str, lines: Sequence[str]) -> str:
    return f"## {title}\n\n" + ("\n".join(lines) if lines else _EMPTY)


def _summary(page: PageInput, facts: int, howtos: int, events: int) -> str:
    what = ", ".join(page.types) or "entity"
    if page.ancestors:
        what += "; a kind of " + ", ".join(page.ancestors)
    line = f"**{inline(page.name)}** ({inline(what)})"
    if page.aliases:
        line += ", also known as " + ", ".join(inline(a) for a in page.aliases)
    counts = [
        _count(facts, "fact", "facts"),
        _count(howtos, "how-to or preference", "how-tos and preferences"),
        _count(events, "event", "events"),
    ]
    return f"{line}. On record: {', '.join(counts)}."


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
