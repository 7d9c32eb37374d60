"""Reset a user: drop everything kgmem holds for them, in one commit.

Every graph of the user goes (schema delta, knowledge, sources, quarantine, ops, every
consolidation proposal); their account and API keys stay, so the same key starts again from an
empty memory. The drop is one changeset, so a reset is all or nothing, and the change feed
sees it as a purge: the projections let go of every node of the user before the commit
returns (see :func:`kgmem.index.feed_outbox.purged_users`). The outbox is not dropped: it
carries that purge to the projections and empties itself once they have read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import URIRef

from kgmem.store import Changeset, GraphKind, TripleStore, UserGraphs, parse_graph

__all__ = ["ResetReport", "reset_user", "user_graphs"]


@dataclass(frozen=True)
class ResetReport:
    uid: str
    graphs: tuple[str, ...]  # what was dropped
    triples: int  # how many triples they held


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
    """Drop every graph of ``uid`` (see the module docstring); what went."""
    graphs = user_graphs(store, uid)
    triples = sum(store.count(g) for g in graphs)
    if graphs:
        store.commit(Changeset.of(drop_graphs=graphs))
    return ResetReport(uid, tuple(str(g) for g in graphs), triples)
