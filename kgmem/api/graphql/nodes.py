"""The GraphQL node types that lead to each other: memories, the decisions about them, and
entities with their relations. A memory lists its entities and history, an entity its
memories, a decision its memory; every field that reads the store goes through a dataloader
(:mod:`kgmem.api.graphql.context`). The leaf types they use are in :mod:`.types` (sources,
evidence, claims) and :mod:`.entities` (ontology types, attributes, pages).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import strawberry
from rdflib import Literal, URIRef
from rdflib.namespace import XSD
from starlette.concurrency import run_in_threadpool

from kgmem.api.graphql.entities import (
    Direction,
    EntityAttribute,
    OntologyType,
    Page,
    PageCursor,
    Term,
)
from kgmem.api.graphql.fields import field
from kgmem.api.graphql.types import Claim, Ctx, Evidence, RefusedDraft
from kgmem.api.tools.args import short_id
from kgmem.index.rows import EntityRow, RelatesRow
from kgmem.memory import (
    DecisionRecord,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
)
from kgmem.ontology import EffectiveOntology

__all__ = ["Decision", "Entity", "EntityConnection", "Memory", "MemoryConnection", "Relation"]


@strawberry.type(description="A decision of the write gate or the lifecycle.")
class Decision:
    id: strawberry.ID
    short_id: str
    action: str
    target: str | None = strawberry.field(
        description="the memory it acted on; none for a refusal (action refuse)"
    )
    reason: str
    actor: str
    at: datetime
    reverted_by: str | None
    draft: RefusedDraft | None = strawberry.field(
        default=None, description="a refusal's draft (title, kind, hash)"
    )

    @classmethod
    def from_record(cls, r: DecisionRecord) -> Decision:
        return cls(
            id=strawberry.ID(str(r.iri)),
            short_id=short_id(r.iri),
            action=r.action.value,
            target=None if r.target is None else str(r.target),
            reason=r.reason,
            actor=r.actor,
            at=r.at,
            reverted_by=None if r.reverted_by is None else str(r.reverted_by),
            draft=None if r.draft is None else RefusedDraft(**asdict(r.draft)),
        )

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Decision:
        """A decision as the decisions_feed tool returns it."""
        draft = d.get("draft")
        return cls(
            id=d["id"],
            short_id=d["short_id"],
            action=d["action"],
            target=d["target"],
            reason=d["reason"],
            actor=d["actor"],
            at=datetime.fromisoformat(d["at"]),
            reverted_by=d["reverted_by"],
            draft=None
            if draft is None
            else RefusedDraft(
                title=draft["title"], kind=MemoryKind(draft["kind"]), hash=draft["hash"]
            ),
        )

    @field("The memory it acted on, as it is now (null: none, or forgotten since).")
    async def memory(self, info: Ctx) -> Memory | None:
        return None if self.target is None else await load_memory(info, self.target)


def _iris(values: tuple[object, ...]) -> list[str]:
    return [str(v) for v in values]


@strawberry.type(description="An atomic memory with every field, its claims and evidence.")
class Memory:
    id: strawberry.ID
    short_id: str
    kind: MemoryKind
    status: MemoryStatus
    title: str
    excerpt: str
    body: str
    tags: list[str]
    confidence: float
    strength: float
    pinned: bool
    domain: str | None
    recorded_at: datetime | None  # null only when the store holds a time kgmem cannot read
    occurred_at: datetime | None
    expires_at: datetime | None
    valid_from: datetime | None
    valid_until: datetime | None
    retired_at: datetime | None
    last_used_at: datetime | None
    ttl: str | None = strawberry.field(description="an xsd:duration, e.g. P30D")
    use_count: int
    rating: int
    source_refs: list[str] = strawberry.field(description="web addresses it came from")
    about: list[str]
    supersedes: list[str]
    contradicts: list[str]
    supports: list[str] = strawberry.field(
        description="memories whose claims its evidence also states (a dated episode of a fact)"
    )
    derived_from: list[str] = strawberry.field(
        description="memories and sources it was derived from (its source_refs, a routine's runs)"
    )
    needs_terms: list[str]
    claims: list[Claim]
    evidence: list[Evidence]
    steps: list[str] = strawberry.field(description="a procedure's steps, in order")
    triggers: list[str] = strawberry.field(description="when a procedure applies")

    @classmethod
    def from_record(cls, r: MemoryRecord) -> Memory:
        ttl = None if r.ttl is None else str(Literal(r.ttl, datatype=XSD.duration))
        return cls(
            id=strawberry.ID(str(r.iri)),
            short_id=short_id(r.iri),
            kind=r.kind,
            status=r.status,
            title=r.title,
            excerpt=r.excerpt,
            body=r.body,
            tags=list(r.tags),
            confidence=r.confidence,
            strength=r.strength,
            pinned=r.pinned,
            domain=r.domain,
            recorded_at=r.recorded_at,
            occurred_at=r.occurred_at,
            expires_at=r.expires_at,
            valid_from=r.valid_from,
            valid_until=r.valid_until,
            retired_at=r.retired_at,
            last_used_at=r.last_used_at,
            ttl=ttl,
            use_count=r.use_count,
            rating=r.rating,
            source_refs=list(r.source_refs),
            about=_iris(r.about),
            supersedes=_iris(r.supersedes),
            contradicts=_iris(r.contradicts),
            supports=_iris(r.supports),
            derived_from=_iris(r.derived_from),
            needs_terms=_iris(r.needs_terms),
            claims=[
                Claim(
                    id=strawberry.ID(str(c.iri)),
                    subject=str(c.subject),
                    predicate=str(c.predicate),
                    object=None if c.object is None else str(c.object),
                    value=None if c.value is None else str(c.value),
                    negated=c.negated,
                )
                for c in r.claims
            ],
            evidence=[Evidence.from_record(e) for e in r.evidence],
            steps=list(r.steps),
            triggers=list(r.triggers),
        )

    @field("The memories that replaced this one (it lists what it replaced in supersedes).")
    async def superseded_by(self, info: Ctx) -> list[str]:
        return await info.context.superseded_by.load(str(self.id))

    @field("The decisions about this memory, newest first.")
    async def history(self, info: Ctx) -> list[Decision]:
        return [Decision.from_record(d) for d in await info.context.history.load(str(self.id))]

    @field("The entities this memory is about.")
    async def entities(self, info: Ctx) -> list[Entity]:
        rows = await info.context.entity.load_many(self.about)
        return [Entity.from_row(r) for r in rows if r is not None]


async def load_memory(info: Ctx, key: str) -> Memory | None:
    """The caller's memory ``key`` (IRI or short id), or None."""
    record = await info.context.memory.load(key)
    return None if record is None else Memory.from_record(record)


@strawberry.type(description="A fact between two entities, seen from one of them.")
class Relation:
    predicate: str
    direction: Direction
    inferred: bool = strawberry.field(description="implied by an inverse or symmetric property")
    memory: str | None = strawberry.field(description="an active memory asserting it")
    subject_id: str
    object_id: str

    @field("The entity at the other end.")
    async def other(self, info: Ctx) -> Entity | None:
        key = self.object_id if self.direction is Direction.OUT else self.subject_id
        row = await info.context.entity.load(key)
        return None if row is None else Entity.from_row(row)


def _types(effective: EffectiveOntology, iris: tuple[str, ...]) -> list[OntologyType]:
    vocabulary, out = effective.vocabulary, []
    for iri in sorted(iris):
        term = URIRef(iri)
        ancestors = vocabulary.distinct_ancestors((term,))
        out.append(
            OntologyType(
                iri=iri,
                label=vocabulary.label(term),
                ancestors=[Term(iri=str(a), label=vocabulary.label(a)) for a in ancestors],
            )
        )
    return out


@strawberry.type(description="A typed entity of the user's knowledge graph.")
class Entity:
    id: strawberry.ID
    short_id: str
    name: str | None
    aliases: list[str]
    type_iris: strawberry.Private[tuple[str, ...]]

    @classmethod
    def from_row(cls, row: EntityRow) -> Entity:
        return cls(
            id=strawberry.ID(row.id),
            short_id=short_id(row.id),
            name=row.name,
            aliases=sorted(row.aliases),
            type_iris=row.types,
        )

    @field("Its types, each with its ancestors.")
    async def types(self, info: Ctx) -> list[OntologyType]:
        effective = await run_in_threadpool(
            info.context.services.ontology.effective, info.context.uid
        )
        return _types(effective, self.type_iris)

    @field("Its literal-valued facts.")
    async def attributes(self, info: Ctx) -> list[EntityAttribute]:
        return [EntityAttribute.of(a) for a in await info.context.attributes.load(str(self.id))]

    @field("Facts with other entities, asserted and inferred.")
    async def relations(
        self, info: Ctx, direction: Direction = Direction.BOTH, inferred: bool | None = None
    ) -> list[Relation]:
        me, out = str(self.id), []
        for row in await info.context.relations.load(me):
            if inferred is not None and row.inferred != inferred:
                continue
            for side in _sides(row, me):
                if direction in (Direction.BOTH, side):
                    out.append(_relation(row, side))
        return out

    @field("Its page, when one was written.")
    async def page(self, info: Ctx) -> Page | None:
        found = await info.context.page.load(str(self.id))
        return None if found is None else Page.of(found)

    @field("The memories about it.")
    async def memories(self, info: Ctx) -> list[Memory]:
        keys = await info.context.about.load(str(self.id))
        records = await info.context.memory.load_many(keys)
        return [Memory.from_record(r) for r in records if r is not None]


def _sides(row: RelatesRow, me: str) -> list[Direction]:
    sides = []
    if row.source == me:
        sides.append(Direction.OUT)
    if row.target == me:
        sides.append(Direction.IN)
    return sides


def _relation(row: RelatesRow, side: Direction) -> Relation:
    return Relation(
        predicate=row.predicate,
        direction=side,
        inferred=row.inferred,
        memory=row.memory,
        subject_id=row.source,
        object_id=row.target,
    )


@strawberry.type
class EntityConnection:
    nodes: list[Entity]
    page_info: PageCursor
    total: int


@strawberry.type
class MemoryConnection:
    nodes: list[Memory]
    page_info: PageCursor
