"""The sources a user's memories are grounded in: ingest, read back, and short memory.

Sources live in the user's ``sources`` graph and are kept verbatim. Messages, task records and
external notes have ids derived from what identifies them (a chat and a turn, a task and the
position of a state change, a note path and revision), so ingesting the same thing twice
changes nothing, and sending something different under the same identity is refused with
:class:`~kgmem.errors.SourceConflict` before anything is written. Short notes get fresh ids.

A task is stored as one ``kgm:TaskRecord`` per state change (kgmem.ttl: a record is one
lifecycle event with exactly one state); the last one carries the result, which is appended
to its text so a claim can quote it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.errors import GraphNameError, SourceConflict
from kgmem.memory.model import SourceRecord, SourceType
from kgmem.memory.short_memory import (
    ShortMemoryItem,
    ShortMemoryPolicy,
    decay_score,
    rank_short_notes,
)
from kgmem.memory.source_inputs import (
    IngestResult,
    IngestStatus,
    MessageIn,
    NoteIn,
    ShortNoteIn,
    TaskIn,
)
from kgmem.memory.source_rdf import (
    Facts,
    content_hash,
    message_facts,
    message_type,
    note_facts,
    record_from_facts,
    short_note_facts,
    task_facts,
    to_quads,
)
from kgmem.progress import Progress, counted
from kgmem.store import (
    Changeset,
    Dataset,
    NodeKind,
    Quad,
    QueryRegistry,
    Term,
    Transaction,
    TripleStore,
    UserGraphs,
    message_node,
    new_node,
    parse_node,
    stable_node,
)
from kgmem.vocab import KGM, XSD

__all__ = ["SourceStore", "source_iri"]

_SOURCE_KINDS = frozenset({NodeKind.MESSAGE, NodeKind.TASK, NodeKind.NOTE, NodeKind.SHORT_NOTE})
_MESSAGE_TYPES = frozenset(
    {SourceType.USER_MESSAGE, SourceType.AGENT_MESSAGE, SourceType.TOOL_RESULT}
)
_SHOWN = 60  # characters of a differing value quoted in a conflict


@dataclass(frozen=True)
class _Planned:
    """One source to write: its facts, and the predicates a re-send may differ in."""

    iri: URIRef
    type: SourceType
    facts: Facts
    soft: frozenset[URIRef] = field(default_factory=frozenset)


def _same(a: Term | None, b: Term | None) -> bool:
    """Equal RDF values: ``...Z`` and ``...+00:00`` are the same instant."""
    if isinstance(a, Literal) and isinstance(b, Literal):
        kinds = {a.datatype or XSD.string, b.datatype or XSD.string}
        return len(kinds) == 1 and a.toPython() == b.toPython()
    return a == b


def _shown(value: Term | None) -> str:
    if value is None:
        return "nothing"
    text = str(value)
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN] + "...")


def _difference(stored: Mapping[URIRef, Term], wanted: _Planned) -> str | None:
    """Why ``wanted`` is not the stored source, or None when it is."""
    # The text first: it is what a conflicting re-send most often differs in.
    for predicate in sorted(set(stored) | set(wanted.facts), key=lambda p: (p != KGM.text, p)):
        if predicate in wanted.soft:
            continue
        old, new = stored.get(predicate), wanted.facts.get(predicate)
        if not _same(old, new):
            name = predicate.removeprefix(str(KGM))
            return f"{name} differs (stored {_shown(old)}, sent {_shown(new)})"
    return None


class SourceStore:
    """Ingest and read the sources of each user; one instance serves every user."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        clock: Clock,
        *,
        policy: ShortMemoryPolicy | None = None,
    ) -> None:
        self._store = store
        self._notes_query = queries["sources/short_notes"]
        self._clock = clock
        self._policy = policy or ShortMemoryPolicy()
        self._held = threading.local()  # this thread's records read once (see :meth:`once`)

    @contextmanager
    def once(self) -> Iterator[None]:
        """Within the block, this thread reads each source from the store once: a batch's
        drafts cite one chat, and each reads its turns around the message it cites (measured:
        ~55 records a draft, 14 ms of a 25-draft batch's 36 ms a draft). Only for a block
        that writes no source (the gate's batch): a record read is kept as it was."""
        outer = getattr(self._held, "records", None)
        if outer is None:
            self._held.records = {}
        try:
            yield
        finally:
            if outer is None:
                self._held.records = None

    # -- ingest ----------------------------------------------------------------------------

    def ingest_message(self, uid: str, msg: MessageIn) -> IngestResult:
        """Keep one message; ``unchanged`` when it is already stored exactly so."""
        return self.ingest_messages(uid, [msg])[0]

    def ingest_messages(
        self, uid: str, msgs: Iterable[MessageIn], progress: Progress | None = None
    ) -> tuple[IngestResult, ...]:
        """Keep a batch of messages in one commit: all of them, or (on a conflict) none.
        ``progress`` hears ``("messages", done, total)``, then ``("writing", 0, 0)``."""
        now = self._clock.now()
        told = counted(list(msgs), "messages", progress)
        return self._ingest(uid, [self._plan_message(uid, m, now) for m in told], progress)

    def ingest_note(self, uid: str, note: NoteIn) -> IngestResult:
        """Keep one revision of an external note."""
        return self.ingest_notes(uid, [note])[0]

    def ingest_notes(
        self, uid: str, notes: Iterable[NoteIn], progress: Progress | None = None
    ) -> tuple[IngestResult, ...]:
        """Keep a batch of note revisions in one commit: all of them or none. ``progress``
        hears ``("notes", done, total)``, then ``("writing", 0, 0)``."""
        now = self._clock.now()
        told = counted(list(notes), "notes", progress)
        return self._ingest(uid, [self._plan_note(uid, n, now) for n in told], progress)

    def ingest_task(self, uid: str, task: TaskIn) -> tuple[IngestResult, ...]:
        """Keep a task's state changes, one record each, appending those not yet stored.

        A stored state change never changes; a result may be reported once, later than its
        record, and never changes after that.
        """
        graph = UserGraphs(uid).sources
        results: list[IngestResult] = []
        with self._store.transaction() as tx:
            for index, iri in enumerate(task_record_iris(uid, task)):
                status = self._task_record(tx, graph, iri, task, index)
                results.append(IngestResult(iri, SourceType.TASK_RECORD, status))
        return tuple(results)

    def remember(self, uid: str, text: str, *, chat: str | None = None) -> SourceRecord:
        """Write a short note now (memory_remember): agent authority, a fresh id."""
        note = ShortNoteIn(text=text, chat=chat)
        iri = new_node(uid, NodeKind.SHORT_NOTE)
        facts = short_note_facts(note.text, note.chat, self._clock.now())
        self._store.commit(Changeset.of(to_quads(iri, UserGraphs(uid).sources, facts)))
        record = record_from_facts(iri, facts)
        assert record is not None  # the facts were just built as a short note
        return record

    # -- read --------------------------------------------------------------------------------

    def get(self, uid: str, ids: Iterable[str]) -> dict[str, SourceRecord]:
        """The user's sources among ``ids``; others' and unknown ids are absent.

        An id is a source IRI, or ``chat:<chat id>#<turn>`` for a first-hand chat message
        (what an agent knows without asking kgmem for IRIs).
        """
        graph = UserGraphs(uid).sources
        found: dict[str, SourceRecord] = {}
        for source_id in ids:
            iri = _message_ref(uid, source_id) or source_id
            if source_id in found or not _is_source_of(uid, iri):
                continue
            record = self._record(graph, URIRef(iri))
            if record is not None:
                found[source_id] = record
        return found

    def previous_message(self, uid: str, record: SourceRecord) -> SourceRecord | None:
        """The message just before ``record`` in its chat (what a user may be confirming)."""
        if record.type not in _MESSAGE_TYPES or record.chat is None or not record.turn:
            return None
        iri = str(message_node(uid, record.chat, record.turn - 1))
        return self.get(uid, [iri]).get(iri)

    def history(
        self, uid: str, record: SourceRecord, before: int, after: int
    ) -> tuple[SourceRecord, ...]:
        """``record``'s chat around it, in turn order: at most ``before`` messages before
        it, ``record`` itself, at most ``after`` after it. What its pronouns and first
        names may refer to, and who its speaker said they are."""
        if record.type not in _MESSAGE_TYPES or record.chat is None or record.turn is None:
            return (record,)
        turns = range(max(0, record.turn - before), record.turn + after + 1)
        iris = [str(message_node(uid, record.chat, t)) for t in turns]
        found = self.get(uid, iris)
        return tuple(record if i == str(record.iri) else found[i] for i in iris if i in found)

    def short_memory(
        self,
        uid: str,
        now: datetime | None = None,
        limit: int | None = None,
        threshold: float | None = None,
    ) -> list[ShortMemoryItem]:
        """Short notes by time decay, at or above ``threshold``, at most ``limit``.

        Notes written after ``now`` are left out (``now`` may lie in the past for a replay;
        a naive ``now`` is taken as UTC).
        """
        at = now or self._clock.now()
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        cut = self._policy.threshold if threshold is None else threshold
        cap = self._policy.cap if limit is None else limit
        if not 0 < cut <= 1:
            raise ValueError("threshold must be in (0, 1]")
        horizon = self._policy.horizon(cut)
        # The score falls with age, so the top ``cap`` are the newest ``cap``: read a short
        # window first and widen it only while it holds fewer (most calls read one window).
        window = horizon / 4
        while True:
            items = self._notes_between(uid, at - window - timedelta(seconds=1), at)
            if len(items) >= cap or window >= horizon:
                return rank_short_notes(items, limit=cap, threshold=cut)
            window = min(window * 2, horizon)

    def _notes_between(self, uid: str, since: datetime, until: datetime) -> list[ShortMemoryItem]:
        rows = self._store.select(
            self._notes_query,
            {"since": Literal(since), "until": Literal(until)},
            dataset=Dataset(default=(UserGraphs(uid).sources,)),
        )
        items = []
        for row in rows:
            stamp = row["timestamp"]
            timestamp = stamp.toPython() if isinstance(stamp, Literal) else None
            if not isinstance(timestamp, datetime):
                continue
            score = decay_score(timestamp, until, self._policy.half_life_days)
            chat = str(row["chat"]) if "chat" in row else None
            iri = URIRef(str(row["note"]))
            items.append(ShortMemoryItem(iri, str(row["text"]), timestamp, score, chat))
        return items

    # -- internals ---------------------------------------------------------------------------

    def _record(self, graph: URIRef, iri: URIRef) -> SourceRecord | None:
        held: dict[URIRef, SourceRecord | None] | None = getattr(self._held, "records", None)
        if held is None:
            return record_from_facts(iri, self._facts(graph, iri))
        if iri not in held:
            held[iri] = record_from_facts(iri, self._facts(graph, iri))
        return held[iri]

    def _facts(self, graph: URIRef, iri: URIRef) -> dict[URIRef, Term]:
        """Every fact of one source in ``graph``: an index lookup of the store port, not a
        query (measured: 25 sources in ~2.0 ms against ~3.6 ms with one bound SELECT each,
        on 100k messages; see benchmarks/sources.py). Scoped to the user's graph by
        construction, so another user's source is never read."""
        return {quad.predicate: quad.object for quad in self._store.quads(graph, iri)}

    def _plan_message(self, uid: str, msg: MessageIn, now: datetime) -> _Planned:
        iri = source_iri(uid, msg)
        soft = frozenset() if msg.timestamp else frozenset({KGM.timestamp})
        source_type = message_type(msg.role)
        return _Planned(iri, source_type, message_facts(msg, msg.timestamp or now), soft)

    def _plan_note(self, uid: str, note: NoteIn, now: datetime) -> _Planned:
        iri = source_iri(uid, note)
        soft = frozenset() if note.timestamp else frozenset({KGM.timestamp})
        facts = note_facts(note, note.timestamp or now)
        return _Planned(iri, SourceType.EXTERNAL_NOTE, facts, soft)

    def _ingest(
        self, uid: str, planned: list[_Planned], progress: Progress | None = None
    ) -> tuple[IngestResult, ...]:
        graph = UserGraphs(uid).sources
        if progress is not None:  # checked against the store and committed: one step
            progress("writing", 0, 0)
        if (held := getattr(self._held, "records", None)) is not None:
            held.clear()  # a source the gate keeps for a draft (``reported``) is read anew
        seen: dict[URIRef, Facts] = {}
        results: list[IngestResult] = []
        with self._store.transaction() as tx:
            for item in planned:
                stored = seen.get(item.iri)
                if stored is None:
                    stored = self._facts(graph, item.iri)
                status = IngestStatus.UNCHANGED
                if not stored:
                    tx.add(*to_quads(item.iri, graph, item.facts))
                    stored, status = item.facts, IngestStatus.CREATED
                else:
                    _refuse_if_different(stored, item)
                seen[item.iri] = stored
                results.append(IngestResult(item.iri, item.type, status))
        return tuple(results)

    def _task_record(
        self, tx: Transaction, graph: URIRef, iri: URIRef, task: TaskIn, index: int
    ) -> IngestStatus:
        stored = self._facts(graph, iri)
        sent = task.result if index == task.result_index else None
        kept = stored.get(KGM.result)
        result = sent if sent is not None else (None if kept is None else str(kept))
        wanted = _Planned(iri, SourceType.TASK_RECORD, task_facts(task, index, result))
        if not stored:
            tx.add(*to_quads(iri, graph, wanted.facts))
            return IngestStatus.CREATED
        if kept is not None or result is None:
            _refuse_if_different(stored, wanted)
            return IngestStatus.UNCHANGED
        # The result is reported for the first time: the record is otherwise unchanged.
        _refuse_if_different(stored, _Planned(iri, wanted.type, task_facts(task, index, None)))
        tx.remove(Quad(iri, KGM.text, stored[KGM.text], graph))
        tx.add(Quad(iri, KGM.text, wanted.facts[KGM.text], graph))
        tx.add(Quad(iri, KGM.result, wanted.facts[KGM.result], graph))
        return IngestStatus.UPDATED


def _message_ref(uid: str, ref: str) -> str | None:
    """``chat:c1#3`` → the IRI of turn 3 of chat c1; None for anything else."""
    if not ref.startswith("chat:"):
        return None
    chat, _, turn = ref[len("chat:") :].rpartition("#")
    if not chat or not turn.isdigit():
        return None
    return str(message_node(uid, chat, int(turn)))


def source_iri(uid: str, source: MessageIn | NoteIn) -> URIRef:
    """The stable IRI a message (chat, turn) or a note revision (path, revision) is kept at.

    An agent-reported message has an id of its own; a note without a revision number is
    identified by the SHA-256 of its text.
    """
    if isinstance(source, MessageIn):
        return message_node(uid, source.chat, source.turn, reported=source.agent_reported)
    revision = str(source.revision) if source.revision else content_hash(source.text)
    return stable_node(uid, NodeKind.NOTE, source.path, revision)


def task_record_iris(uid: str, task: TaskIn) -> list[URIRef]:
    """The stable IRIs a task's state changes are kept at, in time order."""
    return [stable_node(uid, NodeKind.TASK, task.task_id, str(i)) for i in range(len(task.states))]


def _refuse_if_different(stored: Mapping[URIRef, Term], wanted: _Planned) -> None:
    reason = _difference(stored, wanted)
    if reason is not None:
        raise SourceConflict(str(wanted.iri), reason)


def _is_source_of(uid: str, source_id: str) -> bool:
    try:
        owner, kind, _ = parse_node(source_id)
    except GraphNameError:
        return False
    return owner == uid and kind in _SOURCE_KINDS
