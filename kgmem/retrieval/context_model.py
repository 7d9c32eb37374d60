"""What the prompt context carries, and how it reads as Markdown.

Every piece of text a person or an agent wrote is flattened to one line and clipped before it
is rendered, so a note cannot forge a heading or a section, and one long note cannot take the
whole budget. The token estimate is deliberately crude and deterministic (a quarter of the
characters, rounded up): the budget must come out the same on every machine, without a
tokenizer.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from kgmem.memory.short_memory import ShortMemoryItem

__all__ = [
    "PlaybookEntry",
    "PlaybookSection",
    "ProfileFact",
    "ProfileSection",
    "PromptContextPacket",
    "ShortMemorySection",
    "estimate_tokens",
    "line_tokens",
    "marker_line",
]

_SPACE = re.compile(r"\s+")
NAME_CHARS = 80  # an account name, a timezone, a title, a fact's label
TEXT_CHARS = 280  # a short note, a description, a fact's value
_HINT = "memory_search finds them"


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token estimate: one token per four characters, rounded up.

    >>> estimate_tokens(""), estimate_tokens("abcd"), estimate_tokens("abcde")
    (0, 1, 2)
    """
    return math.ceil(len(text) / 4)


def line_tokens(line: str) -> int:
    """What one rendered line costs, its line break included. The lines of a text cost at
    least what the whole text does, so a sum of line costs within budget keeps the text so."""
    return estimate_tokens(line + "\n")


def one_line(text: str, limit: int) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis marks a cut).

    >>> one_line("  two\\n## lines ", 80), one_line("abcdef", 4)
    ('two ## lines', 'abc…')
    """
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def marker_line(count: int, noun: str, plural: str, hint: str | None = _HINT) -> str:
    """The explicit line that says items were left out.

    >>> marker_line(7, "playbook", "playbooks")
    '… 7 more playbooks not shown (memory_search finds them)'
    >>> marker_line(1, "short note", "short notes", None)
    '… 1 more short note not shown'
    """
    what = noun if count == 1 else plural
    return f"… {count} more {what} not shown" + (f" ({hint})" if hint else "")


def _section(heading: str, head: list[str], items: list[str], marker: str | None) -> list[str]:
    if not head and not items and marker is None:
        return []
    return [heading, *head, *items, *([marker] if marker else [])]


@dataclass(frozen=True)
class ProfileFact:
    """A learned attribute or relation of the user's own entity: ``works for: Acme``."""

    predicate: str  # the IRI of the property
    label: str  # the property's label
    value: str  # the object's name, or the literal value
    negated: bool = False
    object: str | None = None  # the object entity's IRI, for a relation
    memory: str | None = None  # the newest active memory asserting it

    def line(self) -> str:
        value = one_line(self.value, TEXT_CHARS)
        return f"- {one_line(self.label, NAME_CHARS)}: {'not ' if self.negated else ''}{value}"


#: how many of the user's other names the profile shows
GOES_BY_CAP = 5


@dataclass(frozen=True)
class ProfileSection:
    """Who the user is: the account name, the timezone, and what kgmem learned about them."""

    account_name: str | None = None
    timezone: str | None = None
    local_time: datetime | None = None  # now in ``timezone``, when it is a known zone
    goes_by: tuple[str, ...] = ()  # the names the user introduced themselves by
    items: tuple[ProfileFact, ...] = ()
    truncated: int = 0

    HEADING = "## User profile"
    NOUN = ("profile fact", "profile facts")

    def head(self) -> list[str]:
        """The lines the profile always carries, before any learned fact."""
        lines = []
        if self.account_name:
            lines.append(f"- Account name: {one_line(self.account_name, NAME_CHARS)}")
        if self.goes_by:
            names = ", ".join(one_line(n, NAME_CHARS) for n in self.goes_by[:GOES_BY_CAP])
            lines.append(f"- Goes by: {names}")
        if self.timezone:
            zone = one_line(self.timezone, NAME_CHARS)
            when = self.local_time
            shown = f" (local time {when:%Y-%m-%d %H:%M}, {when:%A})" if when else ""
            lines.append(f"- Timezone: {zone}{shown}")
        return lines

    def lines(self) -> list[str]:
        marker = marker_line(self.truncated, *self.NOUN) if self.truncated else None
        return _section(self.HEADING, self.head(), [f.line() for f in self.items], marker)


def note_line(note: ShortMemoryItem) -> str:
    return f"- {note.timestamp:%Y-%m-%d}: {one_line(note.text, TEXT_CHARS)}"


@dataclass(frozen=True)
class ShortMemorySection:
    """The short notes that have not decayed below the threshold, newest (highest) first."""

    items: tuple[ShortMemoryItem, ...] = ()
    truncated: int = 0

    HEADING = "## Short memory"
    NOUN = ("short note", "short notes")

    def lines(self) -> list[str]:
        # short notes are not in the search index, so the marker names no tool
        marker = marker_line(self.truncated, *self.NOUN, None) if self.truncated else None
        return _section(self.HEADING, [], [note_line(n) for n in self.items], marker)


@dataclass(frozen=True)
class PlaybookEntry:
    """One line of the playbook index: a playbook page, or a procedure with no page yet."""

    id: str  # the page's or the memory's IRI
    kind: str  # "playbook" | "procedure"
    title: str
    description: str
    path: str | None  # a playbook's page path; a procedure is found by its id
    use_count: int = 0
    last_used: datetime | None = None  # the latest of its use, revision or recording

    def line(self) -> str:
        where = f"`{self.path}`" if self.path else f"memory `{self.id}`"
        about = one_line(self.description, TEXT_CHARS)
        title = one_line(self.title, NAME_CHARS)
        return f"- **{title}**" + (f" — {about}" if about else "") + f" ({where})"


@dataclass(frozen=True)
class PlaybookSection:
    """Playbooks and procedures, most used first, then most recent."""

    items: tuple[PlaybookEntry, ...] = ()
    truncated: int = 0

    HEADING = "## Playbook index"
    NOUN = ("playbook", "playbooks")

    def lines(self) -> list[str]:
        marker = marker_line(self.truncated, *self.NOUN) if self.truncated else None
        return _section(self.HEADING, [], [p.line() for p in self.items], marker)


@dataclass(frozen=True)
class PromptContextPacket:
    """What kgmem pushes into one agent turn: three sections within ``budget_tokens``."""

    uid: str
    generated_at: datetime
    budget_tokens: int
    profile: ProfileSection = field(default_factory=ProfileSection)
    short_memory: ShortMemorySection = field(default_factory=ShortMemorySection)
    playbooks: PlaybookSection = field(default_factory=PlaybookSection)

    @property
    def truncated(self) -> int:
        """Items of every section left out by a cap or by the budget."""
        return self.profile.truncated + self.short_memory.truncated + self.playbooks.truncated

    def render(self) -> str:
        """The Markdown text: the non-empty sections in order, a blank line between them;
        the empty string when there is nothing to say."""
        blocks = [s.lines() for s in (self.profile, self.short_memory, self.playbooks)]
        return "\n\n".join("\n".join(block) for block in blocks if block)

    @property
    def tokens(self) -> int:
        """The estimated size of :meth:`render` (never above ``budget_tokens``)."""
        return estimate_tokens(self.render())
