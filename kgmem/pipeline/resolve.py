"""Resolve (code + model tie-break): what each mention of the pass's drafts denotes.

Every name a draft uses (claim subjects and objects, its entities and their aliases; never
the user, whom the write gate maps to their own entity) is bound to one entity. Candidates
come from the user's kg graph by name or alias and from the entities already bound in this
pass, so two drafts naming one new person bind to one new entity. Candidates whose types are
disjoint with the mention's provisional types are set aside (a "Mercury" typed as a planet
never binds to the element or the company). Of the rest, one must be the unique best: at
least as good as every other on an exact name (over an alias), context (relations in the kg
graph to the other things the draft names, matching attributes) and agreeing types, and
better on one. A tie goes to the model (``ResolveTieBreak``) when one is configured, and its
answer must be an offered id or "new"; without a model a tie is a new entity, because
merging two different things is worse than keeping one thing twice.

New entities are written as shells (``kgm:Shell``) into the pass's proposal graph, in one
commit that also removes the shells an earlier failed attempt left. They reach the kg graph
only with a committed memory that uses them: reconcile plans each draft with
:class:`PassResolver`, which turns the draft's bindings into the quads the gate would write.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rdflib import Literal, URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.entities import (
    EntityMatch,
    EntityResolver,
    entity_quads,
    name_key,
    self_entity,
    types_compatible,
)
from kgmem.memory.ids import NodeKind, new_node
from kgmem.memory.model import DraftMemory
from kgmem.memory.planning import expand_term
from kgmem.ontology import EffectiveOntology, TermKind
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import NEW_ENTITY, EntityCandidate, EntityChoice
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.worklist import EntityBinding, PassDraft, worklist
from kgmem.store import Changeset, Quad, QueryRegistry, Term, TripleStore, UserGraphs
from kgmem.vocab import KGM, PREFIXES, RDF

if TYPE_CHECKING:
    import dspy

__all__ = ["PassResolver", "ResolveStage"]

# the names planning maps to the user's own entity (with the user id), never resolved here
_USER = frozenset({"i", "me", "my", "mine", "myself", "the user", "user"})
_NAMING = frozenset({RDF.type, KGM.name, KGM.alias, KGM.nameKey})
_FACTS = 8  # known facts shown per candidate in a tie-break
_STAGE = StageName.RESOLVE.value


@dataclass(frozen=True)
class _Mention:
    """One thing a draft names, under every name the draft gives it (the first is its name)."""

    names: tuple[str, ...]
    types: tuple[URIRef, ...]

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(name_key(n) for n in self.names)


@dataclass(frozen=True)
class _Scene:
    """What else a draft says: the identity evidence for each of its mentions."""

    keys: frozenset[str]  # every name key it uses, the user's aside
    user: bool  # whether it mentions the user
    values: Mapping[str, frozenset[tuple[URIRef, str]]]  # subject key -> (predicate, value)
    claims: tuple[tuple[frozenset[str], str], ...]  # (name keys, the claim as a line)
    text: str  # title, claims and quotes: the tie-break's context


@dataclass
class _Known:
    """An entity a mention may denote: one of the kg graph, or one this pass minted."""

    iri: URIRef
    name: str = ""
    created: bool = False
    names: set[str] = field(default_factory=set)  # keys of its kgm:name values
    stored: set[str] = field(default_factory=set)  # name keys the kg graph has
    written: dict[str, str] = field(default_factory=dict)  # every name it goes by, by key
    types: set[URIRef] = field(default_factory=set)
    links: set[str] = field(default_factory=set)  # name keys of entities it is related to
    linked: set[URIRef] = field(default_factory=set)  # and their IRIs
    values: set[tuple[URIRef, str]] = field(default_factory=set)  # its attributes
    facts: set[str] = field(default_factory=set)
    bound: bool = False  # a mention of this pass denotes it

    @property
    def keys(self) -> set[str]:
        return self.stored | set(self.written)


class ResolveStage:
    """Binds every mention of every draft to an entity; see the module docstring."""

    name = StageName.RESOLVE

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        work = worklist(state, self.name)
        run = _Run(ctx, self._ports)
        drafts = tuple(run.bind(entry) for entry in work.drafts)
        known = run.entities.values()
        _write_shells(ctx, [k for k in known if k.created])
        out = work.model_copy(update={"drafts": drafts})
        touched = sorted(str(k.iri) for k in known if k.bound and not k.created)
        return state.with_output(self.name, out.to_json()).with_dirty(touched)


class _Run:
    """One run of the stage: the entities seen so far, and the model once it is needed."""

    def __init__(self, ctx: PassContext, ports: PassPorts) -> None:
        self._ctx, self._models = ctx, ports.models
        self._resolver = EntityResolver(ctx.store, ctx.queries)
        self._effective = ports.ontology.effective(ctx.uid)
        self._lm: dspy.LM | None = None
        self._asked = False
        self.entities: dict[URIRef, _Known] = {}

    def bind(self, entry: PassDraft) -> PassDraft:
        scene = _scene(entry.draft, self._ctx.uid)
        bindings: dict[str, EntityBinding] = {}
        for mention in _mentions(entry.draft, self._ctx.uid):
            known, reason = self._decide(mention, scene)
            self._learn(known, mention, scene)
            for name in mention.names:
                bindings[name_key(name)] = _binding(known, mention, name, reason)
        return entry.model_copy(update={"bindings": bindings})

    def _decide(self, mention: _Mention, scene: _Scene) -> tuple[_Known, str]:
        found = self._candidates(mention)
        fits = [k for k in found if types_compatible(k.types, mention.types, self._effective)]
        aside = len(found) - len(fits)
        note = f"; {aside} candidate(s) of disjoint types set aside" if aside else ""
        if not found:
            return self._mint(mention), "no entity goes by that name: a new entity"
        if not fits:
            return self._mint(mention), "no compatible candidate: a new entity" + note
        scores = {k.iri: self._score(k, mention, scene) for k in fits}
        front = [k for k in fits if not any(_beats(scores[o.iri], scores[k.iri]) for o in fits)]
        if len(front) == 1:
            return front[0], _why(scores[front[0].iri], len(fits)) + note
        chosen, reason = self._tie_break(mention, front, scene)
        return (chosen or self._mint(mention)), reason + note

    def _candidates(self, mention: _Mention) -> list[_Known]:
        found: dict[URIRef, _Known] = {}
        for name in mention.names:
            for candidate in self._resolver.candidates(self._ctx.uid, name):
                found.setdefault(candidate.iri, self._load(candidate.iri))
        for known in self.entities.values():
            if known.bound and known.keys & mention.keys:
                found.setdefault(known.iri, known)
        return list(found.values())

    def _load(self, iri: URIRef) -> _Known:
        if iri not in self.entities:
            graph = UserGraphs(self._ctx.uid).kg
            rows = self._ctx.store.select(
                self._ctx.queries["pipeline/entity_context"], {"graph": graph, "entity": iri}
            )
            self.entities[iri] = _read(iri, rows)
        return self.entities[iri]

    def _score(self, known: _Known, mention: _Mention, scene: _Scene) -> tuple[int, int, int]:
        """(exact name, context, agreeing types): compared one candidate against another."""
        exact = int(bool(mention.keys & known.names))
        context = len(known.links & (scene.keys - mention.keys))
        context += int(scene.user and self_entity(self._ctx.uid) in known.linked)
        context += len(known.values & {v for k in mention.keys for v in scene.values.get(k, ())})
        agree = sum(
            any(
                self._effective.is_subclass(c, t) or self._effective.is_subclass(t, c)
                for c in known.types
            )
            for t in mention.types
        )
        return exact, context, agree

    def _mint(self, mention: _Mention) -> _Known:
        name = mention.names[0]
        known = _Known(new_node(self._ctx.uid, NodeKind.ENTITY), name, True, {name_key(name)})
        self.entities[known.iri] = known
        return known

    def _learn(self, known: _Known, mention: _Mention, scene: _Scene) -> None:
        """What the pass now knows of ``known``: the names, types and company it keeps here."""
        known.bound = True
        for name in mention.names:
            known.written.setdefault(name_key(name), name)
        known.types |= set(mention.types)
        known.links |= scene.keys - mention.keys
        if scene.user:
            known.linked.add(self_entity(self._ctx.uid))
        known.values |= {v for k in mention.keys for v in scene.values.get(k, ())}
        known.facts |= {line for keys, line in scene.claims if keys & mention.keys}

    def _tie_break(
        self, mention: _Mention, tied: Sequence[_Known], scene: _Scene
    ) -> tuple[_Known | None, str]:
        tie = f"{len(tied)} candidates tie"
        lm = self._model()
        if lm is None:
            return None, f"{tie} and no model is configured: a new entity rather than a merge"
        from kgmem.pipeline.programs import run_signature
        from kgmem.pipeline.signatures import ResolveTieBreak

        offered = {f"E{i}": known for i, known in enumerate(tied, start=1)}
        answer = run_signature(
            ResolveTieBreak,
            lm,
            _STAGE,
            mention=mention.names[0],
            context=scene.text,
            candidates=[_offer(id_, known) for id_, known in offered.items()],
        )
        choice = answer.decision
        if not isinstance(choice, EntityChoice):
            raise ModelOutputError(_STAGE, "decision is not an entity choice")
        picked = choice.candidate.strip()
        said = f": {choice.reason}" if choice.reason else ""
        if picked in offered:
            return offered[picked], f"{tie}; the model chose {picked}{said}"
        if picked == NEW_ENTITY:
            return None, f"{tie}; the model answered new{said}"
        return None, f"{tie}; the model answered {picked!r}, which was not offered: a new entity"

    def _model(self) -> dspy.LM | None:
        if not self._asked:
            self._lm, self._asked = self._models.lm(ModelGroup.MEMORY), True
        return self._lm


class PassResolver(EntityResolver):
    """The write gate's resolver with one draft's bindings: a bound name is the entity resolve
    chose (with the quads that add what the draft says of it, or that create it when it is
    new); any other name resolves as in the foreground."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, bindings: Mapping[str, EntityBinding]
    ) -> None:
        super().__init__(store, queries)
        self._bindings = dict(bindings)

    def resolve(
        self,
        uid: str,
        name: str,
        types: Sequence[URIRef],
        effective: EffectiveOntology,
        aliases: Iterable[str] = (),
        pending: dict[str, EntityMatch] | None = None,
    ) -> EntityMatch:
        binding = self._bindings.get(name_key(name))
        if binding is None:
            return super().resolve(uid, name, types, effective, aliases, pending)
        iri, more = URIRef(binding.iri), [*binding.aliases, *aliases]
        if binding.created:
            given = (URIRef(t) for t in binding.types)
            known = [t for t in given if effective.info(t).kind is TermKind.CLASS]
            classes = list(dict.fromkeys([*types, *known]))
            quads = entity_quads(uid, iri, binding.name, classes, more, set())
            return EntityMatch(iri, binding.name, frozenset(classes), True, tuple(quads))
        rows = self._store.select(
            self._queries["pipeline/entity_context"], {"graph": UserGraphs(uid).kg, "entity": iri}
        )
        stored = _read(iri, rows)
        added = [t for t in types if t not in stored.types]
        quads = entity_quads(uid, iri, None, added, more, set(stored.written.values()))
        label = stored.name if stored.names else name
        return EntityMatch(iri, label, frozenset(stored.types | set(types)), False, tuple(quads))


# -- reading drafts ------------------------------------------------------------------------


def _is_user(name: str, uid: str) -> bool:
    key = name_key(name)
    return key in _USER or key == name_key(uid)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _mentions(draft: DraftMemory, uid: str) -> list[_Mention]:
    """The things ``draft`` names, declared entities first; names a draft declares as aliases
    of each other (directly or through a third) are one thing."""
    named = [([e.name, *e.aliases], [expand_term(t) for t in e.types]) for e in draft.entities]
    for claim in draft.claims:
        named += [([n], []) for n in (claim.subject, claim.object) if n is not None]
    groups: list[_Mention] = []
    for names, types in named:
        mention = _Mention(_unique(n for n in names if not _is_user(n, uid)), tuple(types))
        if not mention.names:
            continue
        joined = [g for g in groups if g.keys & mention.keys]
        for group in reversed(joined):
            mention = _Mention(
                _unique([*group.names, *mention.names]), (*group.types, *mention.types)
            )
        at = groups.index(joined[0]) if joined else len(groups)
        groups = [g for g in groups if g not in joined]
        groups.insert(at, mention)
    return [_Mention(m.names, tuple(dict.fromkeys(m.types))) for m in groups]


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    """Each name once (by key), as first written."""
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(name_key(name), name)
    return tuple(seen.values())


def _scene(draft: DraftMemory, uid: str) -> _Scene:
    keys: set[str] = set()
    user = False
    values: dict[str, set[tuple[URIRef, str]]] = defaultdict(set)
    claims: list[tuple[frozenset[str], str]] = []
    for claim in draft.claims:
        ends = [n for n in (claim.subject, claim.object) if n is not None]
        user = user or any(_is_user(n, uid) for n in ends)
        named = frozenset(name_key(n) for n in ends if not _is_user(n, uid))
        keys |= named
        if claim.value is not None and not _is_user(claim.subject, uid):
            fact = (expand_term(claim.predicate), _norm(claim.value))
            values[name_key(claim.subject)].add(fact)
        said = claim.object if claim.object is not None else repr(claim.value)
        verb = f"not {claim.predicate}" if claim.negated else claim.predicate
        claims.append((named, f"{claim.subject} {verb} {said}"))
    for entity in draft.entities:
        names = (entity.name, *entity.aliases)
        user = user or any(_is_user(n, uid) for n in names)
        keys |= {name_key(n) for n in names if not _is_user(n, uid)}
    quotes = [f'- "{e.quote}"' for e in draft.evidence if e.quote]
    text = "\n".join(
        [f"title: {draft.title}", "claims:", *(f"- {line}" for _, line in claims)]
        + (["quotes:", *quotes] if quotes else [])
    )
    frozen = {k: frozenset(v) for k, v in values.items()}
    return _Scene(frozenset(keys), user, frozen, tuple(claims), text)


# -- reading and writing entities ----------------------------------------------------------


def _read(iri: URIRef, rows: Iterable[Mapping[str, Term]]) -> _Known:
    """An entity of the kg graph from its ``pipeline/entity_context`` rows."""
    known = _Known(iri)
    labels: set[str] = set()
    for row in rows:
        p, other, direction = row["p"], row["other"], str(row["direction"])
        assert isinstance(p, URIRef)
        if direction == "out" and p in _NAMING:
            if p == KGM.name:
                labels.add(str(other))
                known.names.add(name_key(str(other)))
            if p in (KGM.name, KGM.alias):
                known.written.setdefault(name_key(str(other)), str(other))
            elif p == KGM.nameKey:
                known.stored.add(str(other))
            elif isinstance(other, URIRef) and other not in (KGM.Entity, KGM.Shell):
                known.types.add(other)
            continue
        if isinstance(other, Literal):
            known.values.add((p, _norm(str(other))))
        elif isinstance(other, URIRef):
            known.linked.add(other)
        if (key := row.get("key")) is not None:
            known.links.add(str(key))
        known.facts.add(_fact(direction, p, other, row.get("name")))
    known.stored |= set(known.written)
    known.name = min(labels) if labels else min(known.written.values(), default=str(iri))
    return known


def _fact(direction: str, p: URIRef, other: Term, name: Term | None) -> str:
    if name is not None:
        end = str(name)
    else:
        end = _curie(other) if isinstance(other, URIRef) else repr(str(other))
    if direction == "in":
        return f"{end} {_curie(p)} this"
    if direction == "with":
        return f"remembered together with {end}"
    return f"{_curie(p)} {end}"


def _curie(iri: URIRef) -> str:
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return str(iri)


def _offer(id_: str, known: _Known) -> EntityCandidate:
    canonical = name_key(known.name)
    return EntityCandidate(
        id=id_,
        name=known.name,
        types=sorted(_curie(t) for t in known.types),
        aliases=sorted(n for k, n in known.written.items() if k != canonical),
        facts=sorted(known.facts)[:_FACTS],
    )


def _beats(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """``a`` is at least as good as ``b`` on every count and better on one."""
    return a != b and all(x >= y for x, y in zip(a, b, strict=True))


def _why(score: tuple[int, int, int], fits: int) -> str:
    exact, context, agree = score
    how = "exact name" if exact else "alias"
    if fits == 1:
        return f"{how}: the only compatible candidate"
    return f"{how}, {context} contextual match(es), {agree} agreeing type(s): best of {fits}"


def _binding(known: _Known, mention: _Mention, name: str, reason: str) -> EntityBinding:
    """A new entity's binding carries its name and the draft's other names for it as aliases
    (so each draft's memory creates it alike); an existing one's, the names it lacks."""
    types = tuple(str(t) for t in mention.types)
    if known.created:
        canonical = name_key(known.name)
        aliases = tuple(n for n in mention.names if name_key(n) != canonical)
        return EntityBinding(
            name=known.name,
            iri=str(known.iri),
            created=True,
            types=types,
            aliases=aliases,
            reason=reason,
        )
    aliases = tuple(n for n in mention.names if name_key(n) not in known.stored)
    return EntityBinding(name=name, iri=str(known.iri), types=types, aliases=aliases, reason=reason)


def _shell(known: _Known, graph: URIRef) -> list[Quad]:
    iri, canonical = known.iri, name_key(known.name)
    quads = [
        Quad(iri, RDF.type, KGM.Shell, graph),
        Quad(iri, RDF.type, KGM.Entity, graph),
        Quad(iri, KGM.name, Literal(known.name), graph),
    ]
    quads += [
        Quad(iri, KGM.alias, Literal(n), graph)
        for k, n in sorted(known.written.items())
        if k != canonical
    ]
    quads += [Quad(iri, KGM.nameKey, Literal(k), graph) for k in sorted(known.written)]
    quads += [Quad(iri, RDF.type, t, graph) for t in sorted(known.types)]
    return quads


def _write_shells(ctx: PassContext, created: Iterable[_Known]) -> None:
    """One commit: this run's shells in, those of an earlier failed attempt out."""
    graph = ctx.proposal
    stale = [
        quad
        for shell in list(ctx.store.quads(graph, None, RDF.type, KGM.Shell))
        for quad in ctx.store.quads(graph, shell.subject)
    ]
    fresh = [quad for known in created for quad in _shell(known, graph)]
    ctx.store.commit(Changeset.of(add=fresh, remove=stale))
