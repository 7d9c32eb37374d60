"""BM25 over a user's chats as wholes: what :class:`~kgmem.index.lexical.shard.Shard` keeps
beside its documents so a query can tell which conversation it is about."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TypeVar, overload

import numpy as np

from kgmem.index.lexical.arrays import Counted, Floats, Packed, Slotted, unpacked

__all__ = ["ChatMatch", "Conversations"]

_T = TypeVar("_T")
_K1, _B = 1.2, 0.75  # BM25 (documents: kgmem.index.lexical.arrays)


class Conversations:
    """BM25 over whole chats: each chat is the sum of the memories quoting its messages, so
    a query can tell which conversation it is about even when no single memory holds all
    its words. Kept incrementally (a chat may have thousands of memories); a term's postings
    become arrays over chat slots when a query reads them, until they change.

    Saved as :class:`~kgmem.index.lexical.arrays.Postings` are (every term's chat slots and
    frequencies in two arrays); a loaded term is made a dictionary when a change reaches it."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[str, int]] = {}  # term -> chat -> weighted tf
        self.lengths: dict[str, int] = defaultdict(int)
        self.members: dict[str, int] = defaultdict(int)
        self._total = 0
        self._slot: dict[str, int] = {}  # chat -> slot (a chat keeps its slot once seen)
        self._chats: list[str] = []
        self._arrays: dict[str, tuple[Slotted, Counted]] = {}
        self._norms: Floats | None = None
        self._packed = Packed()  # as loaded

    def __getstate__(self) -> dict[str, object]:
        terms = [*self._packed, *self.postings]
        postings = [self._postings(t) for t in terms]
        self._arrays = {}
        state = {**self.__dict__, "_arrays": {}, "_norms": None}
        del state["postings"], state["_packed"]
        return {**state, **Packed.pack(terms, postings)}

    def __setstate__(self, state: dict[str, object]) -> None:
        self._packed, _ = unpacked(state)
        for name in ("terms", "ends", "slots", "tfs"):
            del state[name]
        self.__dict__.update(state)
        self.postings = {}
        if len(self._packed.slots) and not (
            0 <= self._packed.slots.min() <= self._packed.slots.max() < len(self._chats)
        ):
            raise ValueError("a shard's chats do not add up")

    def _posting(self, term: str) -> dict[str, int]:
        """``term``'s postings as a dictionary to change (made from the packed arrays)."""
        packed = self._packed.pop(term)
        if packed is not None:
            chats = self._chats
            slots, tfs = packed[0].tolist(), packed[1].tolist()
            self.postings[term] = {chats[s]: int(tf) for s, tf in zip(slots, tfs, strict=True)}
        return self.postings.setdefault(term, {})

    def add(self, chats: Iterable[str], counts: Mapping[str, int]) -> None:
        for chat in chats:
            if chat not in self._slot:
                self._slot[chat] = len(self._chats)
                self._chats.append(chat)
            self.members[chat] += 1
            for term, tf in counts.items():
                posting = self._posting(term)
                posting[chat] = posting.get(chat, 0) + tf
                self.lengths[chat] += tf
                self._total += tf
                self._arrays.pop(term, None)
            self._norms = None

    def remove(self, chats: Iterable[str], counts: Mapping[str, int]) -> None:
        for chat in chats:
            for term, tf in counts.items():
                posting = self._posting(term)
                posting[chat] -= tf
                if not posting[chat]:
                    del posting[chat]
                    if not posting:
                        del self.postings[term]
                self.lengths[chat] -= tf
                self._total -= tf
                self._arrays.pop(term, None)
            self.members[chat] -= 1
            if not self.members[chat]:
                del self.members[chat], self.lengths[chat]
            self._norms = None

    def score(self, terms: Iterable[str]) -> ChatMatch:
        """BM25 of every chat matching any of ``terms``, divided by the best (0..1]."""
        n = len(self.lengths)
        if not n:
            return ChatMatch(np.zeros(0), self._slot, self._chats)
        norms = self._chat_norms(max(self._total / n, 1.0))
        acc = np.zeros(len(self._chats), dtype=np.float64)
        for term in set(terms):
            if term not in self.postings and term not in self._packed:
                continue
            slots, tfs = self._postings(term)
            weight = math.log(1 + (n - len(slots) + 0.5) / (len(slots) + 0.5)) * (_K1 + 1)
            acc[slots] += weight * tfs / (tfs + norms[slots])
        best = acc.max() if len(acc) else 0.0
        return ChatMatch(acc / best if best else acc, self._slot, self._chats)

    def _postings(self, term: str) -> tuple[Slotted, Counted]:
        if term not in self._arrays:
            found = self._packed.get(term)
            if found is None:
                posting = self.postings[term]
                slots = np.fromiter((self._slot[c] for c in posting), np.int64, len(posting))
                tfs = np.fromiter(posting.values(), np.float64, len(posting))
                found = (slots, tfs)
            self._arrays[term] = found
        return self._arrays[term]

    def _chat_norms(self, average: float) -> Floats:
        if self._norms is None:
            lengths = np.array([self.lengths.get(c, 0) for c in self._chats], dtype=np.float64)
            self._norms = _K1 * (1 - _B + _B * lengths / average)
        return self._norms


class ChatMatch(Mapping[str, float]):
    """How well each chat matches a query, relative to the best chat (0..1]; a chat that
    does not match is not in it. Read chat by chat from the scores over the chats' slots,
    not made into a dictionary: a common word matches most of a user's chats (25,000 at a
    million memories, 3 ms a query as a dictionary). A chat seen after the query is not in it.
    """

    def __init__(self, values: Floats, slots: Mapping[str, int], chats: Sequence[str]) -> None:
        self._values, self._slots, self._chats = values, slots, chats

    @overload
    def get(self, chat: str, /) -> float | None: ...

    @overload
    def get(self, chat: str, /, default: float | _T) -> float | _T: ...

    def get(self, chat: str, /, default: object = None) -> object:
        slot = self._slots.get(chat)
        if slot is None or slot >= len(self._values) or not self._values[slot]:
            return default
        return float(self._values[slot])

    def __getitem__(self, chat: str) -> float:
        slot = self._slots.get(chat)
        if slot is None or slot >= len(self._values) or not self._values[slot]:
            raise KeyError(chat)
        return float(self._values[slot])

    def __len__(self) -> int:
        return int(np.count_nonzero(self._values > 0))

    def __iter__(self) -> Iterator[str]:
        return (self._chats[s] for s in np.flatnonzero(self._values > 0).tolist())
