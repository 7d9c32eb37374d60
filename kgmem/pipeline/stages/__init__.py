"""The contract between the pass runner and the nine consolidation stages.

A stage is one of three shapes, chosen by the stage's author:

- :class:`Stage`: ``run(ctx, state) -> state``, all or nothing. A failure re-runs the whole stage.
- :class:`ItemStage`: ``items(ctx, state)`` lists the stage's units of work by key and
  ``run_item(ctx, state, key)`` does one. The runner banks each :class:`ItemResult` as it
  completes, so a resumed stage runs only the items not yet banked. Item keys must be the
  same for the same state (derive them from contribution IRIs or claim ids, never from order
  of arrival or time).
- :class:`CommitStage` (the ``commit`` stage only): ``plan(ctx, state)`` returns the
  :class:`CommitPlan` whose :class:`~kgmem.store.Changeset` the runner applies in one store
  commit together with the pass record, the stage checkpoint and the projection outbox.

Stages read the store and may write the pass's proposal graph (``ctx.proposal``); only the
commit stage changes the user's other graphs, and only through its plan. Everything a stage
hands to the next travels in :class:`PassState`, which is JSON so it can be banked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, JsonValue
from rdflib import URIRef

from kgmem.clock import Clock
from kgmem.config import Settings
from kgmem.store import Changeset, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = [
    "AnyStage",
    "CommitPlan",
    "CommitStage",
    "ItemKey",
    "ItemResult",
    "ItemStage",
    "PassContext",
    "PassState",
    "Stage",
    "StageName",
]

ItemKey = str


class StageName(StrEnum):
    """The nine stages, in the order a pass runs them."""

    EXTRACT = "extract"
    GROUND = "ground"
    CLASSIFY = "classify"
    RESOLVE = "resolve"
    ASSEMBLE = "assemble"
    RECONCILE = "reconcile"
    VALIDATE = "validate"
    COMMIT = "commit"
    AUTHOR = "author"

    @property
    def order(self) -> int:
        """1-based position (``kgm:stageOrder``).

        >>> StageName.COMMIT.order
        8
        """
        return list(StageName).index(self) + 1

    @property
    def iri(self) -> URIRef:
        """The stage individual: ``kgm:extractStage`` and so on."""
        return URIRef(KGM[f"{self.value}Stage"])

    @property
    def following(self) -> StageName | None:
        """The next stage, or None after the last."""
        stages = list(StageName)
        return stages[self.order] if self.order < len(stages) else None

    @classmethod
    def from_iri(cls, iri: str) -> StageName:
        local = iri.rsplit("#", 1)[-1]
        return cls(local.removesuffix("Stage"))


class PassState(BaseModel):
    """What a pass has accumulated: the contributions it covers, each finished stage's output,
    and the entities it has touched (dirty until the pass commits or is abandoned).

    Frozen and JSON-round-trippable; stages return a new state, never mutate one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    contributions: tuple[str, ...] = ()
    outputs: dict[StageName, JsonValue] = {}
    dirty: tuple[str, ...] = ()

    @classmethod
    def initial(cls, contributions: Iterable[str]) -> PassState:
        return cls(contributions=tuple(str(c) for c in contributions))

    @property
    def contribution_iris(self) -> tuple[URIRef, ...]:
        return tuple(URIRef(c) for c in self.contributions)

    @property
    def dirty_iris(self) -> frozenset[URIRef]:
        return frozenset(URIRef(d) for d in self.dirty)

    def output(self, stage: StageName) -> JsonValue:
        """The output ``stage`` left, or None if it has not run (or left nothing)."""
        return self.outputs.get(stage)

    def with_output(self, stage: StageName, value: JsonValue) -> PassState:
        return self.model_copy(update={"outputs": {**self.outputs, stage: value}})

    def with_dirty(self, entities: Iterable[str]) -> PassState:
        merged = tuple(sorted({*self.dirty, *(str(e) for e in entities)}))
        return self.model_copy(update={"dirty": merged})

    def with_items(self, stage: StageName, results: Mapping[ItemKey, ItemResult]) -> PassState:
        """Fold an item stage's banked results in: ``{key: value}`` and their dirty entities."""
        value: dict[str, JsonValue] = {key: results[key].value for key in results}
        dirty = (entity for result in results.values() for entity in result.dirty)
        return self.with_output(stage, value).with_dirty(dirty)

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> PassState:
        return cls.model_validate_json(text)


class ItemResult(BaseModel):
    """The banked result of one item: a JSON value and the entities the item touched."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: JsonValue = None
    dirty: tuple[str, ...] = ()

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str) -> ItemResult:
        return cls.model_validate_json(text)


@dataclass(frozen=True)
class PassContext:
    """What a stage may use: who, which pass, where its proposal goes, and the ports."""

    uid: str
    pass_id: str
    pass_iri: URIRef
    store: TripleStore
    queries: QueryRegistry
    clock: Clock
    settings: Settings
    attempt: int = 0  # failed tries of the current stage so far

    @property
    def graphs(self) -> UserGraphs:
        return UserGraphs(self.uid)

    @property
    def proposal(self) -> URIRef:
        """The pass's proposal graph: stages write their virtual entity set here."""
        return self.graphs.proposal(self.pass_id)


@dataclass(frozen=True)
class CommitPlan:
    """The commit stage's answer: the change to apply to the user's graphs, and the state after.

    The runner applies ``changes`` in one commit with the pass record, the outbox entry, the
    proposal graph's removal and the clearing of the pass's dirty entities.
    """

    changes: Changeset
    state: PassState


@runtime_checkable
class Stage(Protocol):
    """A stage that runs as one unit."""

    @property
    def name(self) -> StageName: ...

    def run(self, ctx: PassContext, state: PassState) -> PassState: ...


@runtime_checkable
class ItemStage(Protocol):
    """A stage whose items are banked one by one; the runner folds them with
    :meth:`PassState.with_items` once every item is done."""

    @property
    def name(self) -> StageName: ...

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]: ...

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult: ...


@runtime_checkable
class CommitStage(Protocol):
    """The commit stage: plans the change, the runner applies it atomically."""

    @property
    def name(self) -> StageName: ...

    def plan(self, ctx: PassContext, state: PassState) -> CommitPlan: ...


AnyStage = Stage | ItemStage | CommitStage
