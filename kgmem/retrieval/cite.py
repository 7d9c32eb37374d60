"""memory_cite: the agent used a memory or a page, so its use count goes up.

A memory goes through the lifecycle's own usage path (:meth:`Lifecycle.used`: strength rises,
use count and last use update, no decision is recorded); a page's ``kgm:useCount`` is bumped
by one commit, read and written under the store's write lock (a commit, not a named update:
the change feed sees it, so the projections and the user's stamp follow). Either way the
store changes first and the lexical index is refreshed from it. Ids of another user, of
nothing, or of anything else are refused alike, so a refusal never tells whether someone
else's id exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError, UnknownMemory
from kgmem.index.lexical import LexicalIndex
from kgmem.memory.lifecycle import Lifecycle
from kgmem.store import NodeKind, Quad, TripleStore, UserGraphs, parse_node
from kgmem.vocab import KGM, RDF

__all__ = ["Citation", "cite"]


@dataclass(frozen=True)
class Citation:
    """What memory_cite changed: the cited node and its use count now."""

    id: str
    kind: str  # "memory" | "page"
    use_count: int


def _node(uid: str, id: object) -> tuple[URIRef, NodeKind]:
    if not isinstance(id, str) or len(id) > 1000:
        raise UnknownMemory(str(id)[:100])
    try:
        owner, kind, _ = parse_node(id)
    except GraphNameError:
        raise UnknownMemory(id) from None
    if owner != uid:
        raise UnknownMemory(id)
    return URIRef(id), kind


def _count(value: object) -> int:
    number = value.toPython() if isinstance(value, Literal) else None
    return number if isinstance(number, int) else 0


def cite(
    store: TripleStore,
    index: LexicalIndex,
    lifecycle: Lifecycle,
    uid: str,
    id: str,
) -> Citation:
    graphs = UserGraphs(uid)
    node, kind = _node(uid, id)
    if kind is NodeKind.MEMORY:
        lifecycle.used(uid, [node])  # UnknownMemory when it is not this user's memory
        index.refresh(uid, [node])
        return Citation(id, "memory", lifecycle.get(uid, node).use_count)
    if kind is NodeKind.PAGE:
        if next(iter(store.quads(graphs.kg, node, RDF.type, KGM.Page)), None) is None:
            raise UnknownMemory(id, "no such page for this user")
        with store.transaction() as tx:
            old = list(store.quads(graphs.kg, node, KGM.useCount))
            count = 1 + max((_count(q.object) for q in old), default=0)
            tx.remove(*old)
            tx.add(Quad(node, KGM.useCount, Literal(count), graphs.kg))
        index.refresh(uid, [node])
        return Citation(id, "page", count)
    if kind is NodeKind.NOTE:
        raise UnknownMemory(id, "an external note is read-only: it has no use count")
    raise UnknownMemory(id, "only memories and pages can be cited")
