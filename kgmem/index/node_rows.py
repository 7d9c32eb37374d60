"""A projected node's row from its values in the store: what the projection keeps of an
entity, a memory, a page or a source, read the same way for a rebuild and a refresh."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from rdflib import URIRef

from kgmem.index.rows import EntityRow, MemoryRow, PageRow, SourceRow
from kgmem.store import Row, Term, flag, instant, number
from kgmem.vocab import KGM, RDF

__all__ = [
    "PAGE_CLASSES",
    "SOURCE_TYPES",
    "Values",
    "entity_row",
    "fold",
    "memory_row",
    "page_row",
    "source_row",
    "text_of",
]

Values = dict[URIRef, list[Term]]
# Namespace attribute lookups are slow in rdflib and these run once per row.
_TYPE, _ENTITY, _MESSAGE = URIRef(RDF.type), URIRef(KGM.Entity), URIRef(KGM.Message)
_NAME, _ALIAS, _KIND, _STATUS = (URIRef(KGM[n]) for n in ("name", "alias", "kind", "status"))
_TITLE, _CONFIDENCE, _STRENGTH = (URIRef(KGM[n]) for n in ("title", "confidence", "strength"))
_RECORDED, _FROM, _UNTIL = (URIRef(KGM[n]) for n in ("recordedAt", "validFrom", "validUntil"))
_PINNED, _PATH, _ROLE = (URIRef(KGM[n]) for n in ("pinned", "path", "role"))
_CHAT, _TIMESTAMP = URIRef(KGM.chat), URIRef(KGM.timestamp)
_SOURCE_CLASSES = {
    KGM.TaskRecord: "taskRecord",
    KGM.ExternalNote: "externalNote",
    KGM.ShortNote: "shortNote",
}
_MESSAGE_ROLES = {"user": "userMessage", "assistant": "agentMessage", "tool": "toolResult"}
PAGE_CLASSES = {KGM.Page, KGM.Playbook}
SOURCE_TYPES = {KGM.Message, *_SOURCE_CLASSES}


def text_of(value: Term | None) -> str | None:
    """A term's text, or None for no term."""
    return None if value is None else str(value)


def _local(value: Term | None) -> str | None:
    return None if value is None else str(value).rsplit("#", 1)[-1]


def _instant(value: Term | None) -> datetime | None:
    """A time as Kùzu keeps it: naive UTC."""
    found = instant(value)
    return None if found is None else found.replace(tzinfo=None)


def _first(values: Values, predicate: URIRef) -> Term | None:
    """The least value (functional properties have one; a stray second must not make the
    projection depend on row order)."""
    found = values.get(predicate)
    return min(found, key=lambda t: (type(t).__name__, str(t))) if found else None


def entity_row(iri: URIRef, v: Values) -> EntityRow:
    return EntityRow(
        str(iri),
        text_of(_first(v, _NAME)),
        tuple(str(a) for a in v.get(_ALIAS, ())),
        tuple(str(t) for t in v.get(_TYPE, ()) if t != _ENTITY),
    )


def memory_row(iri: URIRef, v: Values, quarantined: bool) -> MemoryRow:
    pinned = _first(v, _PINNED)
    return MemoryRow(
        id=str(iri),
        kind=_local(_first(v, _KIND)),
        status="quarantined" if quarantined else _local(_first(v, _STATUS)),
        title=text_of(_first(v, _TITLE)),
        confidence=number(_first(v, _CONFIDENCE)),
        strength=number(_first(v, _STRENGTH)),
        recorded_at=_instant(_first(v, _RECORDED)),
        valid_from=_instant(_first(v, _FROM)),
        valid_until=_instant(_first(v, _UNTIL)),
        pinned=flag(pinned),
    )


def page_row(iri: URIRef, v: Values) -> PageRow:
    return PageRow(str(iri), text_of(_first(v, _PATH)), text_of(_first(v, _TITLE)))


def _source_type(v: Values) -> str | None:
    classes = set(v.get(_TYPE, ()))
    if _MESSAGE in classes:
        return _MESSAGE_ROLES.get(str(_first(v, _ROLE)), "message")
    return next((name for cls, name in sorted(_SOURCE_CLASSES.items()) if cls in classes), None)


def source_row(iri: URIRef, v: Values) -> SourceRow:
    return SourceRow(
        str(iri), _source_type(v), text_of(_first(v, _CHAT)), _instant(_first(v, _TIMESTAMP))
    )


def fold(rows: Iterable[Row], node: str) -> dict[URIRef, Values]:
    """``(node, property, value)`` rows to the values of each node by property."""
    found: dict[URIRef, Values] = {}
    for row in rows:
        iri, prop, value = row[node], row["property"], row["value"]
        if isinstance(iri, URIRef) and isinstance(prop, URIRef):
            found.setdefault(iri, defaultdict(list))[prop].append(value)
    return found
