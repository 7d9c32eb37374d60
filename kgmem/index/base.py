"""The graph projection port and the plain data that crosses it.

The store is the single source of truth; a graph projection is a copy of each user's
entities, memories, pages and sources with the edges between them, kept in a property
graph for traversals SPARQL does slowly. It can always be rebuilt from the store, is
refreshed from committed changes, and is checked against the store by fingerprint.
Only the adapter (:class:`~kgmem.index.kuzu.projection.KuzuProjection`) knows the backend.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, runtime_checkable

from rdflib import URIRef

from kgmem.index.rows import Fingerprint, UserRows
from kgmem.progress import Progress

__all__ = [
    "FeedTarget",
    "GraphProjection",
    "Link",
    "LinkKind",
    "Links",
    "Neighbour",
    "OpenReport",
    "ReconcileReport",
    "StampedTarget",
]


@dataclass(frozen=True)
class Links:
    """Of the nodes a change touched: those whose every change was a link to another node of
    the user (a fact at an entity, not its name), and the links (subject, object) changed.
    A projection may refresh just those links at such a node instead of all of its edges."""

    only: frozenset[URIRef] = frozenset()
    pairs: frozenset[tuple[URIRef, URIRef]] = frozenset()


class LinkKind(StrEnum):
    RELATES = "relates"  # a fact between two entities (asserted or inferred)
    SHARES_MEMORY = "shares_memory"  # two entities active memories are both about


@dataclass(frozen=True)
class Link:
    """One edge of a path, as stored: from ``source`` to ``target`` whichever way it was
    walked. ``predicate``, ``memory`` and ``inferred`` describe a RELATES edge; ``count``
    (memories in common) a SHARES_MEMORY edge."""

    kind: LinkKind
    source: URIRef
    target: URIRef
    predicate: URIRef | None = None
    memory: URIRef | None = None
    inferred: bool = False
    count: int = 0


@dataclass(frozen=True)
class Neighbour:
    """An entity near the start entity: how far, and one shortest path to it."""

    entity: URIRef
    name: str | None
    types: tuple[URIRef, ...]
    distance: int
    path: tuple[Link, ...]

    @property
    def predicates(self) -> tuple[URIRef, ...]:
        """The fact predicates along the path (shared-memory links have none)."""
        return tuple(link.predicate for link in self.path if link.predicate is not None)


@dataclass(frozen=True)
class ReconcileReport:
    """One user's projection compared with the store (``projection`` is before repair)."""

    uid: str
    projection: Fingerprint
    store: Fingerprint
    repaired: bool
    caught_up: int | None = None  # repaired from the digests: the nodes re-read (no compare)

    @property
    def drift(self) -> tuple[str, ...]:
        return self.projection.drift(self.store)

    @property
    def matched(self) -> bool:
        return not self.drift


@dataclass(frozen=True)
class OpenReport:
    """What opening a projection found: a usable database, a new one, or an unreadable one
    moved aside (``moved_to``, with ``reason``) and replaced; ``rebuilt`` lists the users
    loaded from the store because the database was new."""

    path: Path
    created: bool
    reason: str | None = None
    moved_to: Path | None = None
    rebuilt: tuple[str, ...] = ()

    @property
    def recovered(self) -> bool:
        return self.reason is not None


class GraphProjection(Protocol):
    """A property-graph copy of every user's knowledge, rebuilt and checked from the store."""

    @property
    def opened(self) -> OpenReport: ...

    def rebuild(self, uid: str, progress: Progress | None = None) -> Fingerprint:
        """Drop the user's rows and load them again from the store; the new fingerprint.
        ``progress`` hears each table begin (``"write Memory"``): read and written at once."""
        ...

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> None:
        """Re-read ``nodes`` (any IRIs a change touched) and every edge at them (at a node
        of ``links.only``, only its links of ``links.pairs``)."""
        ...

    def neighbourhood(
        self, uid: str, entity: URIRef, hops: int = 1, limit: int = 50
    ) -> list[Neighbour]:
        """Entities within ``hops`` (1-3) of ``entity``, nearest first; never another user's."""
        ...

    def version(self, uid: str) -> int:
        """Changes whenever the user's rows may have; never waits for a write under way."""
        ...

    def rows(self, uid: str) -> UserRows:
        """Every row of the user as projected (duplicates, which are drift, kept)."""
        ...

    def fingerprint(self, uid: str) -> Fingerprint: ...

    def store_fingerprint(self, uid: str) -> Fingerprint:
        """What :meth:`fingerprint` is once the user's projection matches the store."""
        ...

    def reconcile(self, uid: str) -> ReconcileReport:
        """Compare with the store and rebuild the user on any drift."""
        ...

    def reconcile_all(
        self, *, fresh: bool = False, skip: Collection[str] = ()
    ) -> list[ReconcileReport]:
        """:meth:`reconcile` for every user the store or the projection knows but ``skip``;
        ``fresh``: on any drift, rebuild every user into a new database, not in place."""
        ...

    def users(self) -> list[str]:
        """Every user with rows in the projection."""
        ...

    def close(self) -> None: ...


class FeedTarget(Protocol):
    """A projection the feed keeps current: re-read these nodes of this user (``links``:
    which of them changed only by their links to other nodes, and those links; a target
    may use it to read less, or ignore it)."""

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> object: ...


@runtime_checkable
class StampedTarget(Protocol):
    """A target that keeps itself on disk: told, after a drain left a user's outbox empty,
    the user's stamp it is now level with (None: the user never had a write)."""

    def level(self, uid: str, stamp: int | None) -> None: ...
