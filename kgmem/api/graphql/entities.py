"""GraphQL leaf types of an entity's parts (its types with ancestors, attributes, page) and of
ontology terms. The entity itself, with its relations and memories, is in :mod:`.nodes`."""

from __future__ import annotations

from enum import StrEnum

import strawberry

from kgmem.api.graphql.context import Attribute, PageInfo
from kgmem.ontology import TermHit

__all__ = [
    "Direction",
    "EntityAttribute",
    "OntologyType",
    "Page",
    "PageCursor",
    "Term",
    "TermMatch",
]


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
    ancestors: list[Term] = strawberry.field(
        description="what it is a kind of, nearest first: one term per label, none repeating"
        " the type's own (aligned vocabularies' copies of a class show once)"
    )


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


@strawberry.type(description="Where a page of results ends.")
class PageCursor:
    has_next_page: bool
    end_cursor: str | None
