"""The note tools: read a note back, list the short notes (consolidated or not), forget one.

A short note (``memory_remember``) is what the agent wrote, kept as a source until a
consolidation pass takes it (:mod:`kgmem.memory.notes`); an external note is a file of the
user's vault, read-only here (it is changed or removed in the vault)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rdflib import URIRef

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import Fields, jsonable, node_id, short_id
from kgmem.errors import GraphNameError, UnknownMemory
from kgmem.memory import NodeKind, parse_node

__all__ = [
    "ForgetNoteArgs",
    "GetNoteArgs",
    "ListNotesArgs",
    "forget_note",
    "get_note",
    "list_notes",
]

AGENT = "agent"

_NOTE_KINDS = (NodeKind.SHORT_NOTE, NodeKind.NOTE)


@dataclass(frozen=True)
class GetNoteArgs:
    """A note's id: its IRI, or its short id (a short note's or an external note's)."""

    ids: tuple[URIRef, ...]

    @classmethod
    def parse(cls, raw: object, uid: str) -> GetNoteArgs:
        f = Fields(raw)
        value = f.raw("id")
        f.done()
        return cls(_note_ids(uid, value))


def _note_ids(uid: str, value: object) -> tuple[URIRef, ...]:
    """What a note id may name: a short id names a short note or an external note (both
    IRIs, the short note's first), an IRI names one of the user's notes."""
    if isinstance(value, str) and "/" not in value and ":" not in value:
        return tuple(node_id(uid, value, kind) for kind in _NOTE_KINDS)
    try:
        owner, kind, _ = parse_node(str(value))
    except GraphNameError:
        raise UnknownMemory(str(value)[:100], "no such note for this user") from None
    if owner != uid or kind not in _NOTE_KINDS:
        raise UnknownMemory(str(value), "no such note for this user")
    return (URIRef(str(value)),)


def get_note(services: Services, principal: Principal, args: GetNoteArgs) -> dict[str, Any]:
    """A note by id, as memory_remember answered it: a short note or a note's revision."""
    found = services.sources.get(principal.uid, [str(i) for i in args.ids])
    if not found:
        raise UnknownMemory(str(args.ids[0]), "no such note for this user")
    record = next(iter(found.values()))
    out: dict[str, Any] = jsonable(record)
    out["id"] = out.pop("iri")
    out["short_id"] = short_id(record.iri)
    return out


@dataclass(frozen=True)
class ListNotesArgs:
    consolidated: bool | None = None
    limit: int = 50
    offset: int = 0

    @classmethod
    def parse(cls, raw: object) -> ListNotesArgs:
        f = Fields(raw)
        args = cls(
            f.boolean("consolidated"),
            f.integer("limit", default=50, low=1, high=1000),
            f.integer("offset", default=0, low=0, high=10**6),
        )
        f.done()
        return args


def list_notes(services: Services, principal: Principal, args: ListNotesArgs) -> dict[str, Any]:
    """The caller's short notes, newest first, each marked consolidated or not."""
    notes, total = services.notes.listing(
        principal.uid, consolidated=args.consolidated, offset=args.offset, limit=args.limit
    )
    out = []
    for note in notes:
        item: dict[str, Any] = jsonable(note)
        item["id"] = item.pop("iri")
        item["short_id"] = short_id(note.iri)
        out.append(item)
    return {"notes": out, "total": total}


@dataclass(frozen=True)
class ForgetNoteArgs:
    id: URIRef

    @classmethod
    def parse(cls, raw: object, uid: str) -> ForgetNoteArgs:
        f = Fields(raw)
        value = f.raw("id")
        f.done()
        first = _note_ids(uid, value)[0]  # a short id: the short note's
        if parse_node(str(first))[1] is NodeKind.NOTE:
            raise UnknownMemory(
                str(value), "an external note is the vault's: remove its file there instead"
            )
        return cls(first)


def forget_note(services: Services, principal: Principal, args: ForgetNoteArgs) -> dict[str, Any]:
    """Purge one short note (refused, naming them, while memories quote it)."""
    tombstone = services.notes.forget(principal.uid, args.id, AGENT)
    services.feed.drain(principal.uid)  # search forgets it now, not at the next drain
    return {"id": str(args.id), "action": "forget", "decision": str(tombstone)}
