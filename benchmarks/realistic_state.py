"""The realistic suite's end-state checks: what memory holds after a conversation's feed.

Per conversation and path, one user (new, empty) gets the conversation's messages
first-hand, then the drafts of its ``feed`` (what a careful model writes over the
conversation, in order): each through the gate on the draft path, or all of them as the
answer of one consolidation pass's recorded model (and its follow-ups) on the other. Then
each of the conversation's ``checks`` is read through kgmem's public services only - the
entities (the GraphQL entity tables), memory search, memories (the lifecycle), context
packets and the prompt context:

- ``one_entity`` ``names``: exactly one entity answers to any of the names (its name or an
  alias), and with ``"self": true`` it is the user's own entity;
- ``alias`` ``names``: one entity answers to all of the names;
- ``apart`` ``names``: each name is an entity's, no entity answers to two of them;
- ``count`` ``name``, ``count``: exactly that many entities answer to the name (Mercury the
  planet and Mercury the message broker are two);
- ``active`` / ``closed`` ``draft``: the memory that feed draft became is active / has its
  valid time closed (superseded, outdated, or a ``valid_until``);
- ``current`` ``query``, ``finds``, optional ``not`` (list): among the first 5 memories
  search returns for the query, the first that mentions ``finds`` or a ``not`` value (in its
  title, excerpt, claim values or the names of its claim objects) mentions ``finds`` and no
  ``not`` value;
- ``steps`` ``task``, ``draft``: the context packet for the task (intent execute) shows the
  draft's memory as its procedure with the draft's steps;
- ``profile`` ``name``: the prompt context's profile names the user so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from correctness_core import prepare
from correctness_pass import CaseModel, Part, part, render, run_parts
from rdflib import URIRef
from realistic_data import sources
from realistic_run import CLOSED, draft_one, memory_of, steps_shown

from kgmem.api.graphql.context import UserTables
from kgmem.api.services import Services
from kgmem.errors import KgmemError
from kgmem.memory import MemoryStatus, name_key, self_entity
from kgmem.pipeline import Consolidation

SEARCH_K = 5


@dataclass(frozen=True)
class CheckResult:
    conversation: str
    check: str
    path: str
    ok: bool | None  # None: the path cannot run the check
    why: str = ""


def _world(conv: dict[str, Any]) -> dict[str, Any]:
    """The conversation as a case with no setup, for ``prepare``."""
    return {"id": conv["id"], "sources": sources(conv), "setup": [], "proposal": {}}


def feed_by_draft(
    services: Services, uid: str, conv: dict[str, Any], now: datetime
) -> dict[str, URIRef | None]:
    """Run the feed through the gate, one draft at a time; the memory each became."""
    prepared = prepare(services, uid, _world(conv), now)
    assert not isinstance(prepared, str)
    keys, _ = prepared
    out: dict[str, URIRef | None] = {}
    for name in conv["feed"]:
        item = draft_one(services, uid, conv["drafts"][name], keys)
        out[name] = item.memory
    return out


def feed_by_pass(
    services: Services,
    pipeline: Consolidation,
    model: CaseModel,
    uid: str,
    conv: dict[str, Any],
    now: datetime,
) -> dict[str, URIRef | None]:
    """Run the feed as one pass's answer (each draft's parts, in order: claims as extracted
    claims, a procedure as an extracted procedure); the memory each draft's first claim (or
    its procedure) became."""
    world = _world(conv)
    prepared = prepare(services, uid, world, now)
    assert not isinstance(prepared, str)
    keys, _ = prepared
    parts: list[Part] = []
    heads: dict[str, int] = {}
    for name in conv["feed"]:
        mine = render(dict(world, id=name, proposal=conv["drafts"][name]))
        head = next((n for n, p in enumerate(mine) if not p.typing), 0)
        heads[name] = len(parts) + head
        for p in mine:
            parts.append(part(parts, p.chat, p.claim, typing=p.typing, procedure=p.procedure))
    fates = run_parts(pipeline, model, uid, world, keys, parts) if parts else []
    return {name: memory_of(fates[heads[name]]) for name in heads}


def checks(
    services: Services,
    uid: str,
    conv: dict[str, Any],
    memories: dict[str, URIRef | None],
    path: str,
) -> list[CheckResult]:
    """Each of the conversation's checks after its feed ran as user ``uid``."""
    tables = UserTables(services, uid)
    out = []
    for chk in conv.get("checks", []):
        what = chk.get("names") or chk.get("draft") or chk.get("query") or chk.get("name")
        label = f"{chk['check']}:{what}"
        why = _CHECKS[chk["check"]](services, uid, tables, chk, conv, memories)
        out.append(CheckResult(conv["id"], label, path, not why, why))
    return out


def _names(tables: UserTables) -> dict[str, set[str]]:
    """Each entity's names (its name and aliases) in lookup form."""
    return {
        e.id: {name_key(n) for n in (e.name or "", *e.aliases) if n}
        for e in tables.all_entities().values()
    }


def _one_entity(
    services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any
) -> str:
    wanted = {name_key(n) for n in chk["names"]}
    found = [e for e, names in _names(tables).items() if names & wanted]
    if len(found) != 1:
        return f"{len(found)} entities answer to {chk['names']}"
    if chk.get("self") and found[0] != str(self_entity(uid)):
        return "the entity is not the user's own"
    return ""


def _alias(services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any) -> str:
    wanted = {name_key(n) for n in chk["names"]}
    if not any(wanted <= names for names in _names(tables).values()):
        return f"no entity answers to all of {chk['names']}"
    return ""


def _apart(services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any) -> str:
    names = _names(tables)
    for name in chk["names"]:
        if not any(name_key(name) in n for n in names.values()):
            return f"no entity answers to {name!r}"
    wanted = {name_key(n) for n in chk["names"]}
    if any(len(n & wanted) > 1 for n in names.values()):
        return f"one entity answers to two of {chk['names']}"
    return ""


def _count(services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any) -> str:
    found = sum(name_key(chk["name"]) in n for n in _names(tables).values())
    return "" if found == chk["count"] else f"{found} entities answer to {chk['name']!r}"


def _memory(services: Services, uid: str, memories: dict[str, URIRef | None], name: str) -> Any:
    memory = memories.get(name)
    if memory is None:
        return None
    try:
        return services.lifecycle.get(uid, memory)
    except KgmemError:
        return None


def _active(
    services: Services,
    uid: str,
    tables: UserTables,
    chk: dict[str, Any],
    conv: dict[str, Any],
    memories: dict[str, URIRef | None],
) -> str:
    record = _memory(services, uid, memories, chk["draft"])
    if record is None:
        return "the draft became no memory"
    return "" if record.status is MemoryStatus.ACTIVE else f"it is {record.status.value}"


def _closed(
    services: Services,
    uid: str,
    tables: UserTables,
    chk: dict[str, Any],
    conv: dict[str, Any],
    memories: dict[str, URIRef | None],
) -> str:
    record = _memory(services, uid, memories, chk["draft"])
    if record is None:
        return "the draft became no memory"
    if record.status in CLOSED or record.valid_until is not None:
        return ""
    return f"it is {record.status.value}, its valid time open"


def _mentions(services: Services, uid: str, tables: UserTables, hit: Any) -> str:
    parts = [hit.title, hit.excerpt]
    try:
        record = services.lifecycle.get(uid, URIRef(hit.id))
    except KgmemError:
        return " ".join(parts).casefold()
    objects = [str(c.object) for c in record.claims if c.object is not None]
    named = {k: e for k, e in tables.entities(objects).items() if k in objects}
    parts += [str(c.value) for c in record.claims if c.value is not None]
    parts += [e.name or "" for e in named.values()]
    return " ".join(parts).casefold()


def _current(services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any) -> str:
    """The first memory search finds that names the current value or an old one names the
    current one. A memory that says an old value no longer holds (all its claims negated)
    names no old value as current; one that names both ("switched from A to B") is the
    current one when it is active."""
    finds, others = chk["finds"].casefold(), [n.casefold() for n in chk.get("not", [])]
    hits = services.search.memory_search(uid, chk["query"], SEARCH_K, kinds=["memory"])
    for hit in hits:
        text = _mentions(services, uid, tables, hit)
        rest = text.replace(finds, " ")  # "UX researcher" is no old value in "senior UX ..."
        if finds in text and hit.status == "active":
            return ""
        if any(o in rest for o in others) and not _denies(services, uid, hit):
            return f"the first memory that names either is {hit.title!r}"
    return f"none of the first {SEARCH_K} memories names {chk['finds']!r}"


def _denies(services: Services, uid: str, hit: Any) -> bool:
    """Whether every claim of the hit's memory is negated ("no longer owns it")."""
    try:
        record = services.lifecycle.get(uid, URIRef(hit.id))
    except KgmemError:
        return False
    return bool(record.claims) and all(c.negated for c in record.claims)


def _steps(
    services: Services,
    uid: str,
    tables: UserTables,
    chk: dict[str, Any],
    conv: dict[str, Any],
    memories: dict[str, URIRef | None],
) -> str:
    draft = conv["drafts"][chk["draft"]]
    memory = memories.get(chk["draft"])
    return steps_shown(services, uid, chk["task"], memory, draft.get("steps", []), draft)


def _profile(services: Services, uid: str, tables: UserTables, chk: dict[str, Any], *_: Any) -> str:
    profile = services.context.prompt_context(uid).profile
    shown = " | ".join([profile.account_name or "", *profile.goes_by])
    return "" if name_key(chk["name"]) in name_key(shown) else f"the profile says {shown!r}"


_CHECKS = {
    "one_entity": _one_entity,
    "alias": _alias,
    "apart": _apart,
    "count": _count,
    "active": _active,
    "closed": _closed,
    "current": _current,
    "steps": _steps,
    "profile": _profile,
}
