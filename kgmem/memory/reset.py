"""Reset a user: forget what kgmem made of what they said, keep what they said; one commit.

What kgmem derived goes: the knowledge graph (memories, entities, facts, pages), the schema
delta, the quarantine, every consolidation proposal, and in ``ops`` the decisions, passes and
checkpoints. What the user and their agents handed over stays: the sources graph (chats, task
records, short and external notes) and, in ``ops``, the drafts queued for consolidation and the
user's preferences (review mode). No pass lists the sources any more, so every one of them
waits for consolidation again: the chats are rescheduled, the short notes are to be processed
again. The account and its keys stay. The drop is one changeset, so a reset is all or nothing;
the change feed sees it as a purge of the dropped graphs (see
:func:`kgmem.index.feed_outbox.purged_users`). The outbox is not dropped: it carries that
purge to the projections and empties itself once they have read it. A reset cannot be undone:
take a backup first (``kgmem backup``) when what was derived may be wanted again.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import URIRef

from kgmem.store import (
    Changeset,
    GraphKind,
    NodeKind,
    Quad,
    TripleStore,
    UserGraphs,
    node_iri,
    parse_graph,
)
from kgmem.vocab import KGM, RDF

__all__ = ["ResetReport", "reset_user", "user_graphs"]


@dataclass(frozen=True)
class ResetReport:
    uid: str
    graphs: tuple[str, ...]  # what was dropped
    triples: int  # how many triples they held
    sources: int = 0  # sources kept, each waiting for consolidation again
    queued: int = 0  # queued drafts kept


def user_graphs(store: TripleStore, uid: str) -> tuple[URIRef, ...]:
    """Every graph of ``uid`` in ``store`` but the outbox (proposals included), sorted."""
    owner = UserGraphs(uid)
    return tuple(
        sorted(
            g
            for g in store.graphs()
            if owner.owns(g) and parse_graph(g).kind is not GraphKind.OUTBOX
        )
    )


def reset_user(store: TripleStore, uid: str) -> ResetReport:
    """Drop what kgmem derived for ``uid`` and keep what was handed over (see the module
    docstring); what went and what waits again."""
    owner = UserGraphs(uid)
    graphs = tuple(g for g in user_graphs(store, uid) if g != owner.sources)
    kept = _kept_ops(store, uid)
    triples = sum(store.count(g) for g in graphs) - len(kept)
    if graphs:
        store.commit(Changeset.of(add=kept, drop_graphs=graphs))
    sources = {q.subject for q in store.quads(owner.sources, predicate=KGM.timestamp)}
    queued = {q.subject for q in kept if q.predicate == RDF.type}
    return ResetReport(uid, tuple(str(g) for g in graphs), triples, len(sources), len(queued))


def _kept_ops(store: TripleStore, uid: str) -> list[Quad]:
    """What of ``ops`` a reset keeps: the queued drafts and the preferences node."""
    ops = UserGraphs(uid).ops
    nodes = [q.subject for q in store.quads(ops, predicate=RDF.type, obj=KGM.QueuedDraft)]
    nodes.append(node_iri(uid, NodeKind.PREFERENCES, "write"))
    return [q for node in nodes for q in store.quads(ops, node)]
