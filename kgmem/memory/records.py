"""Stored memories: the frozen records the gate and lifecycle work with, and their RDF.

A memory lives in the user's ``kg`` graph (or, quarantined, in ``quarantine``) as one node
with its claims and evidence as their own nodes, and a procedure's steps as ``kgm:Step``
nodes (:func:`step_iri`, ordered by ``kgm:position``). :func:`memory_quads` writes a record;
:func:`read_memory` reads one back; the two round-trip exactly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from rdflib import Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from kgmem.memory.model import Authority, MemoryKind, MemoryStatus, SourceType, SupportKind
from kgmem.store import Quad, TripleStore, flag, instant, integer, number
from kgmem.vocab import KGM, RDF, claim_key

__all__ = [
    "ClaimRecord",
    "EvidenceRecord",
    "MemoryRecord",
    "claim_key",
    "memory_quads",
    "read_memory",
    "record_quads",
    "step_iri",
]


@dataclass(frozen=True)
class ClaimRecord:
    iri: URIRef
    subject: URIRef
    predicate: URIRef
    object: URIRef | None = None
    value: Literal | None = None
    negated: bool = False

    def key(self) -> tuple[URIRef, URIRef, Node | None, bool]:
        """What makes two claims the same claim, whatever their node ids."""
        return (self.subject, self.predicate, self.object or self.value, self.negated)


@dataclass(frozen=True)
class EvidenceRecord:
    iri: URIRef
    source: URIRef
    source_type: SourceType
    support: SupportKind
    authority: Authority
    quote: str | None = None
    span: tuple[int, int] | None = None
    agent_reported: bool = False
    confirms: URIRef | None = None  # the agent message a user confirmation confirms


@dataclass(frozen=True)
class MemoryRecord:
    iri: URIRef
    kind: MemoryKind
    status: MemoryStatus
    title: str
    confidence: float
    recorded_at: datetime | None  # None only when the store holds a time kgmem cannot read
    excerpt: str = ""
    body: str = ""
    tags: tuple[str, ...] = ()
    strength: float = 1.0
    pinned: bool = False
    domain: str | None = None
    about: tuple[URIRef, ...] = ()
    claims: tuple[ClaimRecord, ...] = ()
    evidence: tuple[EvidenceRecord, ...] = ()
    occurred_at: datetime | None = None
    ttl: timedelta | None = None
    expires_at: datetime | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    retired_at: datetime | None = None
    last_used_at: datetime | None = None
    use_count: int = 0
    rating: int = 0
    source_refs: tuple[str, ...] = ()
    supersedes: tuple[URIRef, ...] = ()
    contradicts: tuple[URIRef, ...] = ()
    supports: tuple[URIRef, ...] = ()  # memories whose claims its evidence also states
    derived_from: tuple[URIRef, ...] = ()
    needs_terms: tuple[URIRef, ...] = ()  # undeclared terms a pending memory waits for
    steps: tuple[str, ...] = ()  # a procedure's steps, in order (the one ordered field)
    triggers: tuple[str, ...] = ()  # the situations a procedure applies in
    graph: URIRef | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # RDF has no order: keep every multi-valued field sorted so records compare as sets.
        for name in (
            "tags",
            "source_refs",
            "about",
            "supersedes",
            "contradicts",
            "supports",
            "derived_from",
            "needs_terms",
            "claims",
            "evidence",
            "triggers",
        ):
            values = getattr(self, name)
            object.__setattr__(self, name, tuple(sorted(values, key=_sort_key)))


def step_iri(memory: URIRef, position: int) -> URIRef:
    """The node of a procedure's step: stable per position, so rewriting the steps changes
    only the nodes whose text changed."""
    return URIRef(f"{memory}#step{position}")


def _sort_key(value: object) -> str:
    return str(getattr(value, "iri", value))


def _dt(value: datetime) -> Literal:
    return Literal(value, datatype=XSD.dateTime)


def record_quads(record: MemoryRecord, graph: URIRef) -> list[Quad]:
    """Every triple of ``record`` (memory, claims, evidence) in ``graph``."""
    m, q = record.iri, []

    def add(s: URIRef, p: URIRef, o: Node) -> None:
        q.append(Quad(s, p, o, graph))  # type: ignore[arg-type]

    add(m, RDF.type, KGM.Memory)
    add(m, KGM.kind, record.kind.iri)
    add(m, KGM.status, record.status.iri)
    add(m, KGM.title, Literal(record.title))
    add(m, KGM.confidence, Literal(float(record.confidence), datatype=XSD.double))
    add(m, KGM.strength, Literal(float(record.strength), datatype=XSD.double))
    add(m, KGM.pinned, Literal(record.pinned))
    if record.recorded_at is not None:
        add(m, KGM.recordedAt, _dt(record.recorded_at))
    optional = [
        (KGM.excerpt, record.excerpt or None),
        (KGM.body, record.body or None),
        (KGM.domain, record.domain),
    ]
    for predicate, text in optional:
        if text:
            add(m, predicate, Literal(text))
    times = [
        (KGM.occurredAt, record.occurred_at),
        (KGM.expiresAt, record.expires_at),
        (KGM.validFrom, record.valid_from),
        (KGM.validUntil, record.valid_until),
        (KGM.retiredAt, record.retired_at),
        (KGM.lastUsedAt, record.last_used_at),
    ]
    for predicate, when in times:
        if when is not None:
            add(m, predicate, _dt(when))
    if record.ttl is not None:
        add(m, KGM.ttl, Literal(record.ttl, datatype=XSD.duration))
    if record.use_count:
        add(m, KGM.useCount, Literal(record.use_count))
    if record.rating:
        add(m, KGM.rating, Literal(record.rating))
    for tag in record.tags:
        add(m, KGM.tag, Literal(tag))
    for ref in record.source_refs:
        add(m, KGM.sourceRef, Literal(ref))
    for predicate, targets in (
        (KGM.about, record.about),
        (KGM.supersedes, record.supersedes),
        (KGM.contradicts, record.contradicts),
        (KGM.supports, record.supports),
        (KGM.derivedFrom, record.derived_from),
        (KGM.needsTerm, record.needs_terms),
    ):
        for target in targets:
            add(m, predicate, target)
    for claim in record.claims:
        add(m, KGM.claim, claim.iri)
        q += _claim_quads(claim, graph)
    for item in record.evidence:
        add(m, KGM.evidence, item.iri)
        q += _evidence_quads(item, graph)
    for trigger in record.triggers:
        add(m, KGM.trigger, Literal(trigger))
    for position, text in enumerate(record.steps, 1):
        step = step_iri(m, position)
        add(m, KGM.step, step)
        add(step, RDF.type, KGM.Step)
        add(step, KGM.position, Literal(position))
        add(step, KGM.instruction, Literal(text))
    return q


def _claim_quads(claim: ClaimRecord, graph: URIRef) -> list[Quad]:
    c = claim.iri
    value = claim.object if claim.object is not None else claim.value
    assert value is not None, claim
    out = [
        Quad(c, KGM.claimKey, Literal(claim_key(claim.subject, claim.predicate, value)), graph),
        Quad(c, RDF.type, KGM.Claim, graph),
        Quad(c, KGM.subject, claim.subject, graph),
        Quad(c, KGM.predicate, claim.predicate, graph),
    ]
    if claim.object is not None:
        out.append(Quad(c, KGM.object, claim.object, graph))
    if claim.value is not None:
        out.append(Quad(c, KGM.objectValue, claim.value, graph))
    if claim.negated:
        out.append(Quad(c, KGM.negated, Literal(True), graph))
    return out


def _evidence_quads(item: EvidenceRecord, graph: URIRef) -> list[Quad]:
    e = item.iri
    out = [
        Quad(e, RDF.type, KGM.Evidence, graph),
        Quad(e, KGM.source, item.source, graph),
        Quad(e, KGM.sourceType, item.source_type.iri, graph),
        Quad(e, KGM.supportKind, item.support.iri, graph),
        Quad(e, KGM.authority, item.authority.iri, graph),
    ]
    if item.quote is not None and item.span is not None:
        out += [
            Quad(e, KGM.quote, Literal(item.quote), graph),
            Quad(e, KGM.spanStart, Literal(item.span[0]), graph),
            Quad(e, KGM.spanEnd, Literal(item.span[1]), graph),
        ]
    if item.agent_reported:
        out.append(Quad(e, KGM.agentReported, Literal(True), graph))
    if item.confirms is not None:
        out.append(Quad(e, KGM.confirms, item.confirms, graph))
    return out


memory_quads = record_quads


def _by_predicate(store: TripleStore, node: URIRef, graph: URIRef) -> dict[URIRef, list[Node]]:
    found: dict[URIRef, list[Node]] = defaultdict(list)
    for quad in store.quads(graph, subject=node):
        found[quad.predicate].append(quad.object)
    return found


def _local(iri: Node, suffix: str = "") -> str:
    """``kgm:userAuthority`` → ``user`` (with ``suffix="Authority"``)."""
    local = str(iri).rsplit("#", 1)[-1]
    return local[: -len(suffix)] if suffix and local.endswith(suffix) else local


def _one(values: dict[URIRef, list[Node]], p: URIRef) -> Node | None:
    found = values.get(p)
    return found[0] if found else None


def _py(node: Node | None) -> object:
    return node.toPython() if isinstance(node, Literal) else node


def read_memory(store: TripleStore, iri: URIRef, graphs: Iterable[URIRef]) -> MemoryRecord | None:
    """The memory ``iri`` from the first of ``graphs`` that holds it, or None."""
    for graph in graphs:
        v = _by_predicate(store, iri, graph)
        if KGM.kind in v:
            return _record(store, iri, graph, v)
    return None


def _record(
    store: TripleStore, iri: URIRef, graph: URIRef, v: dict[URIRef, list[Node]]
) -> MemoryRecord:
    def text(p: URIRef) -> str:
        return str(_one(v, p) or "")

    def when(p: URIRef) -> datetime | None:
        return instant(_one(v, p))

    def iris(p: URIRef) -> tuple[URIRef, ...]:
        return tuple(sorted(o for o in v.get(p, ()) if isinstance(o, URIRef)))

    ttl = _py(_one(v, KGM.ttl))
    return MemoryRecord(
        iri=iri,
        kind=MemoryKind(_local(v[KGM.kind][0])),
        status=MemoryStatus(_local(v[KGM.status][0])),
        title=text(KGM.title),
        confidence=number(_one(v, KGM.confidence)) or 0.0,
        recorded_at=when(KGM.recordedAt),
        excerpt=text(KGM.excerpt),
        body=text(KGM.body),
        tags=tuple(sorted(str(t) for t in v.get(KGM.tag, ()))),
        strength=number(_one(v, KGM.strength)) or 0.0,
        pinned=flag(_one(v, KGM.pinned)),
        domain=str(_one(v, KGM.domain) or "") or None,
        about=iris(KGM.about),
        claims=tuple(
            sorted((_claim(store, c, graph) for c in iris(KGM.claim)), key=lambda c: str(c.iri))
        ),
        evidence=tuple(
            sorted(
                (_evidence(store, e, graph) for e in iris(KGM.evidence)), key=lambda e: str(e.iri)
            )
        ),
        occurred_at=when(KGM.occurredAt),
        ttl=ttl if isinstance(ttl, timedelta) else None,
        expires_at=when(KGM.expiresAt),
        valid_from=when(KGM.validFrom),
        valid_until=when(KGM.validUntil),
        retired_at=when(KGM.retiredAt),
        last_used_at=when(KGM.lastUsedAt),
        use_count=integer(_one(v, KGM.useCount)) or 0,
        rating=integer(_one(v, KGM.rating)) or 0,
        source_refs=tuple(sorted(str(r) for r in v.get(KGM.sourceRef, ()))),
        supersedes=iris(KGM.supersedes),
        contradicts=iris(KGM.contradicts),
        supports=iris(KGM.supports),
        derived_from=iris(KGM.derivedFrom),
        needs_terms=iris(KGM.needsTerm),
        steps=_steps(store, iris(KGM.step), graph),
        triggers=tuple(sorted(str(t) for t in v.get(KGM.trigger, ()))),
        graph=graph,
    )


def _steps(store: TripleStore, steps: Iterable[URIRef], graph: URIRef) -> tuple[str, ...]:
    """The instructions of ``steps`` by position (a step without one is left out)."""
    found: list[tuple[int, str]] = []
    for step in steps:
        v = _by_predicate(store, step, graph)
        position, instruction = integer(_one(v, KGM.position)), _one(v, KGM.instruction)
        if position is not None and instruction is not None:
            found.append((position, str(instruction)))
    return tuple(text for _, text in sorted(found))


def _claim(store: TripleStore, iri: URIRef, graph: URIRef) -> ClaimRecord:
    v = _by_predicate(store, iri, graph)
    obj, value = _one(v, KGM.object), _one(v, KGM.objectValue)
    subject, predicate = _one(v, KGM.subject), _one(v, KGM.predicate)
    assert isinstance(subject, URIRef) and isinstance(predicate, URIRef)
    return ClaimRecord(
        iri,
        subject,
        predicate,
        obj if isinstance(obj, URIRef) else None,
        value if isinstance(value, Literal) else None,
        flag(_one(v, KGM.negated)),
    )


def _evidence(store: TripleStore, iri: URIRef, graph: URIRef) -> EvidenceRecord:
    v = _by_predicate(store, iri, graph)
    start, end = integer(_one(v, KGM.spanStart)), integer(_one(v, KGM.spanEnd))
    source, confirms = _one(v, KGM.source), _one(v, KGM.confirms)
    assert isinstance(source, URIRef)
    return EvidenceRecord(
        iri=iri,
        source=source,
        source_type=SourceType(_local(v[KGM.sourceType][0])),
        support=SupportKind(_local(v[KGM.supportKind][0])),
        authority=Authority(_local(v[KGM.authority][0], "Authority")),
        quote=str(_one(v, KGM.quote)) if KGM.quote in v else None,
        span=(start, end) if start is not None and end is not None else None,
        agent_reported=flag(_one(v, KGM.agentReported)),
        confirms=confirms if isinstance(confirms, URIRef) else None,
    )
