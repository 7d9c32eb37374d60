"""Episodes → procedure: the deterministic rules of periodic consolidation (pure, no store).

A routine is read off what repeated episodes share, without a model:

- **step statements** of an episode: the first of its body, excerpt and title that lists at
  least two steps. A text lists steps when, after an optional one-line head ending in a colon
  ("Ran the release checklist: ..."), it has several lines (bullets and numbers are stripped)
  or, on one line, items separated by commas, semicolons, arrows or "then" (a single line
  only counts with a colon head, an arrow or a "then", so a plain list of names is no
  routine). Leading "and"/"then"/"first"/"finally" and end punctuation are dropped;
- **steps** of the routine: the common ordered sequence of the episodes' step statements,
  compared case- and punctuation-insensitively: a longest common subsequence, folded over
  the episodes oldest first (ties keep the earlier step of the running sequence), worded as
  the oldest episode words them. A routine has at least :data:`MIN_STEPS` steps;
- **triggers**: the longest run of words every episode's head shares ("ran the release
  checklist"), trimmed of stopwords at both ends, and the name of the subject;
- **grouping**: episodes about the same entity (the user themself aside: nearly every
  first-person episode is about them), or making claims with the same subject and predicate.
  Larger groups are tried first, entity groups before claim patterns; an episode feeds one
  routine only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from rdflib import URIRef

from kgmem.memory.model import (
    MAX_STEP_CHARS,
    MAX_STEPS,
    MAX_TRIGGER_CHARS,
    MAX_TRIGGERS,
    DraftMemory,
    MemoryKind,
)
from kgmem.memory.records import EvidenceRecord, MemoryRecord
from kgmem.pipeline.periodic.gate import DERIVED_CAP, derived_evidence, one_line

__all__ = [
    "MIN_EPISODES",
    "MIN_STEPS",
    "EpisodeSteps",
    "GroupKey",
    "common_steps",
    "episode_steps",
    "order_groups",
    "routine_body",
    "routine_draft",
    "split_steps",
    "step_key",
    "trigger_phrase",
]

#: Episodes it takes to promote a routine.
MIN_EPISODES = 3
#: Steps a routine must have: a single shared statement is a habit, not a procedure.
MIN_STEPS = 2

_HEAD = re.compile(r"^([^\n:]{1,200}):(?=\s)(.*)$", re.S)
_BULLET = re.compile(r"^(?:[-*\u2022]+|\(?\d{1,3}[.)]|step\s+\d{1,3}\s*[:.)-]?)\s*", re.I)
_MARKER = re.compile(r"->|\u2192|=>|\bthen\b", re.I)
_SPLIT = re.compile(r"\s*(?:[,;]|->|\u2192|=>|\bthen\b)\s*", re.I)
_LEAD = re.compile(r"^(?:(?:and|then|first|next|finally|lastly)\b[\s,]*)+", re.I)
_WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
_STOP = frozenset(
    (
        "a", "an", "and", "at", "by", "for", "from", "i", "in", "it", "its", "me", "my",
        "of", "on", "or", "our", "the", "then", "to", "we", "with",
    )
)  # fmt: skip


def step_key(text: str) -> str:
    """What makes two step statements the same step.

    >>> step_key("Tag the release!") == step_key("tag  the RELEASE")
    True
    """
    return " ".join(_WORD.findall(text.casefold()))


def _clean(item: str) -> str:
    item = _LEAD.sub("", _BULLET.sub("", item.strip())).strip()
    return item.rstrip(".!;,").strip()


def split_steps(text: str) -> tuple[str, tuple[str, ...]]:
    """(head, step statements) of ``text``; no steps unless it lists at least two.

    >>> split_steps("Ran the release checklist: tag, build, and publish.")
    ('Ran the release checklist', ('tag', 'build', 'publish'))
    >>> split_steps("Lunch with Ann, Bob and Carl")
    ('', ())
    """
    text = text.strip()
    head, tail, colon = "", text, False
    if (match := _HEAD.match(text)) is not None:
        head, tail, colon = match.group(1).strip(), match.group(2).strip(), True
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if len(lines) >= 2:
        items = lines
    elif lines and (colon or _MARKER.search(lines[0])):
        items = _SPLIT.split(lines[0])
    else:
        items = []
    steps = tuple(s for s in (_clean(i) for i in items) if step_key(s))
    return (head, steps) if len(steps) >= 2 else ("", ())


@dataclass(frozen=True)
class EpisodeSteps:
    """What periodic consolidation reads off one active episode."""

    iri: URIRef
    occurred_at: datetime | None
    title: str
    head: str  # what the episode says before its steps (its title when nothing is)
    steps: tuple[str, ...]
    confidence: float
    domain: str | None
    evidence: tuple[EvidenceRecord, ...]

    @property
    def order(self) -> tuple[str, str]:
        """Oldest first; the IRI breaks ties."""
        when = self.occurred_at.isoformat() if self.occurred_at else ""
        return (when, str(self.iri))


def episode_steps(record: MemoryRecord) -> EpisodeSteps | None:
    """The steps an episode lists (first of body, excerpt, title), or None."""
    for text in (record.body, record.excerpt, record.title):
        head, steps = split_steps(text)
        if steps:
            return EpisodeSteps(
                record.iri,
                record.occurred_at,
                record.title,
                head or record.title,
                steps,
                record.confidence,
                record.domain,
                record.evidence,
            )
    return None


def _lcs(a: Sequence[str], b: Sequence[str]) -> list[str]:
    """A longest common subsequence of ``a`` and ``b`` by :func:`step_key`, worded as in ``a``."""
    ka, kb = [step_key(s) for s in a], [step_key(s) for s in b]
    table = [[0] * (len(kb) + 1) for _ in range(len(ka) + 1)]
    for i in range(len(ka) - 1, -1, -1):
        for j in range(len(kb) - 1, -1, -1):
            table[i][j] = (
                table[i + 1][j + 1] + 1 if ka[i] == kb[j] else max(table[i + 1][j], table[i][j + 1])
            )
    out, i, j = [], 0, 0
    while i < len(ka) and j < len(kb):
        if ka[i] == kb[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif table[i][j + 1] >= table[i + 1][j]:
            j += 1  # on a tie, keep a's earlier step in play
        else:
            i += 1
    return out


def common_steps(sequences: Iterable[Sequence[str]]) -> tuple[str, ...]:
    """The common ordered steps of ``sequences`` (oldest first), worded as the first words them.

    >>> common_steps([["tag", "build", "publish"], ["Tag", "test", "build", "publish"]])
    ('tag', 'build', 'publish')
    """
    running: list[str] | None = None
    for sequence in sequences:
        running = list(sequence) if running is None else _lcs(running, sequence)
    return tuple(running or ())


def trigger_phrase(heads: Sequence[str]) -> str | None:
    """The longest run of words every head shares, stopwords trimmed at its ends.

    >>> trigger_phrase(["Alice ran the release checklist", "Ran the release checklist again"])
    'ran the release checklist'
    """
    if not heads:
        return None
    words = [_WORD.findall(h) for h in heads]
    keys = [[w.casefold() for w in ws] for ws in words]
    first = keys[0]
    for size in range(len(first), 0, -1):
        for start in range(len(first) - size + 1):
            run = first[start : start + size]
            if all(_contains(other, run) for other in keys[1:]):
                phrase = _trim(words[0][start : start + size])
                if phrase:
                    return " ".join(phrase)
    return None


def _contains(words: Sequence[str], run: Sequence[str]) -> bool:
    size = len(run)
    return any(list(words[i : i + size]) == list(run) for i in range(len(words) - size + 1))


def _trim(words: Sequence[str]) -> list[str]:
    out = list(words)
    while out and out[0].casefold() in _STOP:
        out.pop(0)
    while out and out[-1].casefold() in _STOP:
        out.pop()
    return out


@dataclass(frozen=True, order=True)
class GroupKey:
    """What a group of episodes is about: an entity, or a claim's subject and predicate."""

    entity: URIRef
    predicate: URIRef | None = None


def order_groups(groups: Mapping[GroupKey, set[URIRef]]) -> list[GroupKey]:
    """Larger groups first, entity groups before claim patterns, then by IRI."""
    return sorted(
        groups,
        key=lambda k: (-len(groups[k]), k.predicate is not None, str(k.entity), str(k.predicate)),
    )


def routine_body(steps: Sequence[str], episodes: int) -> str:
    """A routine's body: its numbered steps and how many episodes showed them."""
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    return f"{numbered}\n\nSeen in {episodes} episodes."


def routine_draft(
    title: str,
    steps: Sequence[str],
    episodes: Sequence[EpisodeSteps],
    seen: int,
    triggers: Sequence[str] = (),
) -> DraftMemory:
    """The procedural draft for ``steps`` shared by ``episodes`` (``seen`` episodes in all):
    the steps and ``triggers`` as any procedure has them (cut to what a draft takes), their
    evidence as derived support, confidence no higher than theirs nor than derived support
    allows, their domain if they share one."""
    domains = {e.domain for e in episodes}
    return DraftMemory(
        kind=MemoryKind.PROCEDURAL,
        title=one_line(title, 200),
        excerpt=one_line(" \u2192 ".join(steps), 300),
        body=routine_body(steps, seen),
        tags=("routine",),
        confidence=min(DERIVED_CAP, *(e.confidence for e in episodes)),
        domain=domains.pop() if len(domains) == 1 else None,
        evidence=derived_evidence(item for e in episodes for item in e.evidence),
        steps=tuple(_cut(s, MAX_STEP_CHARS) for s in steps[:MAX_STEPS]),
        triggers=tuple(_cut(t, MAX_TRIGGER_CHARS) for t in triggers[:MAX_TRIGGERS]),
    )


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else one_line(text, limit)
