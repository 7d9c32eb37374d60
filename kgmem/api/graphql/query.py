"""GraphQL queries. Search, the context packet, the review inbox and the decisions feed run
the reading agent tools (:mod:`kgmem.api.tools.read`); entities and memories are read
through the request's dataloaders. Every read is the caller's own."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, TypeVar, cast

import strawberry
from graphql import GraphQLError
from starlette.concurrency import run_in_threadpool

from kgmem.api.graphql.context import own_node
from kgmem.api.graphql.entities import PageCursor, TermMatch
from kgmem.api.graphql.fields import field
from kgmem.api.graphql.graph import MAX_NODES, GraphView, read_graph
from kgmem.api.graphql.mutation import plain
from kgmem.api.graphql.nodes import (
    Decision,
    Entity,
    EntityConnection,
    Memory,
    MemoryConnection,
    load_memory,
)
from kgmem.api.graphql.reads import (
    Consolidation,
    ContextPacket,
    Me,
    NoteList,
    PageFile,
    PromptContext,
    SearchFilters,
    SearchHit,
    SearchResults,
    context_packet,
)
from kgmem.api.graphql.results import InputError, attempt
from kgmem.api.graphql.types import Ctx, Source
from kgmem.api.tools import notes as n
from kgmem.api.tools import read as r
from kgmem.api.tools import write as w
from kgmem.errors import ArgumentError, KgmemError, UnknownMemory
from kgmem.memory import MemoryKind, MemoryStatus, NodeKind, WriteMode
from kgmem.ontology import TermKind
from kgmem.retrieval import Intent

__all__ = ["Query"]

T = TypeVar("T")
strawberry.enum(Intent, name="Intent")
strawberry.enum(TermKind, name="TermKind")


def _offset(after: str | None) -> int:
    return int(after) if after is not None and after.isdigit() else 0


def _page(first: int, most: int, name: str = "first") -> int:
    """A page size the caller asked for (in argument ``name``): a number below 1 is an
    error naming it (it once silently became 1); one above ``most`` is capped at ``most``."""
    if first < 1:
        raise GraphQLError(
            f"{name} must be at least 1 (got {first})",
            extensions={"field": name, "code": "BAD_USER_INPUT"},  # the caller's, not ours
        )
    return min(first, most)


def _parsed(parse: Callable[[], T]) -> T:
    """Arguments parsed by their tool; a refusal is an error naming the argument as the
    schema spells it (``validAt``), like ``first`` below."""
    try:
        return parse()
    except ArgumentError as exc:
        head, *rest = (exc.field or "").split("_")
        shown = head + "".join(word.capitalize() for word in rest)
        message = f"{shown}: {exc.reason}" if shown else exc.reason
        extensions = {"field": shown or None, "code": "BAD_USER_INPUT"}
        raise GraphQLError(message, extensions=extensions) from None


SearchResult = Annotated[SearchResults | InputError, strawberry.union("SearchResult")]
NotesResult = Annotated[NoteList | InputError, strawberry.union("NotesResult")]
ContextResult = Annotated[ContextPacket | InputError, strawberry.union("ContextResult")]
PromptContextResult = Annotated[PromptContext | InputError, strawberry.union("PromptContextResult")]
MAX_PAGE = 100


@strawberry.type
class Query:
    @field("Who the key belongs to.")
    def me(self, info: Ctx) -> Me:
        p = info.context.principal
        return Me(id=p.uid, role=p.role.value, admin=p.admin)

    @field("One memory by IRI or short id (null: not yours or none).")
    async def memory(self, info: Ctx, id: strawberry.ID) -> Memory | None:
        return await load_memory(info, id)

    @field(
        "get_note: one note by the id remember answered (IRI or short id), or an external "
        "note's revision (null: not yours or none)."
    )
    async def note(self, info: Ctx, id: strawberry.ID) -> Source | None:
        c = info.context
        try:
            args = n.GetNoteArgs.parse({"id": id}, c.uid)
        except KgmemError:  # not a note id of theirs: none, as memory(id) answers
            return None
        for iri in args.ids:  # a short id may be a short note's or an external note's
            record = await c.source.load(str(iri))
            if record is not None:
                return Source.from_record(record)
        return None

    @field(
        "Memories, newest first, by kind and status. validAt: which values held at that "
        "time (valid time; active or since superseded or outdated unless status says "
        "otherwise); entity (a name or IRI, I for the user) and predicate (schema:memberOf "
        "or an IRI): only memories with such a claim."
    )
    async def memories(
        self,
        info: Ctx,
        kind: MemoryKind | None = None,
        status: MemoryStatus | None = None,
        first: int = 20,
        after: str | None = None,
        valid_at: datetime | None = None,
        entity: str | None = None,
        predicate: str | None = None,
        known_at: datetime | None = None,
    ) -> MemoryConnection:
        c, start, size = info.context, _offset(after), _page(first, MAX_PAGE)
        raw = plain(
            {
                "kind": kind,
                "status": status,
                "limit": size + 1,
                "offset": start,
                "valid_at": valid_at,
                "entity": entity,
                "predicate": predicate,
                "known_at": known_at,
            }
        )
        args = _parsed(lambda: r.ListMemoriesArgs.parse(raw))
        found = await run_in_threadpool(r.list_memories, c.services, c.principal, args)
        ids = [m["id"] for m in found["memories"]]
        records = await c.memory.load_many(ids[:size])
        more = len(ids) > size
        nodes = [Memory.from_record(m) for m in records if m is not None]
        if known_at is not None:  # each as it was then, not as it is now
            then = {m["id"]: m for m in found["memories"]}
            nodes = [_as_then(n, then[str(n.id)]) for n in nodes]
        return MemoryConnection(
            nodes=nodes,
            page_info=PageCursor(
                has_next_page=more, end_cursor=str(start + size) if more else None
            ),
        )

    @field("One entity by IRI or short id (null: not yours or none).")
    async def entity(self, info: Ctx, id: strawberry.ID) -> Entity | None:
        iri = own_node(info.context.uid, id, NodeKind.ENTITY)
        row = None if iri is None else await info.context.entity.load(str(iri))
        return None if row is None else Entity.from_row(row)

    @field("Entities by name, optionally of a type or named like text.")
    async def entities(
        self,
        info: Ctx,
        first: int = 20,
        after: str | None = None,
        type: str | None = None,
        name: str | None = None,
    ) -> EntityConnection:
        c, start, size = info.context, _offset(after), _page(first, MAX_PAGE)
        rows = list((await run_in_threadpool(c.tables.all_entities)).values())
        if type is not None:
            rows = [e for e in rows if type in e.types]
        if name is not None:
            needle = name.casefold()
            rows = [e for e in rows if needle in " ".join((e.name or "", *e.aliases)).casefold()]
        rows.sort(key=lambda e: ((e.name or "").casefold(), e.id))
        page, more = rows[start : start + size], len(rows) > start + size
        return EntityConnection(
            nodes=[Entity.from_row(e) for e in page],
            page_info=PageCursor(
                has_next_page=more, end_cursor=str(start + size) if more else None
            ),
            total=len(rows),
        )

    @field("memory_search: memories, pages and notes, best first.")
    async def search(
        self, info: Ctx, query: str, k: int | None = None, filters: SearchFilters | None = None
    ) -> SearchResult:
        c = info.context
        raw = {"query": query, "k": k, **(plain(filters) if filters else {})}
        default_k = c.services.settings.search_results
        return cast(
            SearchResult,
            await attempt(
                lambda: r.search(
                    c.services, c.principal, r.SearchArgs.parse(plain(raw), default_k)
                ),
                lambda out: SearchResults(
                    query=out["query"],
                    hits=[
                        SearchHit(
                            id=h["id"],
                            short_id=h["short_id"],
                            kind=h["kind"],
                            title=h["title"],
                            excerpt=h["excerpt"],
                            score=h["score"],
                            why=list(h["why"]),
                            path=h["path"],
                            memory_kind=h["memory_kind"],
                            status=h["status"],
                            consolidated=h["consolidated"],
                        )
                        for h in out["results"]
                    ],
                ),
            ),
        )

    @field(
        "list_notes: the short notes, newest first; consolidated: only those a pass has "
        "taken (true) or the others (false)."
    )
    async def notes(
        self,
        info: Ctx,
        consolidated: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> NotesResult:
        c = info.context
        raw = plain({"consolidated": consolidated, "limit": limit, "offset": offset})
        return cast(
            NotesResult,
            await attempt(
                lambda: n.list_notes(c.services, c.principal, n.ListNotesArgs.parse(raw)),
                NoteList.of,
            ),
        )

    @field("retrieve_memory: a context packet for a task and intent.")
    async def context(
        self, info: Ctx, task: str, intent: Intent = Intent.EXECUTE, k: int | None = None
    ) -> ContextResult:
        c, raw = info.context, plain({"task": task, "intent": intent, "k": k})
        return cast(
            ContextResult,
            await attempt(
                lambda: r.retrieve_memory(c.services, c.principal, r.RetrieveArgs.parse(raw)),
                context_packet,
            ),
        )

    @field(
        "prompt_context: the profile, short notes and playbook index to push into each turn, "
        "within budgetTokens (default: the server's setting)."
    )
    async def prompt_context(
        self,
        info: Ctx,
        account_name: str | None = None,
        timezone: str | None = None,
        budget_tokens: int | None = None,
    ) -> PromptContextResult:
        c = info.context
        raw = plain(
            {"account_name": account_name, "timezone": timezone, "budget_tokens": budget_tokens}
        )
        return cast(
            PromptContextResult,
            await attempt(
                lambda: r.prompt_context(c.services, c.principal, r.PromptContextArgs.parse(raw)),
                PromptContext.of,
            ),
        )

    @field("Catalogue terms (classes and properties) for a text.")
    async def terms(
        self, info: Ctx, query: str, limit: int = 10, kind: TermKind | None = None
    ) -> list[TermMatch]:
        ontology = info.context.services.ontology
        hits = await run_in_threadpool(ontology.search, query, max(1, min(limit, 50)), kind)
        return [TermMatch.from_hit(h) for h in hits]

    @field(
        "read_page: a page, playbook or note by path (as a search hit gives it) or by the "
        "entity (IRI or name) it is of; null when the caller has none such."
    )
    async def page(
        self, info: Ctx, path: str | None = None, entity: str | None = None
    ) -> PageFile | None:
        c = info.context
        args = _parsed(lambda: r.ReadPageArgs.parse(plain({"path": path, "entity": entity})))
        try:
            found = await run_in_threadpool(r.read_page, c.services, c.principal, args)
        except UnknownMemory:
            return None
        return PageFile(**found)

    @field("How the user's agent drafts are handled: AUTONOMOUS or REVIEW.")
    async def review_mode(self, info: Ctx) -> WriteMode:
        c = info.context
        found = await run_in_threadpool(
            w.review_mode, c.services, c.principal, w.ReviewModeArgs.parse({})
        )
        return WriteMode(found["mode"])

    @field("Memories waiting for review, newest first.")
    async def review_inbox(self, info: Ctx, first: int = 50) -> list[Memory]:
        c = info.context
        args = r.LimitArgs.parse({"limit": _page(first, 1000)})
        found = await run_in_threadpool(r.review_inbox, c.services, c.principal, args)
        records = await c.memory.load_many([m["id"] for m in found["memories"]])
        return [Memory.from_record(m) for m in records if m is not None]

    @field("Every gate and lifecycle decision (refusals too), newest first.")
    async def decisions(self, info: Ctx, first: int = 50) -> list[Decision]:
        c = info.context
        args = r.LimitArgs.parse({"limit": _page(first, 1000)})
        found = await run_in_threadpool(r.decisions_feed, c.services, c.principal, args)
        return [Decision.from_json(d) for d in found["decisions"]]

    @field("Consolidation status and the latest passes.")
    async def consolidation(self, info: Ctx, history: int = 20) -> Consolidation:
        c = info.context
        limit = _page(history, 200, "history")  # 0 is refused, as REST's limit=0 is
        status = await run_in_threadpool(c.services.consolidation.status, c.uid, limit)
        return Consolidation.of(status)

    @field(
        "The entity graph as the memory browser draws it: entities (most written about "
        "first, at most `first`), facts between them and links between pages."
    )
    async def graph(self, info: Ctx, first: int = 5000) -> GraphView:
        c = info.context
        size = _page(first, MAX_NODES)
        return await run_in_threadpool(read_graph, c.services, c.uid, size)


def _as_then(node: Memory, then: dict[str, Any]) -> Memory:
    """``node`` with what a known-at read says of it then (title, confidence, status, pin,
    valid time: every field of the summary that may change since)."""
    confidence = then["confidence"]
    return dataclasses.replace(
        node,
        title=then["title"],
        confidence=node.confidence if confidence is None else confidence,
        status=MemoryStatus(then["status"]),
        pinned=then["pinned"],
        valid_from=_instant(then["valid_from"]),
        valid_until=_instant(then["valid_until"]),
    )


def _instant(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)
