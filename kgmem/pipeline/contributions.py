"""What consolidation consumes: conversation sources no pass has taken, and queued drafts.

A source (message, short note, task record) becomes a contribution of a pass once its chat
has been idle for the threshold (a chat still talking may yet correct itself), and only
when a model is configured: without one there is nothing to extract claims with, so raw
transcripts wait. A queued draft is an agent's structured memory handed to the background
instead of the foreground gate; it needs no model and is always ready. Once any pass lists
a contribution it is taken: recovery re-runs the same pass, it never re-queues it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import GraphNameError
from kgmem.memory.model import DraftMemory
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    new_node,
    parse_node,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Contributions", "PendingSource", "is_queued_draft"]


@dataclass(frozen=True)
class PendingSource:
    iri: URIRef
    chat: str | None
    at: datetime


def is_queued_draft(iri: URIRef | str) -> bool:
    try:
        return parse_node(str(iri))[1] is NodeKind.QUEUED_DRAFT
    except GraphNameError:
        return False


class Contributions:
    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    # -- queued drafts -----------------------------------------------------------------

    def queue_quads(self, uid: str, draft: DraftMemory, at: datetime) -> tuple[URIRef, list[Quad]]:
        """The node and quads of ``draft`` queued for consolidation (not yet written)."""
        ops, node = UserGraphs(uid).ops, new_node(uid, NodeKind.QUEUED_DRAFT)
        payload = json.dumps(draft.model_dump(mode="json"), sort_keys=True)
        return node, [
            Quad(node, RDF.type, KGM.QueuedDraft, ops),
            Quad(node, KGM.draftPayload, Literal(payload), ops),
            Quad(node, KGM.createdAt, Literal(at, datatype=XSD.dateTime), ops),
        ]

    def queue(self, uid: str, drafts: Iterable[DraftMemory], at: datetime) -> list[URIRef]:
        """Queue ``drafts`` (already parsed) in one commit; returns their nodes."""
        nodes: list[URIRef] = []
        quads: list[Quad] = []
        for draft in drafts:
            node, more = self.queue_quads(uid, draft, at)
            nodes.append(node)
            quads += more
        self._store.commit(Changeset.of(quads))
        return nodes

    def queued(self, uid: str, iris: Iterable[URIRef]) -> dict[URIRef, DraftMemory]:
        """The queued drafts among ``iris``, by node (unknown nodes are left out)."""
        ops = UserGraphs(uid).ops
        found: dict[URIRef, DraftMemory] = {}
        for iri in iris:
            for quad in self._store.quads(ops, iri, KGM.draftPayload):
                found[iri] = DraftMemory.model_validate_json(str(quad.object))
        return found

    # -- what is ready -----------------------------------------------------------------

    def exists(self, uid: str, contribution: URIRef) -> bool:
        """Whether ``contribution`` (a source, or a queued draft) is still stored."""
        graph = UserGraphs(uid).ops if is_queued_draft(contribution) else UserGraphs(uid).sources
        return next(iter(self._store.quads(graph, contribution)), None) is not None

    def pending_sources(self, uid: str) -> list[PendingSource]:
        graphs = UserGraphs(uid)
        rows = self._store.select(
            self._queries["pipeline/pending_sources"],
            {"sources": graphs.sources, "ops": graphs.ops},
        )
        out: list[PendingSource] = []
        for row in rows:
            source, at = row["source"], row["at"]
            if isinstance(source, URIRef) and isinstance(at, Literal):
                stamp = at.toPython()
                if isinstance(stamp, datetime):
                    chat = row.get("chat")
                    out.append(PendingSource(source, None if chat is None else str(chat), stamp))
        return out

    def pending_drafts(self, uid: str) -> list[URIRef]:
        rows = self._store.select(
            self._queries["pipeline/pending_drafts"], {"ops": UserGraphs(uid).ops}
        )
        return [d for r in rows if isinstance(d := r["draft"], URIRef)]

    def ready(self, uid: str, now: datetime, idle: timedelta, *, model: bool) -> list[URIRef]:
        """What a pass started now should cover: every queued draft, and (with a model) the
        sources of each conversation idle for ``idle``. Short notes and task records with no
        chat count as one conversation of their own."""
        ready = list(self.pending_drafts(uid))
        if not model:
            return ready
        by_chat: dict[str | None, list[PendingSource]] = {}
        for source in self.pending_sources(uid):
            by_chat.setdefault(source.chat, []).append(source)
        for sources in by_chat.values():
            if max(s.at for s in sources) <= now - idle:
                ready += [s.iri for s in sources]
        return ready

    def waiting(self, uid: str) -> Mapping[str, int]:
        """Counts of what has not been taken yet, for status: sources and queued drafts."""
        return {
            "sources": len(self.pending_sources(uid)),
            "drafts": len(self.pending_drafts(uid)),
        }
