"""record_outcome: after a task, the agent reports how the memories it was given performed.

Verdicts (:class:`~kgmem.memory.lifecycle.Verdict`), each a lifecycle outcome recorded as a
reversible decision: ``helpful`` (rated +1, confidence up, and it counts as a use: use
count and last use update, so a memory that keeps helping never goes stale), ``unused``
(strength down a little), ``misleading`` (confidence x0.85, counter-evidence recorded),
``outdated`` (the memory expires: status outdated, no longer valid from now).

All or nothing: every id is checked first (a memory of this user that exists; for
``outdated``, one that is active), and one bad id refuses the whole call before anything
changes. Ids of another user, of nothing, or of anything but a memory are refused alike
(:class:`~kgmem.errors.UnknownMemory`), so a refusal never tells whether someone else's id
exists. The lexical index is refreshed from the store afterwards, so the next search and
the next packet rank by the new values.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.errors import GraphNameError, LifecycleError, UnknownMemory
from kgmem.index.lexical import LexicalIndex
from kgmem.memory.lifecycle import Lifecycle, Verdict
from kgmem.memory.model import MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.retrieval.errors import InvalidSearch
from kgmem.store import NodeKind, UserGraphs, parse_node

__all__ = ["MemoryState", "OutcomeChange", "RecordedOutcome", "record_outcome"]

_MAX_ITEMS, _MAX_TASK = 100, 500


@dataclass(frozen=True)
class MemoryState:
    """What an outcome can change about a memory."""

    status: str
    confidence: float
    strength: float
    use_count: int

    @classmethod
    def of(cls, record: MemoryRecord) -> MemoryState:
        return cls(record.status.value, record.confidence, record.strength, record.use_count)


@dataclass(frozen=True)
class OutcomeChange:
    """One memory's outcome: the decision that recorded it, and the memory before and after."""

    id: str
    decision: str
    before: MemoryState
    after: MemoryState


@dataclass(frozen=True)
class RecordedOutcome:
    verdict: Verdict
    task: str
    changes: tuple[OutcomeChange, ...]


def record_outcome(
    lifecycle: Lifecycle,
    index: LexicalIndex,
    uid: str,
    items: Iterable[str],
    verdict: Verdict | str,
    task: str = "",
) -> RecordedOutcome:
    """Record ``verdict`` for each memory in ``items`` (see the module docstring)."""
    UserGraphs(uid)  # a malformed uid is a GraphNameError before anything is read
    judged, about = _verdict(verdict), _task(task)
    memories = _memories(uid, items)
    before = {m: lifecycle.get(uid, m) for m in memories}  # UnknownMemory: nothing changed
    if judged is Verdict.OUTDATED:
        for memory, record in before.items():
            if record.status is not MemoryStatus.ACTIVE:
                reason = f"only an active memory can be outdated; it is {record.status.value}"
                raise LifecycleError(str(memory), reason)
    changes = []
    for memory in memories:
        decision = lifecycle.outcome(uid, memory, judged, about)
        if judged is Verdict.HELPFUL:
            lifecycle.used(uid, [memory])
        after = MemoryState.of(lifecycle.get(uid, memory))
        changes.append(
            OutcomeChange(str(memory), str(decision), MemoryState.of(before[memory]), after)
        )
    index.refresh(uid, memories)
    return RecordedOutcome(judged, about, tuple(changes))


def _verdict(verdict: object) -> Verdict:
    if isinstance(verdict, str) and verdict in {v.value for v in Verdict}:
        return Verdict(verdict)
    raise InvalidSearch("verdict", verdict, f"one of {', '.join(Verdict)}")


def _task(task: object) -> str:
    if not isinstance(task, str) or len(task) > _MAX_TASK:
        raise InvalidSearch("task", task, f"the task is a string of at most {_MAX_TASK} chars")
    return task.strip()


def _memories(uid: str, items: Iterable[str]) -> list[URIRef]:
    """The distinct memory IRIs of ``items``, in order; refused unless each is one of
    ``uid``'s memory ids."""
    values = [items] if isinstance(items, str) else list(items)
    if not 1 <= len(values) <= _MAX_ITEMS:
        raise InvalidSearch("items", len(values), f"give 1 to {_MAX_ITEMS} memory ids")
    out: dict[URIRef, None] = {}
    for value in values:
        if not isinstance(value, str) or len(value) > 1000:
            raise UnknownMemory(str(value)[:100])
        try:
            owner, kind, _ = parse_node(value)
        except GraphNameError:
            raise UnknownMemory(value) from None
        if owner != uid or kind is not NodeKind.MEMORY:
            raise UnknownMemory(value)
        out[URIRef(value)] = None
    return list(out)
