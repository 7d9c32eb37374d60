"""What a person changed in a page file: the page's lines read back, and the edits between
the revision a file was written from and the file as it is now.

A page is read as its front matter (YAML, as Obsidian writes it) and its lines: each bullet
(``- `` or ``* ``) or plain line under a section heading, with the memories it cites
(``[m:3f2a9c01]``), whether it is struck through (``~~...~~``, with what follows the strike:
"wrong", "outdated"), and its indented sub-lines (a how-to's steps). :func:`page_edits`
compares two readings line by line, by the memories each line cites:

- a line that cites no memory the old page cited, and was not there, is *added*;
- a cited line whose words changed is *changed* (a new value for those memories);
- a cited line struck through is *struck* (outdated, or erroneous when the words after the
  strike say so: "wrong", "never", "not true"...);
- a cited line that is gone is *removed*.

Citations the old page did not carry are no citations (a typed ``[m:...]`` cannot reach a
memory the page did not show). Everything here is pure: text in, edits out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

import yaml

__all__ = [
    "EditKind",
    "FrontMatterError",
    "LineEdit",
    "PageLine",
    "ReadPage",
    "dated",
    "fact_parts",
    "page_edits",
    "read_page",
]

_CITATION = re.compile(r"\[(m:[0-9a-f]{8,64})\]")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]{1,40}\]")  # a footnote's reference: "[^1]"
_TRAILING = re.compile(r"(?:\s*(?:\[m:[0-9a-f]{8,64}\]|\[\^[^\]\s]{1,40}\]))+\s*$")
_KGMEM_SECTIONS = frozenset({"What changed"})  # kgmem's account of history: not edited
_UNESCAPE = re.compile(r"\\([\\`*_\[\]<>])")
_WIKILINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]*))?\]\]")
_BULLET = re.compile(r"^[-*] (.*)$")
# "**works for**: Acme", and the colon inside the bold as many write it: "**born in:** Turin"
_FACT = re.compile(r"^\*\*(.+?)(?:\*\*:|:\*\*)\s*(.+)$")
_LABEL = re.compile(r"^\*\*[^*]+?(?:\*\*:|:\*\*)\s*")
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2}):\s*(.+)$")
_STEP = re.compile(r"^\s+(?:\d{1,3}[.)]|[-*])\s+(.*)$")
_ERRONEOUS = re.compile(
    r"\b(wrong|erroneous|error|never|untrue|false|mistaken|mistake|incorrect|made up|invented"
    r"|not (?:true|correct|right|so|real)|did(?:n'?t| not) happen|(?:is|was)(?:n'?t| not) true)\b",
    re.I,
)
# what follows a strike as a note rather than a new value: "(outdated)", "no longer", "wrong"
_NOTE = re.compile(
    r"^[(\[].*[)\]]$|\b(outdated|obsolete|no longer|not any ?more|anymore|ended|old|stale"
    r"|expired|done|gone|left|moved|past)\b",
    re.I,
)
_RAW_ID = re.compile(r"""^id:\s*["']?([0-9a-f]{32})["']?\s*$""", re.M)
_PLACEHOLDER = "_Nothing recorded yet._"
_KGMEM_NOTES = ("_Only the newest memories are shown here",)


class FrontMatterError(ValueError):
    """A page file's front matter cannot be read (not YAML, or not a mapping)."""


@dataclass(frozen=True)
class PageLine:
    """One line of a page's sections, as a person may have changed it."""

    section: str  # the heading above it ("Facts", "How-tos and preferences", "History", ...)
    quote: str  # the line as written (after its bullet), but the citations that end it
    text: str  # its words: no citations, strike marks, escapes or link targets
    citations: tuple[str, ...] = ()
    struck: bool = False
    after_strike: str = ""  # what follows a strike ("wrong", "(outdated)")
    steps: tuple[str, ...] = ()  # indented sub-lines, their words (a how-to's steps)
    step_quotes: tuple[str, ...] = ()  # the same lines as written (what quotes them)

    @property
    def key(self) -> str:
        """The words, compared without case or spacing."""
        return " ".join(self.text.casefold().split())


@dataclass(frozen=True)
class ReadPage:
    """A page file read back: its front matter and its lines."""

    front: dict[str, object]
    lines: tuple[PageLine, ...]
    heading: str = ""  # the text of its ``# `` heading
    raw_front: str = ""  # the front matter as written

    @property
    def id(self) -> str | None:
        """The page id: 32 hex digits, quoted or not (an editor may drop the quotes, and
        YAML then reads an all-digit id as a number: the text is read instead)."""
        found = _RAW_ID.search(self.raw_front)
        return found.group(1) if found else None

    @property
    def revision(self) -> int | None:
        found = self.front.get("revision")
        if isinstance(found, str) and found.strip().isdigit():
            return int(found)
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    @property
    def entity(self) -> str | None:
        found = self.front.get("entity")
        return found if isinstance(found, str) else None


class EditKind(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    STRUCK = "struck"
    REMOVED = "removed"


@dataclass(frozen=True)
class LineEdit:
    """One edit: its kind, the line as it was (None for an addition) and as it is (None for
    a removal); ``erroneous``: a strike that says the line never held."""

    kind: EditKind
    old: PageLine | None
    new: PageLine | None
    erroneous: bool = False

    @property
    def citations(self) -> tuple[str, ...]:
        return self.old.citations if self.old is not None else ()


@dataclass
class _Open:
    section: str
    quote: str
    steps: list[str] = field(default_factory=list)


def _words(text: str) -> str:
    """Markdown as the words a reader sees: link targets, escapes and emphasis marks go."""
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)
    text = _UNESCAPE.sub(r"\1", text)
    text = text.replace("**", "")
    return " ".join(text.split())


def _line(section: str, quote: str, steps: Iterable[str]) -> PageLine:
    citations = tuple(dict.fromkeys(_CITATION.findall(quote)))
    body = _FOOTNOTE.sub("", _CITATION.sub("", quote)).strip()
    struck, after = False, ""
    label = _LABEL.match(body)  # a fact's value struck: "**works for**: ~~Acme~~"
    head, tail = (body[: label.end()], body[label.end() :]) if label else ("", body)
    if tail.startswith("~~") and "~~" in tail[2:]:
        inner, _, rest = tail[2:].partition("~~")
        rest = rest.strip()
        if head and rest and not _NOTE.search(rest) and not _ERRONEOUS.search(rest):
            body = head + rest  # "**lives in**: ~~Lyon~~ Paris": the new value after the old
        else:
            struck, body, after = True, (head + inner).strip(), rest
    kept = [" ".join(step.split()) for step in steps]
    return PageLine(
        section,
        _TRAILING.sub("", quote).strip(),
        _words(body),
        citations,
        struck,
        " ".join(after.split()),
        tuple(_words(step) for step in kept if step),
        tuple(step for step in kept if step),
    )


def _front(text: str) -> tuple[dict[str, object], str, str]:
    if not text.startswith("---\n"):
        return {}, text, ""
    end = text.find("\n---\n", 3)
    if end < 0 and text.endswith("\n---"):  # only front matter, no newline after it
        end = len(text) - 4
    if end < 0:
        raise FrontMatterError("the front matter is not closed by a '---' line")
    raw, body = text[4:end], text[end + 5 :]
    try:
        found = yaml.safe_load(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 2})" if where is not None else ""
        raise FrontMatterError(f"the front matter is not YAML{at}") from None
    if not isinstance(found, dict):
        raise FrontMatterError("the front matter is not a mapping of properties")
    return {str(k): v for k, v in found.items()}, body, raw


def read_page(text: str) -> ReadPage:
    """A page file's front matter and lines; :class:`FrontMatterError` when its front
    matter cannot be read. Lines above the first ``## `` section (kgmem's summary) are not
    the person's to change and are not read."""
    front, body, raw_front = _front(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    lines: list[PageLine] = []
    heading, section = "", ""
    current: _Open | None = None
    blank = False  # a blank line after a line: the next step may still be its (loose list)

    def close() -> None:
        nonlocal current
        if current is not None:
            lines.append(_line(current.section, current.quote, current.steps))
            current = None

    for raw in body.split("\n"):
        stripped = raw.strip()
        if raw.startswith("# "):
            close()
            heading = _words(raw[2:])
            continue
        if raw.startswith("## "):
            close()
            section = raw[3:].strip()
            continue
        if not section or raw.startswith("#") or section in _KGMEM_SECTIONS:
            continue
        if raw.startswith("[^"):  # a footnote's text (the evidence): kgmem's, not a line
            close()
            continue
        if not stripped:
            blank = True
            continue
        after_blank, blank = blank, False
        if current is not None and (step := _STEP.match(raw)):
            current.steps.append(step.group(1))
            continue
        if current is not None and raw[:1].isspace() and not after_blank:  # wrapped: goes on
            if current.steps:
                current.steps[-1] += " " + stripped
            else:
                current.quote += " " + stripped
            continue
        close()
        if stripped in ("-", "*", _PLACEHOLDER) or stripped.startswith(_KGMEM_NOTES):
            continue
        bullet = _BULLET.match(stripped)
        current = _Open(section, bullet.group(1) if bullet else stripped)
    close()
    return ReadPage(front, tuple(lines), heading, raw_front)


def fact_parts(line: PageLine) -> tuple[str, str] | None:
    """A fact line's property label and value (``**works for**: Acme``), if it is one."""
    body = _FOOTNOTE.sub("", _CITATION.sub("", line.quote)).strip()
    if line.struck:
        return None
    found = _FACT.match(body)
    if found is None:
        return None
    label = _words(found.group(1))
    value = _words(found.group(2))
    return (label, value) if label and value else None


def dated(line: PageLine) -> tuple[str, str] | None:
    """A history line's date and words (``2026-06-01: Moved to Lyon``), if it has one."""
    found = _DATED.match(line.text)
    return (found.group(1), found.group(2)) if found else None


def page_edits(old: ReadPage, new: ReadPage) -> list[LineEdit]:
    """The edits that make ``old``'s lines ``new``'s (see the module)."""
    by_citation: dict[str, PageLine] = {}
    for line in old.lines:
        for citation in line.citations:
            by_citation.setdefault(citation, line)
    known_words = {line.key for line in old.lines}
    by_words = {line.key: line for line in old.lines if line.citations}
    seen: set[int] = set()
    edits: list[LineEdit] = []
    for line in new.lines:
        olds = [by_citation[c] for c in line.citations if c in by_citation]
        if not olds:
            same = by_words.get(line.key)
            if same is not None and not line.struck:  # its citation dropped, words kept
                seen.add(id(same))
            elif line.key and line.key not in known_words and not line.struck:
                edits.append(LineEdit(EditKind.ADDED, None, _uncited(line)))
            continue
        before = olds[0]
        if id(before) in seen:  # a copy of a line already read: new words are a new line
            if line.key != before.key and line.key not in known_words and not line.struck:
                edits.append(LineEdit(EditKind.ADDED, None, _uncited(line)))
            continue
        seen.add(id(before))
        if line.struck:
            erroneous = bool(_ERRONEOUS.search(line.after_strike))
            edits.append(LineEdit(EditKind.STRUCK, before, line, erroneous))
        elif line.key != before.key or line.steps != before.steps:
            edits.append(LineEdit(EditKind.CHANGED, before, line))
    for line in old.lines:
        if line.citations and id(line) not in seen:
            edits.append(LineEdit(EditKind.REMOVED, line, None))
    return edits


def _uncited(line: PageLine) -> PageLine:
    """An added line with any citation it carries dropped: it cites nothing the page showed."""
    if not line.citations:
        return line
    return PageLine(
        line.section, line.quote, line.text, (), False, "", line.steps, line.step_quotes
    )
