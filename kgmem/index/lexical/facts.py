"""What ranking and filtering need of each document of a shard, as columns over its slots,
so a search can bound a candidate's final score, or refuse it, without reading it.

A row per slot (:data:`FACTS`): its form (kind, memory kind, status) and its chat as codes
into small tables, and the numbers the priors are made of (times as POSIX seconds, NaN for
none). Rows are written once, when a document takes its slot (a changed document takes a new
one), so a query's :class:`FactsView` (the rows up to the slots it was scored against) stays
true while the shard grows: an append past the array's room moves the rows to a larger array
and leaves the old one to the views that hold it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pickle import PickleBuffer
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["ANY_FORM", "CHATS", "FACTS", "NO_CHAT", "Fact", "Facts", "FactsView", "Form"]

Form = tuple[str, str | None, str | None]  # a document's kind, memory kind and status
ANY_FORM = 255  # the code of a slot whose form has none of its own: always walked
NO_CHAT, CHATS = -1, -2  # a document quoting no chat, or several
FACTS = np.dtype(
    [
        ("form", "u1"),
        ("pinned", "u1"),
        ("states", "u1"),  # its own text says when
        ("decays", "u1"),  # a memory with a strength that decays (not a page or a note)
        ("period", "u1"),  # it has a validity period (a start or an end)
        ("chat", "<i4"),
        ("use", "<f8"),
        ("confidence", "<f8"),
        ("strength", "<f8"),
        ("recorded", "<f8"),
        ("used", "<f8"),
        ("occurred", "<f8"),
    ]
)
_ROOM = 1024
_MASKS = 8  # sets of refused forms whose masks are kept


@dataclass(frozen=True)
class Fact:
    """One document's row, as :meth:`Facts.append` takes it."""

    form: Form
    chats: tuple[str, ...]
    pinned: bool
    states: bool
    decays: bool
    period: bool
    use: int
    confidence: float | None
    strength: float | None
    recorded: datetime | None
    used: datetime | None
    occurred: datetime | None


@dataclass(frozen=True)
class FactsView:
    """The rows of the slots a query was scored against, with the form and chat tables."""

    rows: NDArray[Any]
    forms: tuple[Form, ...]
    chats: list[str]  # appended to only: codes below len(chats) at the view's time hold
    admitting: Callable[[tuple[int, ...]], NDArray[np.bool_]]  # see admitted

    def admitted(self, refused: Iterable[int]) -> NDArray[np.bool_]:
        """Whether each row's form is none of the ``refused`` codes: kept by the facts
        the view was taken of, per set of codes, and extended as rows are appended (the
        form is a field of the rows: reading the whole column took 3.4 ms a search at a
        million slots, where the kept mask is multiplied in in 0.4)."""
        return self.admitting(tuple(sorted(set(refused))))


class Facts:
    """The rows of a shard's slots (see the module)."""

    def __init__(self) -> None:
        self._rows = np.zeros(0, dtype=FACTS)
        self._n = 0
        self.forms: list[Form] = []
        self.chats: list[str] = []
        self._form_codes: dict[Form, int] = {}
        self._chat_codes: dict[str, int] = {}
        # refused form codes -> (generation, whether each row's form is none of them);
        # a compaction renumbers the rows and starts a new generation
        self._admitted: dict[tuple[int, ...], tuple[int, NDArray[np.bool_]]] = {}
        self._generation = 0

    def __len__(self) -> int:
        return self._n

    def __getstate__(self) -> dict[str, object]:
        return {
            "rows": PickleBuffer(self._rows[: self._n].tobytes()),
            "forms": self.forms,
            "chats": self.chats,
        }

    def __setstate__(self, state: dict[str, object]) -> None:
        rows, forms, chats = (state.get(k) for k in ("rows", "forms", "chats"))
        if not (
            isinstance(rows, bytes | memoryview)
            and isinstance(forms, list)
            and all(isinstance(f, tuple) and len(f) == 3 for f in forms)
            and isinstance(chats, list)
            and set(map(type, chats)) <= {str}
            and len(rows) % FACTS.itemsize == 0
        ):
            raise TypeError("not a shard's facts")
        self._rows = np.frombuffer(rows, dtype=FACTS)  # read only: an append moves them
        self._n = len(self._rows)
        codes, chat = self._rows["form"], self._rows["chat"]
        if self._n and not (
            bool(np.all((codes < len(forms)) | (codes == ANY_FORM)))
            and int(chat.min()) >= CHATS
            and int(chat.max()) < len(chats)
        ):
            raise ValueError("a shard's facts do not add up")
        self.forms, self.chats = forms, chats
        self._admitted, self._generation = {}, 0
        self._form_codes = {f: n for n, f in enumerate(forms)}
        self._chat_codes = {c: n for n, c in enumerate(chats)}

    def append(self, fact: Fact) -> None:
        if self._n == len(self._rows):
            grown = np.zeros(max(_ROOM, 2 * self._n), dtype=FACTS)
            grown[: self._n] = self._rows[: self._n]
            self._rows = grown
        form = self._form_codes.get(fact.form)
        if form is None and len(self.forms) < ANY_FORM:
            form = self._form_codes[fact.form] = len(self.forms)
            self.forms.append(fact.form)
        if len(fact.chats) == 1:
            chat = self._chat_codes.get(fact.chats[0])
            if chat is None:
                chat = self._chat_codes[fact.chats[0]] = len(self.chats)
                self.chats.append(fact.chats[0])
        else:
            chat = CHATS if fact.chats else NO_CHAT
        self._rows[self._n] = (
            ANY_FORM if form is None else form,
            fact.pinned,
            fact.states,
            fact.decays,
            fact.period,
            chat,
            fact.use,
            _number(fact.confidence),
            _number(fact.strength),
            _seconds(fact.recorded),
            _seconds(fact.used),
            _seconds(fact.occurred),
        )
        self._n += 1

    def keep(self, alive: NDArray[np.bool_]) -> None:
        """Keep the rows of the ``alive`` slots only (the slots were renumbered)."""
        self._rows = self._rows[: self._n][alive].copy()
        self._n = len(self._rows)
        self._admitted, self._generation = {}, self._generation + 1

    def view(self) -> FactsView:
        rows = self._rows[: self._n]
        admitting = functools.partial(self._admitting, self._generation, rows)
        return FactsView(rows, tuple(self.forms), self.chats, admitting)

    def _admitting(
        self, generation: int, rows: NDArray[Any], refused: tuple[int, ...]
    ) -> NDArray[np.bool_]:
        """:meth:`FactsView.admitted` of a view of ``rows`` taken at ``generation``: rows
        are written once, so a mask kept for more rows holds for fewer, and one kept for
        fewer is extended by the rows appended since."""
        n = len(rows)
        if generation != self._generation:  # renumbered since the view was taken
            return ~np.isin(rows["form"], refused)
        held = self._admitted.get(refused)
        mask = held[1] if held is not None and held[0] == generation else None
        if mask is None or len(mask) < n:
            done = 0 if mask is None else len(mask)
            fresh = ~np.isin(rows["form"][done:], refused)
            mask = fresh if mask is None else np.concatenate([mask, fresh])
            if len(self._admitted) >= _MASKS:
                self._admitted.clear()
            self._admitted[refused] = (generation, mask)
        return mask[:n]


def _number(value: float | None) -> float:
    return math.nan if value is None else float(value)


def _seconds(at: datetime | None) -> float:
    return math.nan if at is None else at.timestamp()
