"""What a draft's ``source_refs`` name: memories and documents of the user become
``kgm:derivedFrom`` edges, web addresses stay locators, anything else is refused.

A ref is a memory's IRI or short id (any status: what it was derived from may have been
archived since), a source's IRI (a message, a task record, a short or external note), a
message as ``chat:<chat id>#<turn>``, a short note's short id, or an ``http(s)`` URL, kept as
the string it is (where a reference memory's content lives outside kgmem). A ref naming
nothing of this user's (another user's memory, a memory that does not exist, a bare word) is
refused, so an edge never points at something the user cannot read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.store import (
    USER_NODE_BASE,
    NodeKind,
    TripleStore,
    UserGraphs,
    node_iri,
    parse_node,
    stable_node,
)
from kgmem.vocab import RDF

__all__ = ["ResolvedRefs", "UnknownRef", "resolve_refs"]

_SOURCES = (NodeKind.MESSAGE, NodeKind.TASK, NodeKind.NOTE, NodeKind.SHORT_NOTE)
_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class ResolvedRefs:
    derived_from: tuple[URIRef, ...]  # memories and sources of the user
    locators: tuple[str, ...]  # web addresses, kept as given


class UnknownRef(ValueError):
    def __init__(self, index: int, ref: str) -> None:
        self.index, self.ref = index, ref
        super().__init__(
            f"{ref[:100]!r} names nothing of this user's: give a memory or a source of theirs "
            "(an id, or chat:<chat>#<turn>), or an http(s) URL"
        )


def resolve_refs(
    store: TripleStore, uid: str, refs: Sequence[str], *, strict: bool = True
) -> ResolvedRefs:
    """``refs`` as edges and locators; :class:`UnknownRef` for the first that names nothing
    of ``uid``'s (not ``strict``: it is left out)."""
    edges: list[URIRef] = []
    locators: list[str] = []
    for index, ref in enumerate(refs):
        text = ref.strip()
        ours = text.startswith(USER_NODE_BASE)  # a kgmem node: it must be one of theirs
        if not ours and text.lower().startswith(("http://", "https://")) and " " not in text:
            locators.append(text)
            continue
        found = _node(store, uid, text)
        if found is not None:
            edges.append(found)
        elif strict:
            raise UnknownRef(index, ref)
    return ResolvedRefs(tuple(dict.fromkeys(edges)), tuple(dict.fromkeys(locators)))


def _node(store: TripleStore, uid: str, ref: str) -> URIRef | None:
    graphs = UserGraphs(uid)
    if ref.startswith("chat:"):
        chat, _, turn = ref[len("chat:") :].rpartition("#")
        if not chat or not turn.isdigit():
            return None
        try:
            candidates = [stable_node(uid, NodeKind.MESSAGE, chat, str(int(turn)))]
        except GraphNameError:
            return None
    elif len(ref) == 32 and set(ref) <= _HEX:  # a short id: a memory's, or a short note's
        candidates = [node_iri(uid, NodeKind.MEMORY, ref), node_iri(uid, NodeKind.SHORT_NOTE, ref)]
    else:
        try:
            owner, kind, _ = parse_node(ref)
        except GraphNameError:
            return None
        if owner != uid or kind not in (NodeKind.MEMORY, *_SOURCES):
            return None
        candidates = [URIRef(ref)]
    for node in candidates:
        kind = parse_node(str(node))[1]
        shelves = (graphs.sources,) if kind in _SOURCES else (graphs.kg, graphs.quarantine)
        if any(next(iter(store.quads(g, node, RDF.type)), None) is not None for g in shelves):
            return node
    return None
