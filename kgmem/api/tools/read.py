"""The reading agent tools: list and get memories, search, retrieve_memory, the review inbox
and the decisions feed. Each is ``tool(services, principal, args)`` with ``args`` parsed once
by ``Args.parse`` (see :mod:`kgmem.api.tools.args`); results are JSON-able dicts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from rdflib import URIRef

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import ArgumentError, Fields, jsonable, node_id, short_id
from kgmem.api.tools.schema import MAX_BUDGET_TOKENS
from kgmem.errors import UnknownMemory
from kgmem.memory import (
    DecisionRecord,
    KnownAt,
    MemoryKind,
    MemoryList,
    MemoryRecord,
    MemoryStatus,
    MemorySummary,
    NodeKind,
)
from kgmem.retrieval import MIN_BUDGET_TOKENS, Intent
from kgmem.store import iri_problem
from kgmem.vocab import PREFIXES

__all__ = [
    "GetMemoryArgs",
    "LimitArgs",
    "ListMemoriesArgs",
    "ReadPageArgs",
    "RetrieveArgs",
    "SearchArgs",
    "decisions_feed",
    "decisions_json",
    "get_memory",
    "list_memories",
    "memory_json",
    "read_page",
    "retrieve_memory",
    "review_inbox",
    "search",
    "summary_json",
]


def summary_json(summary: MemorySummary) -> dict[str, Any]:
    out: dict[str, Any] = jsonable(summary)
    out["id"] = out.pop("iri")
    out["short_id"] = short_id(summary.iri)
    return out


def memory_json(record: MemoryRecord) -> dict[str, Any]:
    out: dict[str, Any] = jsonable(record)
    out.pop("graph", None)
    out["id"] = out.pop("iri")
    out["short_id"] = short_id(record.iri)
    return out


def decisions_json(records: list[DecisionRecord]) -> list[dict[str, Any]]:
    out = []
    for record in records:
        item: dict[str, Any] = jsonable(record)
        item["id"] = item.pop("iri")
        item["short_id"] = short_id(record.iri)
        out.append(item)
    return out


# -- memories ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ListMemoriesArgs:
    """``valid_at``: which values held then (valid time); ``entity`` and ``predicate``: only
    memories with a claim about that subject, with that predicate."""

    kind: MemoryKind | None = None
    status: MemoryStatus | None = None
    limit: int = 50
    offset: int = 0
    valid_at: datetime | None = None
    entity: str | None = None
    predicate: str | None = None
    known_at: datetime | None = None

    @classmethod
    def parse(cls, raw: object) -> ListMemoriesArgs:
        f = Fields(raw)
        args = cls(
            f.choice("kind", MemoryKind),
            f.choice("status", MemoryStatus),
            f.integer("limit", default=50, low=1, high=1000),
            f.integer("offset", default=0, low=0, high=10**6),
            f.when("valid_at"),
            f.text("entity", maximum=500),
            f.text("predicate", maximum=500),
            f.when("known_at"),
        )
        f.done()
        return args


def _term_iri(term: str) -> URIRef | None:
    """An ontology term as drafts name it (``schema:memberOf`` with kgmem's standard
    prefixes, or an IRI) as its IRI; None when it is no IRI, so it names no predicate (as a
    name no entity has names no entity), checked before any IRI is made of it."""
    prefix, _, local = term.strip().partition(":")
    known = prefix in PREFIXES and local and not local.startswith("//")
    text = PREFIXES[prefix] + local if known else term.strip()
    return URIRef(text) if iri_problem(text) is None else None


def list_memories(
    services: Services, principal: Principal, args: ListMemoriesArgs
) -> dict[str, Any]:
    """The caller's memories, newest first (quarantined ones with status=quarantined); with
    ``valid_at``, those whose valid time contains it (by default active, superseded or
    outdated ones: which value held then); with ``known_at``, as kgmem knew them then (record
    time: later memories left out, later status changes undone)."""
    predicate = None if args.predicate is None else _term_iri(args.predicate)
    if args.predicate is not None and predicate is None:
        return {"memories": []}
    read = MemoryList(services.store, services.queries).memories
    if args.known_at is not None:  # as kgmem knew them then (record time)
        known = KnownAt(services.store, services.queries, services.lifecycle.decisions)
        read = partial(known.memories, known_at=args.known_at)
    found = read(
        principal.uid,
        args.kind,
        args.status,
        limit=args.limit,
        offset=args.offset,
        valid_at=args.valid_at,
        entity=args.entity,
        predicate=predicate,
    )
    return {"memories": [summary_json(s) for s in found]}


@dataclass(frozen=True)
class GetMemoryArgs:
    id: URIRef

    @classmethod
    def parse(cls, raw: object, uid: str) -> GetMemoryArgs:
        f = Fields(raw)
        memory = node_id(uid, f.raw("id"), NodeKind.MEMORY)
        f.done()
        return cls(memory)


def get_memory(services: Services, principal: Principal, args: GetMemoryArgs) -> dict[str, Any]:
    """Every field of one memory, its claims, evidence and the decisions about it."""
    record = services.lifecycle.get(principal.uid, args.id)
    out = memory_json(record)
    out["decisions"] = decisions_json(
        services.lifecycle.decisions.history(principal.uid, [args.id])
    )
    return out


# -- pages -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadPageArgs:
    """One page or note: by ``path`` (as a search hit gives it, or a vault path) or by the
    ``entity`` (IRI or name) it is of."""

    path: str | None
    entity: str | None

    @classmethod
    def parse(cls, raw: object) -> ReadPageArgs:
        f = Fields(raw)
        args = cls(f.text("path", maximum=2000), f.text("entity", maximum=500))
        f.done()
        if (args.path is None) == (args.entity is None):
            raise ArgumentError("path", "give path or entity, one of them")
        return args


def read_page(services: Services, principal: Principal, args: ReadPageArgs) -> dict[str, Any]:
    """A page, playbook or note of the caller's, with its Markdown as stored."""
    uid, reader = principal.uid, services.page_reader
    if args.path is not None:
        found = reader.by_path(uid, args.path)
        if found is None:
            raise UnknownMemory(args.path[:200], "no such page or note for this user")
        return found.as_dict()
    assert args.entity is not None
    listing = MemoryList(services.store, services.queries)
    for entity in listing.entities(uid, args.entity):
        page = reader.by_subject(uid, entity)
        if page is not None:
            return page.as_dict()
    raise UnknownMemory(args.entity[:200], "no page of such an entity for this user")


# -- search and context ------------------------------------------------------------------


@dataclass(frozen=True)
class SearchArgs:
    query: str
    k: int
    kinds: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    entity: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    statuses: tuple[str, ...] | None = None

    @classmethod
    def parse(cls, raw: object, default_k: int = 8) -> SearchArgs:
        f = Fields(raw)
        args = cls(
            f.required_text("query"),
            f.integer("k", default=default_k, low=1, high=100),
            f.texts("kinds", maximum=20, each=32),
            f.texts("tags", maximum=20, each=64),
            f.text("entity", maximum=500),
            f.when("since"),
            f.when("until"),
            f.texts("statuses", maximum=20, each=32),
        )
        f.done()
        return args


def search(services: Services, principal: Principal, args: SearchArgs) -> dict[str, Any]:
    """memory_search: the best memories, pages and notes for a query, each with why."""
    span = None if args.since is None and args.until is None else (args.since, args.until)
    hits = services.search.memory_search(
        principal.uid,
        args.query,
        args.k,
        kinds=args.kinds,
        tags=args.tags,
        entity=args.entity,
        time_range=span,
        statuses=args.statuses,
    )
    results = []
    for hit in hits:
        item: dict[str, Any] = jsonable(hit)
        item["short_id"] = short_id(hit.id)
        results.append(item)
    return {"query": args.query, "results": results}


@dataclass(frozen=True)
class RetrieveArgs:
    task: str
    intent: Intent
    k: int = 30

    @classmethod
    def parse(cls, raw: object) -> RetrieveArgs:
        f = Fields(raw)
        task = f.required_text("task")
        intent = f.choice("intent", Intent) or Intent.EXECUTE
        args = cls(task, intent, f.integer("k", default=30, low=1, high=100))
        f.done()
        return args


def retrieve_memory(services: Services, principal: Principal, args: RetrieveArgs) -> dict[str, Any]:
    """A context packet for a task and intent: facts, one best procedure, episodes, their
    evidence and warnings."""
    packet = services.retrieval.retrieve_memory(principal.uid, args.task, args.intent, k=args.k)
    out: dict[str, Any] = jsonable(packet)
    return out


# -- review inbox and decisions ----------------------------------------------------------


@dataclass(frozen=True)
class LimitArgs:
    """Arguments of a tool that only takes how many to list (the review inbox, decisions)."""

    limit: int = 50

    @classmethod
    def parse(cls, raw: object) -> LimitArgs:
        f = Fields(raw)
        args = cls(f.integer("limit", default=50, low=1, high=1000))
        f.done()
        return args


def review_inbox(services: Services, principal: Principal, args: LimitArgs) -> dict[str, Any]:
    """Drafts waiting for a person, newest first."""
    found = MemoryList(services.store, services.queries).inbox(principal.uid, limit=args.limit)
    return {"memories": [summary_json(s) for s in found]}


def decisions_feed(services: Services, principal: Principal, args: LimitArgs) -> dict[str, Any]:
    """Every gate and lifecycle decision, newest first; each can be reverted."""
    records = services.lifecycle.decisions.feed(principal.uid, limit=args.limit)
    return {"decisions": decisions_json(records)}


@dataclass(frozen=True)
class PromptContextArgs:
    """What the host knows that the store does not: the account's name and timezone, and
    how many tokens the context may take (default: the ``context_budget_tokens`` setting)."""

    account_name: str | None = None
    timezone: str | None = None
    budget_tokens: int | None = None

    @classmethod
    def parse(cls, raw: object) -> PromptContextArgs:
        f = Fields(raw)
        name = f.text("account_name", maximum=200)
        zone = f.text("timezone", maximum=64)
        budget = f.integer(
            "budget_tokens", default=0, low=MIN_BUDGET_TOKENS, high=MAX_BUDGET_TOKENS
        )
        f.done()
        return cls(name, zone, budget or None)  # an unknown zone: shown, with no local time


def prompt_context(
    services: Services, principal: Principal, args: PromptContextArgs
) -> dict[str, Any]:
    """The pushed context: profile, short memory and playbook index within the budget, as
    the Markdown to put in a prompt and as its sections (what each cap or the budget left
    out is counted in ``truncated``)."""
    packet = services.context.prompt_context(
        principal.uid,
        account_name=args.account_name,
        timezone=args.timezone,
        budget_tokens=args.budget_tokens,
    )
    return {
        "markdown": packet.render(),
        "tokens": packet.tokens,
        "budget_tokens": packet.budget_tokens,
        "generated_at": packet.generated_at.isoformat(),
        "truncated": {
            "profile": packet.profile.truncated,
            "short_memory": packet.short_memory.truncated,
            "playbooks": packet.playbooks.truncated,
            "total": packet.truncated,
        },
        "profile": jsonable(packet.profile),
        "short_memory": jsonable(packet.short_memory.items),
        "playbooks": jsonable(packet.playbooks.items),
    }
