"""What one GraphQL request reads through: the caller, the services and its dataloaders.

A request reads the caller's entity tables at most once each (:class:`UserTables`): names,
aliases and types of every entity, the facts between entities (asserted, and inferred from
inverse and symmetric properties), literal attributes, pages, ``about`` edges and the
decisions feed. The dataloaders batch each field's keys and answer them from those tables,
so a page of 50 entities with their types and relations costs the same few store queries
as a page of 10. Memories and sources are read per key (one batch, one read per item).

Only the caller's graphs are read: an id of another user's node finds nothing.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from rdflib import Literal, URIRef
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from strawberry.dataloader import DataLoader

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.errors import GraphNameError, UnknownMemory
from kgmem.index import StoreReader
from kgmem.index.rows import EntityRow, RelatesRow
from kgmem.memory import DecisionRecord, MemoryRecord, NodeKind, SourceRecord, node_iri
from kgmem.memory import parse_node as parse_node_iri
from kgmem.store import UserGraphs, check_id

__all__ = ["Attribute", "GraphContext", "PageInfo", "UserTables", "own_node"]

K = TypeVar("K")
V = TypeVar("V")
_HISTORY = 10_000


@dataclass(frozen=True)
class Attribute:
    property: str
    value: str
    datatype: str | None


@dataclass(frozen=True)
class PageInfo:
    iri: str
    path: str
    title: str | None
    revision: int | None
    markdown: str | None


def own_node(uid: str, value: str, kind: NodeKind) -> URIRef | None:
    """``uid``'s node ``value`` (IRI or short id) of ``kind``; None for anything else."""
    try:
        if "/" not in value and ":" not in value:
            return node_iri(uid, kind, check_id(value))
        owner, found, _ = parse_node_iri(value)
    except GraphNameError:
        return None
    return URIRef(value) if owner == uid and found is kind else None


class UserTables:
    """The caller's entity tables, each read once per request (thread-safe: loaders run
    their reads in the thread pool)."""

    def __init__(self, services: Services, uid: str) -> None:
        self._services, self._uid = services, uid
        self._reader = StoreReader(services.store, services.queries)
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}

    def _once(self, name: str, read: Callable[[], V]) -> V:
        with self._lock:
            if name not in self._cache:
                self._cache[name] = read()
            value: V = self._cache[name]
            return value

    def entities(self) -> dict[str, EntityRow]:
        return self._once("entities", lambda: {r.id: r for r in self._reader.entities(self._uid)})

    def relations(self) -> dict[str, list[RelatesRow]]:
        """Facts at each entity (out and in), asserted and inferred."""

        def read() -> dict[str, list[RelatesRow]]:
            at: dict[str, list[RelatesRow]] = defaultdict(list)
            for row in sorted(self._reader.relates(self._uid), key=_relates_key):
                at[row.source].append(row)
                if row.target != row.source:
                    at[row.target].append(row)
            return at

        return self._once("relations", read)

    def attributes(self) -> dict[str, list[Attribute]]:
        def read() -> dict[str, list[Attribute]]:
            rows = self._services.store.select(
                self._services.queries["graphql/entity_attributes"],
                {"graph": UserGraphs(self._uid).kg},
            )
            found: dict[str, list[Attribute]] = defaultdict(list)
            for r in rows:
                value = r["value"]
                datatype = value.datatype if isinstance(value, Literal) else None
                found[str(r["entity"])].append(
                    Attribute(str(r["property"]), str(value), _opt(datatype))
                )
            return found

        return self._once("attributes", read)

    def pages(self) -> dict[str, PageInfo]:
        def read() -> dict[str, PageInfo]:
            rows = self._services.store.select(
                self._services.queries["pages/entity_page"], {"graph": UserGraphs(self._uid).kg}
            )
            found: dict[str, PageInfo] = {}
            for r in rows:
                number = r.get("number")
                found.setdefault(
                    str(r["entity"]),
                    PageInfo(
                        str(r["page"]),
                        str(r["path"]),
                        _opt(r.get("title")),
                        int(number.toPython()) if isinstance(number, Literal) else None,
                        _opt(r.get("markdown")),
                    ),
                )
            return found

        return self._once("pages", read)

    def about(self) -> dict[str, list[str]]:
        """Entity → the memories (kg and quarantine) about it."""

        def read() -> dict[str, list[str]]:
            found: dict[str, list[str]] = defaultdict(list)
            for row in sorted(self._reader.about(self._uid), key=lambda r: (r.entity, r.memory)):
                found[row.entity].append(row.memory)
            return found

        return self._once("about", read)

    def decisions(self) -> dict[str, list[DecisionRecord]]:
        """Memory → the decisions about it, newest first."""

        def read() -> dict[str, list[DecisionRecord]]:
            found: dict[str, list[DecisionRecord]] = defaultdict(list)
            for record in self._services.lifecycle.decisions.feed(self._uid, limit=_HISTORY):
                found[str(record.target)].append(record)
            return found

        return self._once("decisions", read)


def _relates_key(row: RelatesRow) -> tuple[str, str, str, bool, str]:
    return (row.source, row.predicate, row.target, row.inferred, row.memory or "")


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _loader(read: Callable[[Sequence[K]], list[V]]) -> DataLoader[K, V]:
    async def load(keys: Sequence[K]) -> list[V]:
        return await run_in_threadpool(read, keys)

    return DataLoader(load_fn=load)


@dataclass
class GraphContext:
    """The context of one GraphQL request (``info.context``)."""

    request: Request
    response: Response | None
    services: Services
    principal: Principal
    tables: UserTables = field(init=False)

    def __post_init__(self) -> None:
        self.tables = UserTables(self.services, self.principal.uid)

    @property
    def uid(self) -> str:
        return self.principal.uid

    @cached_property
    def entity(self) -> DataLoader[str, EntityRow | None]:
        return _loader(lambda keys: [self.tables.entities().get(k) for k in keys])

    @cached_property
    def relations(self) -> DataLoader[str, list[RelatesRow]]:
        return _loader(lambda keys: [self.tables.relations().get(k, []) for k in keys])

    @cached_property
    def attributes(self) -> DataLoader[str, list[Attribute]]:
        return _loader(lambda keys: [self.tables.attributes().get(k, []) for k in keys])

    @cached_property
    def page(self) -> DataLoader[str, PageInfo | None]:
        return _loader(lambda keys: [self.tables.pages().get(k) for k in keys])

    @cached_property
    def about(self) -> DataLoader[str, list[str]]:
        return _loader(lambda keys: [self.tables.about().get(k, []) for k in keys])

    @cached_property
    def history(self) -> DataLoader[str, list[DecisionRecord]]:
        return _loader(lambda keys: [self.tables.decisions().get(k, []) for k in keys])

    @cached_property
    def memory(self) -> DataLoader[str, MemoryRecord | None]:
        return _loader(lambda keys: [self._memory(k) for k in keys])

    @cached_property
    def source(self) -> DataLoader[str, SourceRecord | None]:
        def read(keys: Sequence[str]) -> list[SourceRecord | None]:
            found = self.services.sources.get(self.uid, keys)
            return [found.get(k) for k in keys]

        return _loader(read)

    def _memory(self, key: str) -> MemoryRecord | None:
        iri = own_node(self.uid, key, NodeKind.MEMORY)
        if iri is None:
            return None
        try:
            return self.services.lifecycle.get(self.uid, iri)
        except UnknownMemory:
            return None
