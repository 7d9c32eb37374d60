"""GraphQL types of entities (types with ancestors, attributes, relations, pages) and of
ontology terms. Every field that reads the store goes through a dataloader."""

from __future__ import annotations

from enum import StrEnum

import strawberry
from rdflib import URIRef
from starlette.concurrency import run_in_threadpool

from kgmem.api.graphql_context import Attribute, PageInfo
from kgmem.api.graphql_fields import field
from kgmem.api.graphql_types import Ctx, Memory
from kgmem.api.tools_args import short_id
from kgmem.index.rows import EntityRow, RelatesRow
from kgmem.ontology import EffectiveOntology, TermHit

__all__ = ["Direction", "Entity", "EntityAttribute", "OntologyType", "Relation", "Term"]


@strawberry.enum
class Direction(StrEnum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


@strawberry.type(description="An ontology term.")
class Term:
    iri: str
    label: str


@strawberry.type(description="A catalogue term found by term search.")
class TermMatch:
    iri: str
    label: str
    kind: str
    ontology: str | None
    score: float
    matched: str

    @classmethod
    def from_hit(cls, hit: TermHit) -> TermMatch:
        return cls(
            iri=str(hit.term),
            label=hit.label,
            kind=hit.kind.value,
            ontology=None if hit.ontology is None else str(hit.ontology),
            score=hit.score,
            matched=hit.matched,
        )


@strawberry.type(description="A type of an entity with its ancestors in the user's ontology.")
class OntologyType:
    iri: str
    label: str
    ancestors: list[Term]


@strawberry.type(description="A literal-valued fact of an entity.")
class EntityAttribute:
    property: str
    value: str
    datatype: str | None

    @classmethod
    def of(cls, a: Attribute) -> EntityAttribute:
        return cls(property=a.property, value=a.value, datatype=a.datatype)


@strawberry.type(description="The entity's page and its current revision.")
class Page:
    id: strawberry.ID
    path: str
    title: str | None
    revision: int | None
    markdown: str | None

    @classmethod
    def of(cls, p: PageInfo) -> Page:
        return cls(
            id=strawberry.ID(p.iri),
            path=p.path,
            title=p.title,
            revision=p.revision,
            markdown=p.markdown,
        )


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
    out = []
    for iri in sorted(iris):
        term = URIRef(iri)
        ancestors = sorted(a for a in effective.ancestors(term) if a != term)
        out.append(
            OntologyType(
                iri=iri,
                label=effective.vocabulary.label(term),
                ancestors=[
                    Term(iri=str(a), label=effective.vocabulary.label(a)) for a in ancestors
                ],
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


@strawberry.type(description="Where a page of results ends.")
class PageCursor:
    has_next_page: bool
    end_cursor: str | None


@strawberry.type
class EntityConnection:
    nodes: list[Entity]
    page_info: PageCursor
    total: int


@strawberry.type
class MemoryConnection:
    nodes: list[Memory]
    page_info: PageCursor
