"""The prompt context: what kgmem pushes into every agent turn, small and capped.

Three sections, in this order of priority:

- **profile**: the account name and timezone (given by the host, else the name of the user's
  own entity) and the learned attributes and relations of that entity: the claims of active
  memories whose subject is the user, newest first, capped;
- **short memory**: the short notes ranked by time decay (the half-life, threshold and cap of
  :class:`~kgmem.memory.short_memory.ShortMemoryPolicy`, through
  :meth:`~kgmem.memory.sources.SourceStore.short_memory`);
- **playbook index**: playbook pages and active procedures without one, most used first,
  then most recent, capped.

Then the token budget (:mod:`kgmem.retrieval.context_budget`) keeps as many items as fit, in
that order. Whatever a cap or the budget leaves out is counted in the section's ``truncated``
and said by an explicit marker line, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TypeVar
from zoneinfo import ZoneInfo

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.memory.short_memory import ShortMemoryItem, ShortMemoryPolicy
from kgmem.memory.sources import SourceStore
from kgmem.retrieval.context_budget import SectionDraft, allocate
from kgmem.retrieval.context_model import (
    PlaybookSection,
    ProfileSection,
    PromptContextPacket,
    ShortMemorySection,
    note_line,
)
from kgmem.retrieval.context_read import ContextReader
from kgmem.retrieval.errors import InvalidSearch
from kgmem.store import QueryRegistry, TripleStore, UserGraphs

__all__ = ["MIN_BUDGET_TOKENS", "ContextLimits", "PromptContext"]

#: the least budget a prompt context takes: every heading, fixed line and marker fits in it
MIN_BUDGET_TOKENS = 200
_T = TypeVar("_T")
_EVERYTHING = 1 << 62  # a short-memory limit no user reaches: count every note over the cut


@dataclass(frozen=True)
class ContextLimits:
    """How much each section may carry, and the default budget of the whole context."""

    short_memory: ShortMemoryPolicy = field(default_factory=ShortMemoryPolicy)
    playbook_cap: int = 20
    profile_cap: int = 20
    budget_tokens: int = 2000

    def __post_init__(self) -> None:
        if self.playbook_cap < 0 or self.profile_cap < 0:
            raise ValueError("caps must be >= 0")
        if self.budget_tokens < MIN_BUDGET_TOKENS:
            raise ValueError(f"budget_tokens must be >= {MIN_BUDGET_TOKENS}")

    @classmethod
    def from_settings(cls, settings: Settings) -> ContextLimits:
        return cls(
            short_memory=ShortMemoryPolicy.from_settings(settings),
            playbook_cap=settings.playbook_index_cap,
            budget_tokens=settings.context_budget_tokens,
        )


def _text(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidSearch(name, type(value).__name__, f"the {name} is a string")
    return value.strip() or None


def _zone(name: str | None, now: datetime) -> datetime | None:
    """``now`` in zone ``name``; None for a name no timezone database knows."""
    if name is None:
        return None
    try:
        return now.astimezone(ZoneInfo(name))
    except (ValueError, LookupError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return None


class PromptContext:
    """Builds the prompt context of a user; one instance serves every user."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        clock: Clock,
        limits: ContextLimits | None = None,
        *,
        files: Callable[[str, str], str] | None = None,
    ) -> None:
        """``files(uid, path)``: the absolute path of the file of the page stored at
        ``path`` (the vault's), for the playbook index; None: the stored path is shown."""
        self._limits = limits or ContextLimits()
        self._clock = clock
        self._sources = SourceStore(store, queries, clock, policy=self._limits.short_memory)
        self._reader = ContextReader(store, queries, files)

    def prompt_context(
        self,
        uid: str,
        *,
        account_name: str | None = None,
        timezone: str | None = None,
        budget_tokens: int | None = None,
    ) -> PromptContextPacket:
        """The profile, short memory and playbook index of ``uid`` within ``budget_tokens``
        (default: the limits' budget), read from ``uid``'s graphs only.

        ``account_name`` and ``timezone`` come from the host; without an account name the
        name of the user's own entity is used. A timezone the timezone database knows also
        shows the user's local time.
        """
        UserGraphs(uid)  # a malformed uid is a GraphNameError before anything is read
        budget = self._budget(budget_tokens)
        account, zone = _text(account_name, "account_name"), _text(timezone, "timezone")
        now = self._clock.now()
        profile = ProfileSection(
            account_name=account or self._reader.own_name(uid),
            timezone=zone,
            local_time=_zone(zone, now),
            goes_by=self._reader.goes_by(uid),
        )
        facts, facts_cut = _capped(self._reader.profile_facts(uid), self._limits.profile_cap)
        notes, notes_cut = self._notes(uid, now)
        playbooks, books_cut = _capped(self._reader.playbooks(uid), self._limits.playbook_cap)
        shown = allocate(
            [
                _draft(ProfileSection, profile.head(), [f.line() for f in facts], facts_cut),
                _draft(ShortMemorySection, [], [note_line(n) for n in notes], notes_cut),
                _draft(PlaybookSection, [], [p.line() for p in playbooks], books_cut),
            ],
            budget,
        )
        return PromptContextPacket(
            uid=uid,
            generated_at=now,
            budget_tokens=budget,
            profile=replace(
                profile,
                items=tuple(facts[: shown[0]]),
                truncated=len(facts) - shown[0] + facts_cut,
            ),
            short_memory=ShortMemorySection(
                tuple(notes[: shown[1]]), len(notes) - shown[1] + notes_cut
            ),
            playbooks=PlaybookSection(
                tuple(playbooks[: shown[2]]), len(playbooks) - shown[2] + books_cut
            ),
        )

    def _budget(self, value: object) -> int:
        if value is None:
            return self._limits.budget_tokens
        if isinstance(value, bool) or not isinstance(value, int) or value < MIN_BUDGET_TOKENS:
            reason = f"the budget is a whole number of tokens >= {MIN_BUDGET_TOKENS}"
            raise InvalidSearch("budget_tokens", value, reason)
        return value

    def _notes(self, uid: str, now: datetime) -> tuple[list[ShortMemoryItem], int]:
        """The short notes the policy's cap keeps, and how many more are over the threshold."""
        cap = self._limits.short_memory.cap
        notes = self._sources.short_memory(uid, now, limit=cap + 1)
        if len(notes) <= cap:
            return notes, 0
        # rare: the cap cut something, so count exactly what (a wider read, same ranking)
        every = self._sources.short_memory(uid, now, limit=_EVERYTHING)
        return every[:cap], len(every) - cap


def _capped(items: list[_T], cap: int) -> tuple[list[_T], int]:
    """The first ``cap`` items, and how many the cap cut."""
    return items[:cap], max(len(items) - cap, 0)


def _draft(
    section: type[ProfileSection | ShortMemorySection | PlaybookSection],
    head: list[str],
    lines: list[str],
    capped: int,
) -> SectionDraft:
    """A section for the budget, with the marker its own ``lines()`` would render."""

    def marker(count: int) -> str:
        return section(truncated=count).lines()[-1]

    return SectionDraft((section.HEADING, *head), tuple(lines), capped, marker)
