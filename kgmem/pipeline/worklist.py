"""What travels between consolidation stages: the pass's drafts, what was dropped and why,
the vocabulary it proposes and the entities its mentions denote. All of it is JSON, so it
banks in a checkpoint like any stage output.

A stage that transforms drafts leaves a :class:`Worklist` as its output (an item stage
leaves one per item; :func:`worklist` folds them in order). The next stage reads the
latest worklist with :func:`worklist` and returns a new one: drafts are never mutated,
only replaced, and a dropped draft keeps the stage and the reason that dropped it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from kgmem.memory.entities import name_key
from kgmem.memory.model import DraftMemory, EntityDraft
from kgmem.pipeline.proposals import TermCandidate, TermDecision
from kgmem.pipeline.stages import PassState, StageName

__all__ = [
    "Dropped",
    "EntityBinding",
    "PassDraft",
    "Undeclared",
    "Worklist",
    "worklist",
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class EntityBinding(_Model):
    """What one mention of a draft denotes: an existing entity or a new one (a shell in the
    proposal graph until a committed memory needs it)."""

    name: str  # the mention as the draft writes it
    iri: str
    created: bool = False
    #: class IRIs the draft gives the entity: every stated one, and the inferred ones that
    #: fit it (resolve drops an inferred type disjoint with the entity it binds)
    types: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    reason: str = ""
    #: classes the model's answer says the mention is (never written; the gate refuses one
    #: disjoint with a known entity's type, as it refuses a draft's type)
    said: tuple[str, ...] = ()


class PassDraft(_Model):
    """One draft of the pass, keyed by where it came from (stable across resumes)."""

    key: str
    draft: DraftMemory
    origin: tuple[str, ...] = ()  # contribution IRIs it came from
    #: entity name key -> the classes classify gave it only from a claim predicate's domain
    #: or range (also among the draft's entity types): provisional, they set no known
    #: entity aside in resolve
    inferred: dict[str, tuple[str, ...]] = {}
    #: mention name key -> what it denotes (filled by resolve)
    bindings: dict[str, EntityBinding] = {}
    #: terms assemble deferred: the memory waits for a vocabulary decision
    deferred_terms: tuple[str, ...] = ()
    #: mention name key -> the classes the same answer's typings give it, citing words the
    #: draft cites (:func:`~kgmem.pipeline.stages.classify.answer_types.quoted_types`): what
    #: the model says
    #: the mention is, never written, but checked as a draft's types are at the gate
    said: dict[str, tuple[str, ...]] = {}

    def proposed(self) -> DraftMemory:
        """The draft as the model proposed it: its entities with the classes the answer
        said they are (``said``) beside their own types. The write gate plans this one, so
        a said class is checked as a type is (a person the chat describes, said to be an
        organization, is a mislabel); the pass's bindings decide what is written."""
        if not self.said:
            return self.draft
        entities = list(self.draft.entities)
        for key, classes in self.said.items():
            at = next((n for n, e in enumerate(entities) if _names(e, key)), None)
            if at is None:
                name = _mention(self.draft, key)
                if name is not None:
                    entities.append(EntityDraft(name=name, types=classes))
                continue
            types = tuple(dict.fromkeys((*entities[at].types, *classes)))
            entities[at] = entities[at].model_copy(update={"types": types})
        return self.draft.model_copy(update={"entities": tuple(entities)})

    def stated(self) -> DraftMemory:
        """The draft with only the entity types it states: what is queued again, since the
        next pass infers the rest afresh (and must not take them for stated ones)."""
        if not self.inferred:
            return self.draft
        entities = tuple(_stated(e, self.inferred) for e in self.draft.entities)
        return self.draft.model_copy(update={"entities": entities})


def _names(entity: EntityDraft, key: str) -> bool:
    return any(name_key(n) == key for n in (entity.name, *entity.aliases))


def _mention(draft: DraftMemory, key: str) -> str | None:
    """The claim subject or object of ``draft`` that ``key`` is the key of."""
    ends = (n for c in draft.claims for n in (c.subject, c.object) if n is not None)
    return next((n for n in ends if name_key(n) == key), None)


def _stated(entity: EntityDraft, inferred: Mapping[str, tuple[str, ...]]) -> EntityDraft:
    guessed = set(inferred.get(name_key(entity.name), ()))
    return entity.model_copy(update={"types": tuple(t for t in entity.types if t not in guessed)})


class Dropped(_Model):
    """A draft a stage refused, with the stage, a stable code and a readable reason."""

    key: str
    stage: StageName
    code: str
    message: str
    #: when the drop refuses a whole draft: its refusal decision for the feed (N-Quads),
    #: written at commit (:mod:`kgmem.pipeline.refusals`); "" for less (one claim of a
    #: draft, an alias) or no proposal at all (sources waiting for a model)
    decision: str = ""


class Undeclared(_Model):
    """A term the pass uses that the user's effective ontology does not declare. Drafts
    carry ``iri`` (in the user's own term namespace) until assemble decides."""

    iri: str
    surface: str
    role: Literal["class", "property"]
    uses: tuple[str, ...] = ()  # keys of the drafts that use it
    candidates: tuple[TermCandidate, ...] = ()


class Worklist(_Model):
    drafts: tuple[PassDraft, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    undeclared: tuple[Undeclared, ...] = ()
    #: assemble's decisions, one per undeclared term (the schema-delta patch's source)
    decisions: tuple[TermDecision, ...] = ()

    def to_json(self) -> JsonValue:
        value: JsonValue = self.model_dump(mode="json")
        return value

    @classmethod
    def of(cls, value: JsonValue) -> Worklist:
        return cls.model_validate(value)

    def keys(self) -> list[str]:
        return [d.key for d in self.drafts]

    def draft(self, key: str) -> PassDraft:
        for item in self.drafts:
            if item.key == key:
                return item
        raise KeyError(key)

    @classmethod
    def merge(cls, parts: Iterable[Worklist]) -> Worklist:
        """One worklist of many (an item stage's), undeclared terms joined by IRI."""
        drafts: list[PassDraft] = []
        dropped: list[Dropped] = []
        undeclared: dict[str, Undeclared] = {}
        decisions: list[TermDecision] = []
        for part in parts:
            drafts += part.drafts
            dropped += part.dropped
            decisions += part.decisions
            for term in part.undeclared:
                known = undeclared.get(term.iri)
                if known is None:
                    undeclared[term.iri] = term
                else:
                    uses = tuple(dict.fromkeys((*known.uses, *term.uses)))
                    seen = {c.term for c in known.candidates}
                    extra = tuple(c for c in term.candidates if c.term not in seen)
                    undeclared[term.iri] = known.model_copy(
                        update={"uses": uses, "candidates": (*known.candidates, *extra)}
                    )
        return cls(
            drafts=tuple(drafts),
            dropped=tuple(dropped),
            undeclared=tuple(undeclared.values()),
            decisions=tuple(decisions),
        )


def worklist(state: PassState, before: StageName | None = None) -> Worklist:
    """The latest worklist a stage earlier than ``before`` left (all stages when None),
    with the drops of every earlier stage kept. An item stage's ``{key: worklist}`` output
    is folded in the order of its keys.

    Memoized per state (states are frozen): an item stage asks once per item."""
    key = (id(state), before)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and cached[0] is state:
        return cached[1]
    found = _worklist(state, before)
    with _LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = (state, found)
    return found


_CACHE: dict[tuple[int, StageName | None], tuple[PassState, Worklist]] = {}
_CACHE_SIZE = 32
_LOCK = threading.Lock()


def _worklist(state: PassState, before: StageName | None) -> Worklist:
    found: Worklist | None = None
    dropped: list[Dropped] = []
    for stage in StageName:
        if before is not None and stage.order >= before.order:
            break
        value = state.output(stage)
        if value is None:
            continue
        current = _as_worklist(value)
        if current is None:
            continue
        dropped += [d for d in current.dropped if d not in dropped]
        found = current
    if found is None:
        return Worklist()
    return found.model_copy(update={"dropped": tuple(dropped)})


def _as_worklist(value: JsonValue) -> Worklist | None:
    if not isinstance(value, Mapping):
        return None
    if "drafts" in value:
        return Worklist.of(value)
    parts = [Worklist.of(value[key]) for key in sorted(value) if isinstance(value[key], Mapping)]
    if not parts or len(parts) != len(value):
        return None
    return Worklist.merge(parts)
