"""The named-graph scheme: every graph IRI kgmem writes is built and parsed here.

| graph                                   | holds                                      |
|-----------------------------------------|--------------------------------------------|
| ``urn:kgmem:catalogue:{ontology}``      | one catalogue ontology                     |
| ``urn:kgmem:shapes:{file}``             | one SHACL shapes file                      |
| ``urn:kgmem:user:{uid}:schema``         | the user's schema delta                    |
| ``urn:kgmem:user:{uid}:kg``             | accepted knowledge                         |
| ``urn:kgmem:user:{uid}:sources``        | raw contributions                          |
| ``urn:kgmem:user:{uid}:proposal:{pass}``| one consolidation pass's virtual entity set|
| ``urn:kgmem:user:{uid}:quarantine``     | suspect and rejected facts                 |
| ``urn:kgmem:user:{uid}:ops``            | passes, checkpoints, decisions, usage      |
| ``urn:kgmem:user:{uid}:outbox``         | commits the projections have yet to read   |
| ``urn:kgmem:accounts``                  | users, roles and hashed API keys           |

The outbox is machinery, not the user's content: it is not among :attr:`UserGraphs.standing`
and is empty whenever the projections have caught up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from rdflib import URIRef

from kgmem.errors import GraphNameError

__all__ = [
    "ACCOUNTS_GRAPH",
    "USER_NODE_BASE",
    "GraphKind",
    "ParsedGraph",
    "UserGraphs",
    "catalogue_graph",
    "check_id",
    "parse_graph",
    "shapes_graph",
]

_PREFIX = "urn:kgmem:"
# Ids become IRI segments: keep them to characters that need no escaping and cannot
# smuggle a ':' (which would let one id impersonate another graph).
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}")


class GraphKind(StrEnum):
    CATALOGUE = "catalogue"
    SHAPES = "shapes"
    SCHEMA = "schema"
    KG = "kg"
    SOURCES = "sources"
    PROPOSAL = "proposal"
    QUARANTINE = "quarantine"
    OPS = "ops"
    OUTBOX = "outbox"
    ACCOUNTS = "accounts"


_USER_KINDS = {
    GraphKind.SCHEMA,
    GraphKind.KG,
    GraphKind.SOURCES,
    GraphKind.QUARANTINE,
    GraphKind.OPS,
    GraphKind.OUTBOX,
}


USER_NODE_BASE = "https://w3id.org/kgmem/user/"
#: Who may use the server: no user's query ever reads it.
ACCOUNTS_GRAPH = URIRef(f"{_PREFIX}{GraphKind.ACCOUNTS.value}")


def check_id(value: str, what: str = "id") -> str:
    """Return ``value`` if it is a valid id segment, else raise :class:`GraphNameError`.

    >>> check_id("alice")
    'alice'
    """
    if not _ID.fullmatch(value):
        raise GraphNameError(
            value, f"{what} must be 1-128 of A-Z a-z 0-9 _ . - and start with a letter or digit"
        )
    return value


def catalogue_graph(ontology_id: str) -> URIRef:
    return URIRef(f"{_PREFIX}catalogue:{check_id(ontology_id, 'ontology id')}")


def shapes_graph(file_stem: str) -> URIRef:
    return URIRef(f"{_PREFIX}shapes:{check_id(file_stem, 'shapes file name')}")


@lru_cache(maxsize=1 << 12)
def _user_graph(uid: str, kind: GraphKind) -> URIRef:
    """One IRI object per user graph: made (and checked by rdflib) once, and the same object
    keys every dictionary and set it is put in (a lookup by identity skips the comparison)."""
    return URIRef(f"{_PREFIX}user:{uid}:{kind.value}")


@dataclass(frozen=True)
class UserGraphs:
    """The graphs of one user. Construct with a validated uid."""

    uid: str

    def __post_init__(self) -> None:
        check_id(self.uid, "user id")

    def _graph(self, kind: GraphKind) -> URIRef:
        return _user_graph(self.uid, kind)

    @property
    def node_base(self) -> str:
        """The IRI prefix of every node of this user (memories, entities, sources, ...)."""
        return f"{USER_NODE_BASE}{self.uid}/"

    @property
    def schema(self) -> URIRef:
        return self._graph(GraphKind.SCHEMA)

    @property
    def kg(self) -> URIRef:
        return self._graph(GraphKind.KG)

    @property
    def sources(self) -> URIRef:
        return self._graph(GraphKind.SOURCES)

    @property
    def quarantine(self) -> URIRef:
        return self._graph(GraphKind.QUARANTINE)

    @property
    def ops(self) -> URIRef:
        return self._graph(GraphKind.OPS)

    @property
    def outbox(self) -> URIRef:
        """What committed changes the projections (index, search) have not read yet."""
        return self._graph(GraphKind.OUTBOX)

    def proposal(self, pass_id: str) -> URIRef:
        return URIRef(f"{_PREFIX}user:{self.uid}:proposal:{check_id(pass_id, 'pass id')}")

    @property
    def standing(self) -> tuple[URIRef, ...]:
        """The user's long-lived graphs (every graph but proposals and the outbox)."""
        return (self.schema, self.kg, self.sources, self.quarantine, self.ops)

    def owns(self, graph: URIRef) -> bool:
        """Whether ``graph`` is one of this user's graphs (proposals included)."""
        try:
            parsed = parse_graph(graph)
        except GraphNameError:
            return False
        return parsed.uid == self.uid


@dataclass(frozen=True)
class ParsedGraph:
    kind: GraphKind
    uid: str | None = None
    name: str | None = None  # ontology id, shapes file, or pass id


def parse_graph(graph: str) -> ParsedGraph:
    """Parse a kgmem graph IRI; raise :class:`GraphNameError` for anything else.

    >>> parse_graph("urn:kgmem:user:alice:proposal:p1")
    ParsedGraph(kind=<GraphKind.PROPOSAL: 'proposal'>, uid='alice', name='p1')
    """
    if not graph.startswith(_PREFIX):
        raise GraphNameError(graph, "not a kgmem graph (expected urn:kgmem:...)")
    parts = graph[len(_PREFIX) :].split(":")
    if parts == [GraphKind.ACCOUNTS.value]:
        return ParsedGraph(GraphKind.ACCOUNTS)
    try:
        if parts[0] in (GraphKind.CATALOGUE, GraphKind.SHAPES) and len(parts) == 2:
            return ParsedGraph(GraphKind(parts[0]), name=check_id(parts[1]))
        if parts[0] == "user" and len(parts) == 3 and parts[2] in _USER_KINDS:
            return ParsedGraph(GraphKind(parts[2]), uid=check_id(parts[1]))
        if parts[0] == "user" and len(parts) == 4 and parts[2] == GraphKind.PROPOSAL:
            return ParsedGraph(GraphKind.PROPOSAL, uid=check_id(parts[1]), name=check_id(parts[3]))
    except GraphNameError as exc:
        raise GraphNameError(graph, exc.reason) from exc
    raise GraphNameError(graph, "does not follow the kgmem graph scheme")


def users_with(graphs: Iterable[URIRef], *kinds: GraphKind) -> list[str]:
    """The users that have a graph of one of ``kinds`` among ``graphs`` (names that are not
    kgmem's are skipped, even under a user's prefix: a start-up must not stop at one), sorted."""
    found = set()
    for graph in graphs:
        try:
            parsed = parse_graph(graph)
        except GraphNameError:
            continue
        if parsed.kind in kinds and parsed.uid is not None:
            found.add(parsed.uid)
    return sorted(found)
