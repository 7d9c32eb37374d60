"""retrieve_memory: a context packet for a task, shaped by what the agent intends to do.

Candidates are the user's active memories that :meth:`MemorySearch.memory_search` finds for
the task (the ``k`` best, so archived, superseded, quarantined and other inactive memories
never appear). Each candidate's *applicability* is its search score times the weight of its
memory kind for the intent, from one table (:data:`INTENT_PROFILES`):

========  ========  ==========  ========  =========  =====  ========  =========  ========
intent    semantic  procedural  episodic  reference  facts  episodes  procedure  evidence
========  ========  ==========  ========  =========  =====  ========  =========  ========
execute   1.0       2.0         0.5       0.75       3      1         always     1
plan      1.0       1.5         1.0       0.75       5      3         always +2  1
answer    1.5       0.75        1.0       1.25       6      4         if top     2
verify    1.5       0.25        0.75      1.25       8      2         never      all
debug     0.75      1.25        1.5       0.5        2      5         always     2
========  ========  ==========  ========  =========  =====  ========  =========  ========

The packet has three sections, presented in the order of the highest weight of their kinds
for the intent (ties keep procedure, facts, episodes):

- ``facts``: semantic and reference memories, most applicable first, at most *facts*;
- ``procedure``: the one most applicable procedural memory. *always*: whenever there is
  one; *if top*: only when it is more applicable than every fact and episode (the question
  is a how-to); *never*: not at all. *+2*: plan also lists the next two procedures as
  ``alternatives``;
- ``episodes``: at most *episodes*, most applicable first; for debug, failures first (an
  episode whose evidence is a failed tool call or task), then the most recent.

Apart from the sections, ``notes`` holds at most :data:`PACKET_NOTES` short notes matching the
task that no consolidation pass has taken yet: what the agent wrote down, shown as such (no
evidence, no warnings), so a packet read minutes after ``memory_remember`` still has it.

Each item shows its strongest *evidence* items (all of them for verify), each with the
source kind, the exact quote, the support kind and a link to the source
(:mod:`kgmem.retrieval.packet_items`), and the packet carries the warnings about its items
(contradictions, low confidence, staleness, quarantined neighbours, earlier misleading
reports: :mod:`kgmem.retrieval.packet_warnings`). Ties break on the memory id, so the same
store and task always give the same packet. Reading a packet changes nothing;
:meth:`MemoryRetrieval.record_outcome` is how the agent reports what the memories did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from itertools import islice
from types import MappingProxyType

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.index.lexical import LexicalIndex
from kgmem.memory.lifecycle import Lifecycle, Verdict
from kgmem.memory.model import MemoryKind
from kgmem.retrieval.errors import InvalidSearch
from kgmem.retrieval.outcomes import RecordedOutcome, record_outcome
from kgmem.retrieval.packet_items import ItemReader, PacketItem
from kgmem.retrieval.packet_warnings import PacketWarning, WarningPolicy, WarningReader
from kgmem.retrieval.search import MemorySearch, SearchHit
from kgmem.store import QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = [
    "INTENT_PROFILES",
    "NOTE_CHARS",
    "PACKET_NOTES",
    "ContextPacket",
    "Intent",
    "IntentProfile",
    "MemoryRetrieval",
    "PacketNote",
    "ProcedureRule",
    "Section",
]


class Intent(StrEnum):
    """What the agent is about to do with the packet."""

    EXECUTE = "execute"  # carry out the task now
    PLAN = "plan"  # work out how to go about it
    ANSWER = "answer"  # answer a question
    VERIFY = "verify"  # check a claim
    DEBUG = "debug"  # find out what went wrong


class Section(StrEnum):
    PROCEDURE = "procedure"
    FACTS = "facts"
    EPISODES = "episodes"


class ProcedureRule(StrEnum):
    ALWAYS = "always"  # the best procedure, whenever there is one
    IF_TOP = "if_top"  # only when it is the most applicable candidate of all
    NEVER = "never"


_KINDS: Mapping[Section, tuple[MemoryKind, ...]] = MappingProxyType(
    {
        Section.PROCEDURE: (MemoryKind.PROCEDURAL,),
        Section.FACTS: (MemoryKind.SEMANTIC, MemoryKind.REFERENCE),
        Section.EPISODES: (MemoryKind.EPISODIC,),
    }
)


@dataclass(frozen=True)
class IntentProfile:
    """How one intent composes and ranks a packet (see the module docstring)."""

    weights: Mapping[MemoryKind, float]
    facts: int
    episodes: int
    procedure: ProcedureRule
    alternatives: int = 0
    evidence: int | None = 1  # evidence items shown per item; None: all
    failures_first: bool = False

    @property
    def sections(self) -> tuple[Section, ...]:
        """The sections, in the order of the highest weight of their kinds."""
        present = [s for s in Section if s is not Section.PROCEDURE or self.procedure is not _NEVER]
        return tuple(sorted(present, key=lambda s: -max(self.weights[k] for k in _KINDS[s])))


_ALWAYS, _IF_TOP, _NEVER = ProcedureRule.ALWAYS, ProcedureRule.IF_TOP, ProcedureRule.NEVER


def _weights(
    semantic: float, procedural: float, episodic: float, reference: float
) -> Mapping[MemoryKind, float]:
    return MappingProxyType(
        {
            MemoryKind.SEMANTIC: semantic,
            MemoryKind.PROCEDURAL: procedural,
            MemoryKind.EPISODIC: episodic,
            MemoryKind.REFERENCE: reference,
        }
    )


#: The one table of how each intent weighs memory kinds and composes its packet.
INTENT_PROFILES: Mapping[Intent, IntentProfile] = MappingProxyType(
    {
        Intent.EXECUTE: IntentProfile(_weights(1.0, 2.0, 0.5, 0.75), 3, 1, _ALWAYS),
        Intent.PLAN: IntentProfile(_weights(1.0, 1.5, 1.0, 0.75), 5, 3, _ALWAYS, alternatives=2),
        Intent.ANSWER: IntentProfile(_weights(1.5, 0.75, 1.0, 1.25), 6, 4, _IF_TOP, evidence=2),
        Intent.VERIFY: IntentProfile(_weights(1.5, 0.25, 0.75, 1.25), 8, 2, _NEVER, evidence=None),
        Intent.DEBUG: IntentProfile(
            _weights(0.75, 1.25, 1.5, 0.5), 2, 5, _ALWAYS, evidence=2, failures_first=True
        ),
    }
)


#: The unconsolidated short notes a packet shows at most, and the characters of each.
PACKET_NOTES = 3
NOTE_CHARS = 600


@dataclass(frozen=True)
class PacketNote:
    """A short note matching the task that no consolidation pass has taken yet: what the
    agent wrote, not a memory checked against its evidence."""

    id: str
    text: str  # at most NOTE_CHARS (get_note reads the whole note)
    timestamp: datetime | None
    score: float
    why: tuple[str, ...]


@dataclass(frozen=True)
class ContextPacket:
    """What kgmem knows that bears on ``task``, composed for ``intent``."""

    task: str
    intent: Intent
    sections: tuple[Section, ...]  # the order to present them in
    facts: tuple[PacketItem, ...] = ()
    procedure: PacketItem | None = None
    alternatives: tuple[PacketItem, ...] = ()  # the next-best procedures (plan)
    episodes: tuple[PacketItem, ...] = ()
    warnings: tuple[PacketWarning, ...] = ()
    notes: tuple[PacketNote, ...] = ()  # unconsolidated short notes, apart from memories

    @property
    def items(self) -> tuple[PacketItem, ...]:
        """Every item in section order (a procedure's alternatives right after it)."""
        out: list[PacketItem] = []
        for section in self.sections:
            if section is Section.PROCEDURE:
                out += [self.procedure, *self.alternatives] if self.procedure else []
            else:
                out += self.facts if section is Section.FACTS else self.episodes
        return tuple(out)


@dataclass(frozen=True)
class _Candidate:
    hit: SearchHit
    kind: MemoryKind
    score: float  # applicability: search score x kind weight


class MemoryRetrieval:
    """The agent tools ``retrieve_memory`` and ``record_outcome``."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        search: MemorySearch,
        lifecycle: Lifecycle,
        index: LexicalIndex,
        clock: Clock,
        *,
        warnings: WarningPolicy | None = None,
        profiles: Mapping[Intent, IntentProfile] | None = None,
        max_task_chars: int = 2000,
        max_k: int = 100,
    ) -> None:
        self._store, self._queries, self._search = store, queries, search
        self._lifecycle, self._index, self._clock = lifecycle, index, clock
        self._warnings = WarningReader(store, queries, warnings)
        self._profiles = profiles or INTENT_PROFILES
        self._max_chars, self._max_k = max_task_chars, max_k

    def retrieve_memory(
        self, uid: str, task: str, intent: Intent | str, *, k: int = 30
    ) -> ContextPacket:
        """The context packet of ``uid``'s memories for ``task`` and ``intent``, chosen from
        the ``k`` best search candidates (see the module docstring)."""
        UserGraphs(uid)  # a malformed uid is a GraphNameError before anything is read
        text, chosen, k = self._check_task(task), _check_intent(intent), self._check_k(k)
        profile = self._profiles[chosen]
        hits = self._search.memory_search(uid, text, k, kinds=["memory"])
        reader = ItemReader(self._store, self._queries, self._lifecycle)
        facts, procedures, episodes = _pick(reader, uid, profile, hits)

        def items(picked: Sequence[_Candidate]) -> tuple[PacketItem, ...]:
            return tuple(self._item(reader, uid, c, chosen, profile) for c in picked)

        packet = ContextPacket(
            task=text,
            intent=chosen,
            sections=profile.sections,
            facts=items(facts),
            procedure=items(procedures[:1])[0] if procedures else None,
            alternatives=items(procedures[1:]),
            episodes=items(episodes),
            notes=self._notes(uid, text),
        )
        now = self._clock.now()
        warnings = [
            w
            for item in packet.items
            if (read := reader.read(uid, item.id)) is not None
            for w in self._warnings.warnings(uid, read.record, now)
        ]
        return replace(packet, warnings=tuple(warnings))

    def record_outcome(
        self, uid: str, items: Iterable[str], verdict: Verdict | str, task: str = ""
    ) -> RecordedOutcome:
        """How the memories ``items`` performed for a task; see :func:`record_outcome`."""
        return record_outcome(self._lifecycle, self._index, uid, items, verdict, task)

    # -- the pieces ----------------------------------------------------------------------

    def _notes(self, uid: str, task: str) -> tuple[PacketNote, ...]:
        hits = self._search.memory_search(uid, task, 2 * PACKET_NOTES, kinds=["note"])
        sources, out = UserGraphs(uid).sources, []
        for hit in hits:
            if hit.consolidated is not False:  # an external note, or one a pass has taken
                continue
            facts = {q.predicate: q.object for q in self._store.quads(sources, URIRef(hit.id))}
            text, stamp = facts.get(KGM.text), facts.get(KGM.timestamp)
            if text is None:  # forgotten since the index read it
                continue
            when = stamp.toPython() if isinstance(stamp, Literal) else None
            shown = str(text) if len(text) <= NOTE_CHARS else f"{text[: NOTE_CHARS - 1]}…"
            timestamp = when if isinstance(when, datetime) else None
            out.append(PacketNote(hit.id, shown, timestamp, hit.score, hit.why))
            if len(out) == PACKET_NOTES:
                break
        return tuple(out)

    def _item(
        self,
        reader: ItemReader,
        uid: str,
        candidate: _Candidate,
        intent: Intent,
        profile: IntentProfile,
    ) -> PacketItem:
        read = reader.read(uid, candidate.hit.id)
        assert read is not None  # only live candidates are chosen
        weight = profile.weights[candidate.kind]
        why = (*candidate.hit.why, f"{candidate.kind.value} weighs {weight:g} to {intent.value}")
        if read.failure:
            why = (*why, "a failure")
        return reader.item(uid, read, candidate.score, why, profile.evidence)

    def _check_task(self, task: object) -> str:
        if not isinstance(task, str):
            raise InvalidSearch("task", type(task).__name__, "the task is a string")
        if len(task) > self._max_chars:
            raise InvalidSearch("task", task, f"at most {self._max_chars} characters")
        if not task.strip():
            raise InvalidSearch("task", task, "the task is empty")
        return task.strip()

    def _check_k(self, k: object) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self._max_k:
            raise InvalidSearch("k", k, f"k is a whole number from 1 to {self._max_k}")
        return k


def _check_intent(intent: object) -> Intent:
    if isinstance(intent, str) and intent in {i.value for i in Intent}:
        return Intent(intent)
    raise InvalidSearch("intent", intent, f"one of {', '.join(Intent)}")


def _pick(
    reader: ItemReader, uid: str, profile: IntentProfile, hits: Iterable[SearchHit]
) -> tuple[list[_Candidate], list[_Candidate], list[_Candidate]]:
    """The facts, the procedures (the best one, then its alternatives) and the episodes the
    intent shows, among the candidates whose memories are still active."""
    candidates = sorted(_candidates(hits, profile), key=lambda c: (-c.score, c.hit.id))

    def live(section: Section) -> Iterator[_Candidate]:
        return (
            c
            for c in candidates
            if c.kind in _KINDS[section] and reader.read(uid, c.hit.id) is not None
        )

    facts = list(islice(live(Section.FACTS), profile.facts))
    if profile.failures_first:  # every live episode is ranked, so read them all
        ordered = sorted(live(Section.EPISODES), key=lambda c: _failure_order(reader, uid, c))
        episodes = ordered[: profile.episodes]
    else:
        episodes = list(islice(live(Section.EPISODES), profile.episodes))
    procedures = list(islice(live(Section.PROCEDURE), 1 + profile.alternatives))
    return facts, _procedures(profile, procedures, facts + episodes), episodes


def _candidates(hits: Iterable[SearchHit], profile: IntentProfile) -> Iterator[_Candidate]:
    for hit in hits:
        if hit.kind == "memory" and hit.memory_kind is not None:
            kind = MemoryKind(hit.memory_kind)
            yield _Candidate(hit, kind, round(hit.score * profile.weights[kind], 6))


def _failure_order(reader: ItemReader, uid: str, c: _Candidate) -> tuple[bool, float, float, str]:
    """Failures first, then the most recent, then the most applicable."""
    read = reader.read(uid, c.hit.id)
    assert read is not None
    when = read.record.occurred_at or read.record.recorded_at
    return (not read.failure, -(when.timestamp() if when else 0.0), -c.score, c.hit.id)


def _procedures(
    profile: IntentProfile, procedures: list[_Candidate], others: Sequence[_Candidate]
) -> list[_Candidate]:
    """The best procedure and the alternatives the intent shows, by its procedure rule."""
    if not procedures or profile.procedure is _NEVER:
        return []
    best = procedures[0]
    if profile.procedure is _IF_TOP and any(o.score > best.score for o in others):
        return []
    return procedures[: 1 + profile.alternatives]
