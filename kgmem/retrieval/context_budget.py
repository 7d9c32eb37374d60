"""Fitting the prompt context's sections into a token budget, deterministically.

First every section that has anything to show reserves its heading, its fixed lines and the
marker it would need if it were cut (with the largest count it could say), so no section is
ever dropped silently. Then the sections take items in order — profile, short memory,
playbooks — each item in its own order, until the next one does not fit; the rest of that
section is cut and its marker says how many. A section shown in full gives its marker's
reservation back to the sections after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgmem.retrieval.context_model import line_tokens

__all__ = ["SectionDraft", "allocate"]


@dataclass(frozen=True)
class SectionDraft:
    """One section before the budget: its fixed lines (the heading first), the lines of its
    candidate items in order, how many items its cap already cut, and its marker line."""

    fixed: tuple[str, ...]
    items: tuple[str, ...]
    capped: int
    marker: Callable[[int], str]

    @property
    def present(self) -> bool:
        """Whether the section is shown at all (it has a fixed line, an item or a cut)."""
        return len(self.fixed) > 1 or bool(self.items) or self.capped > 0


def _cost(lines: Sequence[str]) -> int:
    return sum(line_tokens(line) for line in lines)


def allocate(sections: Sequence[SectionDraft], budget: int) -> list[int]:
    """How many candidate items of each section the budget holds, in section order.

    The rendered text (sections separated by one blank line) never costs more than
    ``budget`` unless the reservations alone do (the caller keeps the budget above that).
    """
    reserved: list[int] = []
    worst: list[int] = []
    seen = False
    for draft in sections:
        if not draft.present:
            reserved.append(0)
            worst.append(0)
            continue
        most = len(draft.items) + draft.capped  # the most the marker may have to say
        marker = line_tokens(draft.marker(most)) if most else 0
        separator = line_tokens("") if seen else 0
        reserved.append(separator + _cost(draft.fixed) + marker)
        worst.append(marker)
        seen = True
    pool = budget - sum(reserved)
    shown: list[int] = []
    for draft, marker in zip(sections, worst, strict=True):
        count = 0
        for index, line in enumerate(draft.items):
            last = index == len(draft.items) - 1 and draft.capped == 0
            cost = line_tokens(line)
            if cost > pool + (marker if last else 0):
                break
            pool -= cost
            count += 1
        cut = len(draft.items) - count + draft.capped
        pool += marker - (line_tokens(draft.marker(cut)) if cut else 0)
        shown.append(count)
    return shown
