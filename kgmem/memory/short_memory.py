"""Short memory: the short notes pushed into every prompt, ranked by time decay.

A note's score halves every half-life: ``score = 0.5 ** (age_days / half_life_days)``. Notes
below the threshold leave the context; the rest are capped, highest score (newest) first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from rdflib import URIRef

if TYPE_CHECKING:
    from kgmem.config import Settings

__all__ = ["ShortMemoryItem", "ShortMemoryPolicy", "decay_score", "rank_short_notes"]

_DAY = 86400.0


@dataclass(frozen=True)
class ShortMemoryPolicy:
    """How short memory decays and how much of it reaches the prompt."""

    half_life_days: float = 14.0
    threshold: float = 0.1
    cap: int = 20

    def __post_init__(self) -> None:
        if self.half_life_days <= 0:
            raise ValueError("half_life_days must be positive")
        if not 0 < self.threshold <= 1:
            raise ValueError("threshold must be in (0, 1]")
        if self.cap < 0:
            raise ValueError("cap must be >= 0")

    @classmethod
    def from_settings(cls, settings: Settings) -> ShortMemoryPolicy:
        return cls(
            half_life_days=settings.short_memory_half_life_days,
            threshold=settings.short_memory_threshold,
            cap=settings.short_memory_cap,
        )

    def horizon(self, threshold: float | None = None) -> timedelta:
        """The age at which a note's score falls to ``threshold``: older notes are out."""
        limit = self.threshold if threshold is None else threshold
        return timedelta(days=self.half_life_days * math.log2(1 / limit))


@dataclass(frozen=True)
class ShortMemoryItem:
    iri: URIRef
    text: str
    timestamp: datetime
    score: float
    chat: str | None = None


def decay_score(timestamp: datetime, now: datetime, half_life_days: float) -> float:
    """1.0 for a note written now, 0.5 one half-life later; a note from the future counts as new.

    >>> from datetime import UTC
    >>> decay_score(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 15, tzinfo=UTC), 14)
    0.5
    """
    age_days = max((now - timestamp).total_seconds(), 0.0) / _DAY
    return float(0.5 ** (age_days / half_life_days))


def rank_short_notes(
    notes: Iterable[ShortMemoryItem], *, limit: int, threshold: float
) -> list[ShortMemoryItem]:
    """Keep scores >= ``threshold``, highest first, newest first among equals, at most ``limit``."""
    kept = [note for note in notes if note.score >= threshold]
    kept.sort(key=lambda n: (-n.score, -n.timestamp.timestamp(), str(n.iri)))
    return kept[: max(limit, 0)]
