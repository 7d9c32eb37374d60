"""What one GraphQL request reads through: the caller, the services and its dataloaders.

The dataloaders batch each field's keys (entities, their facts in and out, asserted and
inferred from inverse and symmetric properties, literal attributes, pages, ``about`` edges,
a memory's decisions) and read each batch with one store query that binds the keys as a
list (:class:`UserTables`), so a page of 50 entities with their types and relations costs
the same few store queries as a page of 10, and the cost follows the page, not the size of
the user's graph. Memories and sources are read per key (one batch, one read per item).

Only the caller's graphs are read: an id of another user's node finds nothing.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

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
    """The caller's entity data, read per batch of keys: one store query per table and
    dataloader batch (chunked by the reader), whatever the size of the user's graph. The
    entity listing reads the whole entity table once per request; keyed reads then answer
    from it."""

    def __init__(self, services: Services, uid: str) -> None:
        self._services, self._uid = services, uid
        self._reader = StoreReader(services.store, services.queries)
        self._lock = threading.Lock()
        self._all: dict[str, EntityRow] | None = None

    def _own(self, keys: Sequence[str], kind: NodeKind) -> list[URIRef]:
        """The keys that name the caller's nodes of ``kind`` (others find nothing)."""
        return [iri for k in keys if (iri := own_node(self._uid, k, kind)) is not None]

    def all_entities(self) -> dict[str, EntityRow]:
        with self._lock:
            if self._all is None:
                self._all = {r.id: r for r in self._reader.entities(self._uid)}
            return self._all

    def entities(self, keys: Sequence[str]) -> dict[str, EntityRow]:
        if self._all is not None:
            return self._all
        iris = self._own(keys, NodeKind.ENTITY)
        return {r.id: r for r in self._reader.entities(self._uid, iris)} if iris else {}

    def relations(self, keys: Sequence[str]) -> dict[str, list[RelatesRow]]:
        """Facts at each entity (out and in), asserted and inferred."""
        iris = self._own(keys, NodeKind.ENTITY)
        wanted = {str(i) for i in iris}
        at: dict[str, list[RelatesRow]] = defaultdict(list)
        rows = self._reader.relates(self._uid, iris) if iris else set()
        for row in sorted(rows, key=_relates_key):
            for end in {row.source, row.target} & wanted:
                at[end].append(row)
        return at

    def attributes(self, keys: Sequence[str]) -> dict[str, list[Attribute]]:
        iris = self._own(keys, NodeKind.ENTITY)
        if not iris:
            return {}
        rows = self._services.store.select(
            self._services.queries["graphql/entity_attributes"],
            {"graph": UserGraphs(self._uid).kg},
            values={"entity": iris},
        )
        found: dict[str, list[Attribute]] = defaultdict(list)
        for r in rows:
            value = r["value"]
            datatype = value.datatype if isinstance(value, Literal) else None
            found[str(r["entity"])].append(
                Attribute(str(r["property"]), str(value), _opt(datatype))
            )
        return found

    def pages(self, keys: Sequence[str]) -> dict[str, PageInfo]:
        iris = self._own(keys, NodeKind.ENTITY)
        if not iris:
            return {}
        rows = self._services.store.select(
            self._services.queries["pages/entity_page"],
            {"graph": UserGraphs(self._uid).kg},
            values={"entity": iris},
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

    def about(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """Entity → the memories (kg and quarantine) about it."""
        iris = self._own(keys, NodeKind.ENTITY)
        found: dict[str, list[str]] = defaultdict(list)
        rows = self._reader.about(self._uid, {"entity": iris}) if iris else set()
        for row in sorted(rows, key=lambda r: (r.entity, r.memory)):
            found[row.entity].append(row.memory)
        return found

    def superseded_by(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """Memory → the memories that supersede it (its replacement history forward)."""
        iris = self._own(keys, NodeKind.MEMORY)
        if not iris:
            return {}
        rows = self._services.store.select(
            self._services.queries["graphql/superseded_by"],
            {"graph": UserGraphs(self._uid).kg},
            values={"old": iris},
        )
        found: dict[str, list[str]] = defaultdict(list)
        for r in rows:
            found[str(r["old"])].append(str(r["new"]))
        return found

    def decisions(self, keys: Sequence[str]) -> dict[str, list[DecisionRecord]]:
        """Memory → the decisions about it, newest first."""
        iris = self._own(keys, NodeKind.MEMORY)
        found: dict[str, list[DecisionRecord]] = defaultdict(list)
        for record in self._services.lifecycle.decisions.history(self._uid, iris) if iris else ():
            found[str(record.target)].append(record)
        return found


def _relates_key(row: RelatesRow) -> tuple[str, str, str, bool, str]:
    return (row.source, row.predicate, row.target, row.inferred, row.memory or "")


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _one(found: Mapping[str, V], keys: Sequence[str]) -> list[V | None]:
    return [found.get(k) for k in keys]


def _each(found: Mapping[str, list[V]], keys: Sequence[str]) -> list[list[V]]:
    return [list(found.get(k, ())) for k in keys]


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
        return _loader(lambda keys: _one(self.tables.entities(keys), keys))

    @cached_property
    def relations(self) -> DataLoader[str, list[RelatesRow]]:
        return _loader(lambda keys: _each(self.tables.relations(keys), keys))

    @cached_property
    def attributes(self) -> DataLoader[str, list[Attribute]]:
        return _loader(lambda keys: _each(self.tables.attributes(keys), keys))

    @cached_property
    def page(self) -> DataLoader[str, PageInfo | None]:
        return _loader(lambda keys: _one(self.tables.pages(keys), keys))

    @cached_property
    def about(self) -> DataLoader[str, list[str]]:
        return _loader(lambda keys: _each(self.tables.about(keys), keys))

    @cached_property
    def superseded_by(self) -> DataLoader[str, list[str]]:
        return _loader(lambda keys: _each(self.tables.superseded_by(keys), keys))

    @cached_property
    def history(self) -> DataLoader[str, list[DecisionRecord]]:
        return _loader(lambda keys: _each(self.tables.decisions(keys), keys))

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
