"""What an entity page may say: :class:`PageInput` and its lines, read from the kg graph.

:func:`read_page_input` gathers an entity's names, types, the claims of its *active*
memories and the active memories about it (nothing pending, quarantined, archived,
superseded or forgotten ever reaches a page), each memory cited by the shortest ``m:`` id
that is unique on the page. A :class:`PageInput` keeps a canonical order, so equal inputs
are equal and have one :attr:`~PageInput.digest`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from hashlib import sha256
from typing import ClassVar

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.ontology import EffectiveOntology
from kgmem.pages.cache import EvidenceCache, PageCache, Ranked
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs, parse_node
from kgmem.vocab import KGM, OWL, RDF, RDFS, SDO

__all__ = [
    "PAGE_FACTS",
    "PAGE_MEMORIES",
    "RENDERER_VERSION",
    "ChangeLine",
    "EvidenceCache",
    "EvidenceLine",
    "FactLine",
    "MemoryLine",
    "PageCache",
    "PageInput",
    "read_page_input",
    "with_links",
]

RENDERER_VERSION = "4"  # part of the digest: a new page format re-renders every page once
#: A hub entity (the user themself) is about thousands of memories: its page shows the newest
#: ones and says so. The queries' LIMIT is half as many again plus one (pages/*.rq): what a
#: page cache keeps beyond the page (kgmem/pages/cache.py), and a row to know there is more.
PAGE_MEMORIES = 200
PAGE_FACTS = 400
PAGE_CHANGES = 50
MEMORIES = Ranked("pages/memories_about", "memory", PAGE_MEMORIES, PAGE_MEMORIES * 3 // 2 + 1)
CLAIMS = Ranked("pages/entity_claims", "claim", PAGE_FACTS, PAGE_FACTS * 3 // 2 + 1)
CHANGES = Ranked("pages/entity_changes", "memory", PAGE_CHANGES, PAGE_CHANGES * 3 // 2 + 1)
PAGE_ANCESTORS = 3  # what an entity's types are kinds of, nearest first
_EARLIEST = datetime.min.replace(tzinfo=UTC)
_PROCEDURAL = MemoryKind.PROCEDURAL.iri
_RECORD_TYPES = frozenset({KGM.Entity, KGM.Shell})
_ROOTS = frozenset({OWL.Thing, RDFS.Resource, SDO.Thing, KGM.Entity, KGM.Shell})


@dataclass(frozen=True)
class FactLine:
    """One claim of the entity's active memories, with every memory that asserts it."""

    predicate: str  # the property's label
    value: str  # the object's name, or the literal value
    memories: tuple[str, ...]  # citation ids
    negated: bool = False
    target: str = ""  # the object entity's IRI when the value names one of the user's entities
    link: str = ""  # its page in the vault ("Memory/entities/bob"), once known: a wikilink


@dataclass(frozen=True)
class MemoryLine:
    """One active memory about the entity."""

    memory: str  # citation id, e.g. "m:3f2a9c01"
    kind: MemoryKind
    title: str
    excerpt: str = ""
    steps: tuple[str, ...] = ()
    occurred_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.occurred_at is not None and self.occurred_at.tzinfo is None:
            object.__setattr__(self, "occurred_at", self.occurred_at.replace(tzinfo=UTC))


@dataclass(frozen=True)
class EvidenceLine:
    """What a memory on the page rests on: a quote and where it was said."""

    memory: str  # citation id
    quote: str
    source: str  # "chat c1, turn 3", or a note's vault path
    link: str = ""  # the note's wikilink target ("Journal/2026-11-02"), when it is a note


@dataclass(frozen=True)
class ChangeLine:
    """An older value of the entity's: a claim of a memory since superseded or outdated."""

    predicate: str
    value: str
    status: str  # "superseded" | "outdated"
    until: datetime | None  # when it stopped holding (valid until, else when it was retired)
    memory: str  # citation id
    negated: bool = False

    def __post_init__(self) -> None:
        if self.until is not None and self.until.tzinfo is None:
            object.__setattr__(self, "until", self.until.replace(tzinfo=UTC))


@dataclass(frozen=True)
class PageInput:
    """Everything an entity page may say; kept in a canonical order, so equal inputs are equal."""

    entity: URIRef
    name: str
    aliases: tuple[str, ...] = ()
    types: tuple[str, ...] = ()  # labels
    facts: tuple[FactLine, ...] = ()
    memories: tuple[MemoryLine, ...] = ()
    ancestors: tuple[str, ...] = ()  # labels of the types' superclasses (not the types)
    evidence: tuple[EvidenceLine, ...] = ()  # of the memories the page cites
    changes: tuple[ChangeLine, ...] = ()  # older values, newest first
    truncated: bool = False  # only the newest PAGE_MEMORIES memories and PAGE_FACTS claims
    citations: tuple[str, ...] = field(init=False)

    folder: ClassVar[str] = "entities"
    classes: ClassVar[tuple[URIRef, ...]] = (KGM.Page,)

    @property
    def subject(self) -> URIRef:
        """What the page is of: the entity."""
        return self.entity

    def __post_init__(self) -> None:
        def memory_order(m: MemoryLine) -> tuple[str, datetime, str, str]:
            return (m.kind.value, m.occurred_at or _EARLIEST, m.title.casefold(), m.memory)

        put = object.__setattr__
        put(self, "aliases", tuple(sorted(set(self.aliases))))
        put(self, "types", tuple(sorted(set(self.types))))
        put(
            self,
            "facts",
            tuple(sorted(self.facts, key=lambda f: (f.predicate, f.value, f.negated, f.target))),
        )
        put(self, "memories", tuple(sorted(self.memories, key=memory_order)))
        put(
            self,
            "ancestors",
            tuple(dict.fromkeys(a for a in self.ancestors if a not in self.types)),
        )
        put(self, "evidence", tuple(sorted(set(self.evidence), key=lambda e: (e.memory, e.quote))))
        put(
            self,
            "changes",
            tuple(
                sorted(
                    set(self.changes),
                    key=lambda c: (-(c.until or _EARLIEST).timestamp(), c.predicate, c.value),
                )
            ),
        )
        cited = {m.memory for m in self.memories} | {c for f in self.facts for c in f.memories}
        put(self, "citations", tuple(sorted(cited)))

    @cached_property  # an input is frozen: its digest, read several times a page, once
    def digest(self) -> str:
        """``sha256:<hex>`` of the renderer version and this input."""
        data = json.dumps([RENDERER_VERSION, asdict(self)], sort_keys=True, default=str)
        return "sha256:" + sha256(data.encode()).hexdigest()


def read_page_input(
    store: TripleStore,
    queries: QueryRegistry,
    uid: str,
    entity: URIRef,
    effective: EffectiveOntology,
    cache: PageCache | None = None,
) -> PageInput | None:
    """What ``entity``'s page may say, from the user's kg graph; None if it no longer exists
    (or was merged into another entity). ``cache``: what a follower keeps between reads
    (without one, every ranked query is read whole)."""
    cache = PageCache() if cache is None else cache
    graph = UserGraphs(uid).kg
    about = {"graph": graph, "entity": entity, "status": MemoryStatus.ACTIVE.iri}
    values: dict[URIRef, list[object]] = {  # only these: a hub entity has thousands of facts
        p: [q.object for q in store.quads(graph, entity, p)]
        for p in (RDF.type, KGM.mergedInto, KGM.name, KGM.alias)
    }
    if KGM.Entity not in values[RDF.type] or values[KGM.mergedInto]:
        return None
    memories, more_memories = cache.newest(store, queries, MEMORIES, uid, entity, about)
    claims, more_claims = cache.newest(store, queries, CLAIMS, uid, entity, about)
    truncated = more_memories or more_claims
    cite = _citations([URIRef(r["memory"]) for r in (*memories, *claims)])
    types = [t for t in values[RDF.type] if isinstance(t, URIRef) and t not in _RECORD_TYPES]
    label = effective.vocabulary.label
    changed = {"graph": graph, "entity": entity}
    changes, _ = cache.newest(store, queries, CHANGES, uid, entity, changed)
    cite = {**_citations([URIRef(r["memory"]) for r in changes]), **cite}
    procedures = sorted({URIRef(r["memory"]) for r in memories if r["kind"] == _PROCEDURAL})
    steps = [  # memory by memory: bound, an index lookup (a VALUES list scans the entity's)
        row
        for memory in procedures
        for row in store.select(queries["pages/memory_steps"], {**about, "memory": memory})
    ]
    return PageInput(
        entity=entity,
        name=_name(values[KGM.name]) or str(entity).rsplit("/", 1)[-1],
        aliases=tuple(str(a) for a in values[KGM.alias]),
        types=tuple(label(t) for t in types),
        facts=_facts(claims, cite, effective),
        memories=_memories(memories, _steps(steps), cite),
        truncated=truncated,
        ancestors=_ancestors(types, effective),
        evidence=_evidence(store, UserGraphs(uid), cite, cache.evidence),
        changes=_changes(changes, cite, effective),
    )


def _ancestors(types: Sequence[URIRef], effective: EffectiveOntology) -> tuple[str, ...]:
    """What the entity's types are kinds of, nearest first, at most PAGE_ANCESTORS, each
    once: labels that only repeat a type's (``persons``, ``agent generic`` for ``agent``)
    are left out."""
    vocabulary = effective.vocabulary
    named = [a for a in vocabulary.distinct_ancestors(types) if a not in _ROOTS]
    return tuple(vocabulary.label(a) for a in named[:PAGE_ANCESTORS])


def _evidence(
    store: TripleStore,
    graphs: UserGraphs,
    cite: Mapping[URIRef, str],
    cache: EvidenceCache | None = None,
) -> tuple[EvidenceLine, ...]:
    """The first quote (in text order) of each memory the page cites, and where it was said:
    a note's path (linked), a message's chat and turn. Read by quads, memory by memory (a
    query joining every memory about a hub entity with its evidence costs seconds)."""
    cache = {} if cache is None else cache
    lines = []
    for memory, citation in cite.items():
        if memory not in cache:
            cache[memory] = _first_quote(store, graphs, memory)
        if (found := cache[memory]) is not None:
            lines.append(EvidenceLine(citation, *found))
    return tuple(lines)


def _first_quote(
    store: TripleStore, graphs: UserGraphs, memory: URIRef
) -> tuple[str, str, str] | None:
    quoted: list[tuple[str, URIRef]] = []
    for link in store.quads(graphs.kg, memory, KGM.evidence):
        node = link.object
        if not isinstance(node, URIRef):
            continue
        said = [str(q.object) for q in store.quads(graphs.kg, node, KGM.quote)]
        where = [q.object for q in store.quads(graphs.kg, node, KGM.source)]
        if said and where and isinstance(where[0], URIRef):
            quoted.append((" ".join(said[0].split())[:300], where[0]))
    if not quoted:
        return None
    first, source = min(quoted)
    return (first, *_place(store, graphs, source))


def _place(store: TripleStore, graphs: UserGraphs, source: URIRef) -> tuple[str, str]:
    """Where a source was said, and the wikilink target when it is a note."""
    for quad in store.quads(graphs.sources, source, KGM.notePath):
        return str(quad.object), str(quad.object).rsplit(".", 1)[0]
    chat = [str(q.object) for q in store.quads(graphs.sources, source, KGM.chat)]
    turn = [str(q.object) for q in store.quads(graphs.sources, source, KGM.turn)]
    if chat and turn:
        return f"chat {chat[0]}, turn {turn[0]}", ""
    return str(source).rsplit("/", 1)[-1], ""


def _changes(
    rows: Iterable[Row], cite: Mapping[URIRef, str], effective: EffectiveOntology
) -> tuple[ChangeLine, ...]:
    found = []
    for row in rows:
        until = row.get("validUntil") or row.get("retiredAt")
        when = until.toPython() if isinstance(until, Literal) else None
        value = row.get("objectName") or row.get("value") or row.get("object")
        negated = isinstance(n := row.get("negated"), Literal) and n.toPython() is True
        found.append(
            ChangeLine(
                effective.vocabulary.label(URIRef(row["predicate"])),
                str(value),
                str(row["status"]).rsplit("#", 1)[-1],
                when if isinstance(when, datetime) else None,
                cite[URIRef(row["memory"])],
                negated,
            )
        )
    return tuple(found)


def _name(names: Sequence[object]) -> str | None:
    """The preferred name: untagged or English first, then in order of the text."""
    found = [n for n in names if isinstance(n, Literal)]
    found.sort(key=lambda n: (n.language not in (None, "en"), str(n)))
    return str(found[0]) if found else None


def _citations(memories: Iterable[URIRef]) -> dict[URIRef, str]:
    """``m:`` + the shortest id prefix (8 hex digits or more) unique on this page."""
    locals_ = {m: _local_id(m) for m in memories}
    for length in range(8, 65):
        ids = {m: "m:" + local[:length] for m, local in locals_.items()}
        if len(set(ids.values())) == len(ids):
            return ids
    return {m: "m:" + local for m, local in locals_.items()}


def _local_id(memory: URIRef) -> str:
    try:
        return parse_node(memory)[2]
    except GraphNameError:
        return sha256(str(memory).encode()).hexdigest()


def _facts(
    rows: Iterable[Row], cite: Mapping[URIRef, str], effective: EffectiveOntology
) -> tuple[FactLine, ...]:
    claims: dict[URIRef, Row] = {}
    names: dict[URIRef, list[object]] = defaultdict(list)
    for row in rows:  # an object with two names (languages) gives a row per name
        claims[URIRef(row["claim"])] = row
        names[URIRef(row["claim"])].append(row.get("objectName"))
    found: dict[tuple[str, str, bool, str], set[str]] = defaultdict(set)
    for claim, row in claims.items():
        value = _name(names[claim]) or row.get("value") or row.get("object")
        negated = isinstance(n := row.get("negated"), Literal) and n.toPython() is True
        label = effective.vocabulary.label(URIRef(row["predicate"]))
        obj = row.get("object")
        target = str(obj) if isinstance(obj, URIRef) and names[claim] != [None] else ""
        found[(label, str(value), negated, target)].add(cite[URIRef(row["memory"])])
    return tuple(
        FactLine(p, v, tuple(sorted(m)), n, target) for (p, v, n, target), m in found.items()
    )


def _steps(rows: Iterable[Row]) -> dict[URIRef, tuple[str, ...]]:
    by_memory: dict[URIRef, list[tuple[int, str]]] = defaultdict(list)
    for row in rows:
        position = row["position"]
        number = position.toPython() if isinstance(position, Literal) else 0
        by_memory[URIRef(row["memory"])].append((int(number), str(row["instruction"])))
    return {m: tuple(text for _, text in sorted(steps)) for m, steps in by_memory.items()}


def _memories(
    rows: Iterable[Row], steps: Mapping[URIRef, tuple[str, ...]], cite: Mapping[URIRef, str]
) -> tuple[MemoryLine, ...]:
    lines: dict[URIRef, MemoryLine] = {}
    for row in rows:
        memory = URIRef(row["memory"])
        occurred = row.get("occurredAt")
        when = occurred.toPython() if isinstance(occurred, Literal) else None
        lines[memory] = MemoryLine(
            memory=cite[memory],
            kind=MemoryKind(str(row["kind"]).rsplit("#", 1)[-1]),
            title=str(row["title"]),
            excerpt=str(row.get("excerpt") or ""),
            steps=steps.get(memory, ()),
            occurred_at=when if isinstance(when, datetime) else None,
        )
    return tuple(lines.values())


def with_links(page: PageInput, links: Mapping[str, str]) -> PageInput:
    """``page`` with each fact about another entity linked to that entity's page
    (``links``: entity IRI -> vault link such as ``Memory/entities/bob``)."""
    facts = tuple(replace(f, link=links.get(f.target, "")) if f.target else f for f in page.facts)
    return replace(page, facts=facts)
