"""Short notes as things of their own: listed, marked consolidated or not, and forgotten.

A short note (``memory_remember``) is a source the agent wrote, not yet a memory: it stays
*unconsolidated* until a consolidation pass takes it (it then lists it as a contribution,
and what the pass drew from it are memories citing it). Search finds it at once, context
packets show the unconsolidated ones apart from memories, and a person or agent may forget
one: its text is purged from the store (the projections follow through the outbox) and a
tombstone decision says that it happened, not what it said.

Forgetting a note that is evidence of memories is refused, naming them: their quotes are
the note's words, so forgetting the note alone would keep what it said. Forget those
memories first (each is purged with its quotes), then the note. A pass that read the note
keeps, once ended, the state of its last stage (what it dropped and why, with quotes): that
state goes with the note (:func:`read_by_passes`; forgetting a memory does the same for the
passes that read its sources), and while a pass that took the note is still under way the
note cannot be forgotten.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.errors import GraphNameError, LifecycleError, UnknownMemory
from kgmem.memory.decisions import Action, Decisions
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    parse_node,
)
from kgmem.vocab import KGM, RDF

__all__ = ["NoteListing", "ShortNotes", "is_short_note", "read_by_passes", "taken_notes"]

_ENDED = frozenset({KGM.passCommitted, KGM.passAbandoned})


@dataclass(frozen=True)
class NoteListing:
    """One short note as a list shows it."""

    iri: URIRef
    text: str
    timestamp: datetime
    chat: str | None
    consolidated: bool  # a consolidation pass has taken it


def is_short_note(uid: str, iri: URIRef | str) -> bool:
    """Whether ``iri`` names a short note of ``uid`` (by its form; it may not exist)."""
    try:
        owner, kind, _ = parse_node(str(iri))
    except GraphNameError:
        return False
    return owner == uid and kind is NodeKind.SHORT_NOTE


def taken_notes(store: TripleStore, uid: str, notes: Iterable[URIRef | str]) -> frozenset[str]:
    """Which of ``notes`` (sources of ``uid``) a consolidation pass has taken."""
    ops = UserGraphs(uid).ops
    return frozenset(
        str(n)
        for n in notes
        if _any(store.quads(ops, predicate=KGM.contribution, obj=URIRef(str(n))))
    )


def read_by_passes(
    store: TripleStore, uid: str, sources: Iterable[URIRef]
) -> tuple[list[Quad], list[URIRef]]:
    """What the passes that took ``sources`` keep of them: the saved states (payloads) of
    the ended ones, to purge with the sources, and the passes still under way."""
    ops = UserGraphs(uid).ops
    payloads: list[Quad] = []
    running: list[URIRef] = []
    for source in sources:
        for took in store.quads(ops, predicate=KGM.contribution, obj=source):
            run = took.subject
            if not isinstance(run, URIRef):
                continue
            if not {q.object for q in store.quads(ops, run, KGM.passStatus)} & _ENDED:
                running.append(run)
                continue
            for checkpoint in store.quads(ops, predicate=KGM.checkpointOf, obj=run):
                if isinstance(checkpoint.subject, URIRef):
                    payloads += store.quads(ops, checkpoint.subject, KGM.payload)
    return payloads, sorted(set(running))


class ShortNotes:
    """The short notes of each user: list, consolidated or not, forget."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, decisions: Decisions, clock: Clock
    ) -> None:
        self._store, self._decisions, self._clock = store, decisions, clock
        self._listing = queries["sources/short_note_listing"]

    def listing(
        self, uid: str, *, consolidated: bool | None = None, offset: int = 0, limit: int = 50
    ) -> tuple[list[NoteListing], int]:
        """The user's short notes, newest first (only consolidated or unconsolidated ones
        when ``consolidated`` says so), one page of them and how many there are in all."""
        graphs = UserGraphs(uid)
        rows = self._store.select(self._listing, {"sources": graphs.sources, "ops": graphs.ops})
        notes = []
        for row in rows:
            taken = row.get("taken")
            done = isinstance(taken, Literal) and bool(taken.toPython())
            stamp = row["timestamp"].toPython() if isinstance(row["timestamp"], Literal) else None
            if not isinstance(stamp, datetime) or consolidated not in (None, done):
                continue
            chat = str(row["chat"]) if "chat" in row else None
            notes.append(NoteListing(URIRef(str(row["note"])), str(row["text"]), stamp, chat, done))
        return notes[offset : offset + limit], len(notes)

    def cited_by(self, uid: str, note: URIRef) -> list[URIRef]:
        """The memories (in any standing graph) whose evidence quotes ``note``."""
        memories: set[URIRef] = set()
        for graph in UserGraphs(uid).standing:
            for cite in self._store.quads(graph, predicate=KGM.source, obj=note):
                for use in self._store.quads(graph, predicate=KGM.evidence, obj=cite.subject):
                    if isinstance(use.subject, URIRef):
                        memories.add(use.subject)
        return sorted(memories)

    def forget(self, uid: str, note: URIRef, actor: str) -> URIRef:
        """Purge the short note ``note``; returns the tombstone decision.

        Raises :class:`UnknownMemory` when the user has no such note, and
        :class:`LifecycleError` (naming them) when memories cite it as evidence.
        """
        graph = UserGraphs(uid).sources
        if not is_short_note(uid, note) or not _any(
            self._store.quads(graph, note, RDF.type, KGM.ShortNote)
        ):
            raise UnknownMemory(str(note), "no such short note for this user")
        with self._store.transaction() as tx:
            citing = self.cited_by(uid, note)
            if citing:
                raise LifecycleError(
                    str(note),
                    "it is evidence of "
                    + ", ".join(str(m) for m in citing)
                    + ": forget those memories first (their quotes are its words)",
                )
            payloads, running = read_by_passes(self._store, uid, [note])
            if running:
                raise LifecycleError(
                    str(note),
                    f"consolidation pass {running[0]} has taken it and is under way: "
                    "forget it once the pass ends",
                )
            links = [
                q for g in UserGraphs(uid).standing for q in self._store.quads(g, obj=note)
            ]  # source_refs naming it (derivedFrom): what they named is gone
            gone = [*self._store.quads(graph, note), *payloads, *links]
            tombstone = URIRef(f"urn:kgmem:forgotten:{sha256(str(note).encode()).hexdigest()}")
            _, quads = self._decisions.record(
                uid,
                Action.ERRONEOUS,
                tombstone,
                Changeset(),
                "forgotten: a short note purged on request",
                actor,
                self._clock.now(),
            )
            tx.remove(*gone)
            tx.add(*quads)
        return tombstone


def _any(found: Iterable[object]) -> bool:
    return next(iter(found), None) is not None
