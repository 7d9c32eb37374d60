"""Strength and confidence over time: use and ratings strengthen, disuse decays.

Stored strength changes only on events (retrieval, rating, outcome); decay is applied when
strength is read, from the time of last use, so nothing needs rewriting as time passes.
Pinned memories never decay.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from kgmem.memory.records import MemoryRecord

__all__ = ["StrengthPolicy"]


@dataclass(frozen=True)
class StrengthPolicy:
    half_life_days: float = 30.0
    rating_step: float = 0.25
    use_step: float = 0.1
    ceiling: float = 5.0
    helpful_confidence_step: float = 0.05
    unused_penalty: float = 0.95
    misleading_factor: float = 0.85

    def current(self, record: MemoryRecord, now: datetime) -> float:
        """Strength now: stored strength, halved every ``half_life_days`` without use."""
        since = record.last_used_at or record.recorded_at
        idle = 0.0 if since is None else (now - since).total_seconds()  # None: unreadable
        return self.decayed(record.strength, record.pinned, idle)

    def decayed(self, strength: float, pinned: bool, idle_seconds: float) -> float:
        """:meth:`current` of a memory of stored ``strength`` last used (else recorded)
        ``idle_seconds`` ago: what search ranks by without building a record."""
        if pinned:
            return max(strength, 1.0)
        days = max(idle_seconds / 86400, 0.0)
        return float(strength * 0.5 ** (days / self.half_life_days))

    def _bounded(self, value: float) -> float:
        return round(min(max(value, 0.0), self.ceiling), 6)

    def used(self, record: MemoryRecord, now: datetime) -> MemoryRecord:
        return replace(
            record,
            strength=self._bounded(self.current(record, now) + self.use_step),
            last_used_at=now,
            use_count=record.use_count + 1,
        )

    def rated(self, record: MemoryRecord, delta: int) -> MemoryRecord:
        return replace(
            record,
            rating=record.rating + delta,
            strength=self._bounded(record.strength + delta * self.rating_step),
        )

    def helpful(self, record: MemoryRecord) -> MemoryRecord:
        rated = self.rated(record, 1)
        return replace(
            rated, confidence=round(min(1.0, record.confidence + self.helpful_confidence_step), 6)
        )

    def unused(self, record: MemoryRecord) -> MemoryRecord:
        return replace(record, strength=self._bounded(record.strength * self.unused_penalty))

    def misleading(self, record: MemoryRecord) -> MemoryRecord:
        return replace(record, confidence=round(record.confidence * self.misleading_factor, 6))
