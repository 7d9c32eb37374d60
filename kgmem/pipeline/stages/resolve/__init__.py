"""Resolve (code + model tie-break): what each mention of the pass's drafts denotes.

Every name a draft uses (claim subjects and objects, its entities and their aliases; never
the user, whom the write gate maps to their own entity) is bound to one entity. Candidates
come from the user's kg graph by name or alias and from the entities already bound in this
pass, so two drafts naming one new person bind to one new entity. Candidates whose types are
disjoint with a type the draft states for the mention, or with a class the model's answer
says it is where the draft cites it (the pass draft's ``said``, never written), are set
aside (a "Mercury" typed as a planet never binds to the element or the company); so is an
entity of this pass that another mention was said to be of a disjoint class. A type
classify only inferred from a claim's predicate sets nothing aside: "I work for Bea Hart"
does not make the known person Bea Hart an organization, it binds to her, the inferred type
is dropped and validation refuses the claim for the predicate's range. Of the rest, one
must be the unique best: at least as good as every other on an exact name (over an alias),
context (relations in the kg graph to the other things the draft names, matching
attributes) and agreeing types (stated or inferred), and better on one. A tie goes to the
model (``ResolveTieBreak``) when one is configured, and its answer must be an offered id or
"new"; without a model a tie is a new entity, because merging two different things is
worse than keeping one thing twice.

When every candidate is set aside, the write gate's tie rule still applies
(:meth:`~kgmem.memory.entities.EntityResolver.ties`): a name that is the speaker of a
message the draft cites, or of which the draft states a fact the candidate already has, is
that known entity whatever type the draft gives it (or its answer says). It binds there,
and reconcile refuses the draft with the disjointness
(:func:`~kgmem.memory.entities.type_clashes`): never a second entity of that name, never a
silent retype.

New entities are written as shells (``kgm:Shell``) into the pass's proposal graph, in one
commit that also removes the shells an earlier failed attempt left. They reach the kg graph
only with a committed memory that uses them: reconcile plans each draft with
:class:`PassResolver`, which turns the draft's bindings into the quads the gate would write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from rdflib import Literal, URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.entities import (
    EntityMatch,
    EntityResolver,
    MentionContext,
    entity_quads,
    key_variants,
    name_key,
    self_entity,
    type_clashes,
    types_compatible,
)
from kgmem.memory.model import DraftMemory
from kgmem.memory.planning import mention_context
from kgmem.ontology import EffectiveOntology, TermKind
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import NEW_ENTITY, EntityChoice
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.stages.resolve.candidates import (
    Known,
    beats,
    candidate_score,
    offer,
    read_known,
    verdict,
)
from kgmem.pipeline.stages.resolve.mentions import Mention, Scene, draft_mentions, draft_scene
from kgmem.pipeline.worklist import EntityBinding, PassDraft, worklist
from kgmem.store import Changeset, NodeKind, Quad, QueryRegistry, TripleStore, UserGraphs, new_node
from kgmem.vocab import KGM, RDF

if TYPE_CHECKING:
    import dspy

__all__ = ["PassResolver", "ResolveStage"]

_STAGE = StageName.RESOLVE.value


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
        self._ctx, self._models, self._gate = ctx, ports.models, ports.gate
        self._resolver = EntityResolver(ctx.store, ctx.queries)
        self._effective = ports.ontology.effective(ctx.uid)
        self._lm: dspy.LM | None = None
        self._asked = False
        self.entities: dict[URIRef, Known] = {}

    def bind(self, entry: PassDraft) -> PassDraft:
        scene = draft_scene(entry.draft, self._ctx.uid)
        ties = _Ties(self._resolver, self._ctx.uid, lambda: self.mention_context(entry.draft))
        bindings: dict[str, EntityBinding] = {}
        for mention in draft_mentions(entry.draft, self._ctx.uid, entry.inferred, entry.said):
            known, reason = self._decide(mention, scene, ties)
            kept = self._kept(known, mention)
            self._learn(known, mention, scene, kept)
            for name in mention.names:
                bindings[name_key(name)] = _binding(known, mention, name, reason, kept)
        return entry.model_copy(update={"bindings": bindings})

    def mention_context(self, draft: DraftMemory) -> MentionContext:
        """What ``draft`` says that ties its names to known entities (as the gate reads it)."""
        sources, _ = self._gate.sources_of(self._ctx.uid, draft)
        return mention_context(draft, sources.values(), self._effective)

    def _decide(self, mention: Mention, scene: Scene, ties: _Ties) -> tuple[Known, str]:
        found = self._candidates(mention)
        fits = [
            k for k in found if types_compatible(k.types | k.said, mention.vetoes, self._effective)
        ]
        aside = len(found) - len(fits)
        note = f"; {aside} candidate(s) of disjoint types set aside" if aside else ""
        if not found:
            return self._mint(mention), "no entity goes by that name: a new entity"
        if not fits:
            fits = [k for k in found if not k.created and ties.bind(mention, k.iri)]
            note = _TIED if fits else note
        if not fits:
            return self._mint(mention), "no compatible candidate: a new entity" + note
        scores = {
            k.iri: candidate_score(k, mention, scene, self._ctx.uid, self._effective) for k in fits
        }
        front = [k for k in fits if not any(beats(scores[o.iri], scores[k.iri]) for o in fits)]
        if len(front) == 1 or note == _TIED:  # tied: refused whichever it is, never a namesake
            best = min(front, key=lambda k: str(k.iri))
            return best, verdict(scores[best.iri], len(fits)) + note
        chosen, reason = self._tie_break(mention, front, scene)
        return (chosen or self._mint(mention)), reason + note

    def _candidates(self, mention: Mention) -> list[Known]:
        found: dict[URIRef, Known] = {}
        for name in mention.names:
            for candidate in self._resolver.candidates(self._ctx.uid, name):
                found.setdefault(candidate.iri, self._load(candidate.iri))
        # the pass's own entities by the keys the kg graph would find them by, so "Haddad &
        # Co." binds the "Haddad & Co. Ltd" an earlier draft of the pass named, as it would
        # once that draft is committed
        for known in self.entities.values():
            if known.bound and known.lookup & mention.lookup:
                found.setdefault(known.iri, known)
        return list(found.values())

    def _load(self, iri: URIRef) -> Known:
        if iri not in self.entities:
            graph = UserGraphs(self._ctx.uid).kg
            rows = self._ctx.store.select(
                self._ctx.queries["pipeline/entity_context"], {"graph": graph, "entity": iri}
            )
            self.entities[iri] = read_known(iri, rows)
        return self.entities[iri]

    def _mint(self, mention: Mention) -> Known:
        name = mention.names[0]
        known = Known(new_node(self._ctx.uid, NodeKind.ENTITY), name, True, {name_key(name)})
        self.entities[known.iri] = known
        return known

    def _kept(self, known: Known, mention: Mention) -> tuple[URIRef, ...]:
        """The types the draft gives ``known``: every stated one (one disjoint with the
        entity's is a clash reconcile refuses), and each inferred one that fits the entity
        (an inferred type is dropped where it does not: validation judges the claim)."""
        have = known.types | set(mention.types)
        fitting = [t for t in mention.inferred if types_compatible(have, [t], self._effective)]
        return tuple(dict.fromkeys([*mention.types, *fitting]))

    def _learn(self, known: Known, mention: Mention, scene: Scene, kept: Sequence[URIRef]) -> None:
        """What the pass now knows of ``known``: the names, types and company it keeps here
        (never a type disjoint with one it has: that draft is refused)."""
        known.bound = True
        for name in mention.names:
            known.written.setdefault(name_key(name), name)
        for cls in kept:
            if types_compatible(known.types, [cls], self._effective):
                known.types.add(cls)
        known.said |= set(mention.said)
        known.links |= scene.keys - mention.keys
        if scene.user:
            known.linked.add(self_entity(self._ctx.uid))
        known.values |= {v for k in mention.keys for v in scene.values.get(k, ())}
        known.facts |= {line for keys, line in scene.claims if keys & mention.keys}

    def _tie_break(
        self, mention: Mention, tied: Sequence[Known], scene: Scene
    ) -> tuple[Known | None, str]:
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
            candidates=[offer(id_, known) for id_, known in offered.items()],
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


_TIED = (
    "; every candidate is of a disjoint type, but the draft ties the name to this one (a cited"
    " message's speaker, or a fact it has): the clash is refused, no namesake is made"
)


class _Ties:
    """Whether one draft ties a mention to a known entity; what the draft says (its cited
    sources are read) is gathered only when a mention needs it."""

    def __init__(
        self, resolver: EntityResolver, uid: str, context: Callable[[], MentionContext]
    ) -> None:
        self._resolver, self._uid, self._read = resolver, uid, context
        self._context: MentionContext | None = None

    def bind(self, mention: Mention, entity: URIRef) -> bool:
        if self._context is None:
            self._context = self._read()
        context = self._context
        return any(self._resolver.ties(self._uid, n, entity, context) for n in mention.names)


class PassResolver(EntityResolver):
    """The write gate's resolver with one draft's bindings: a bound name is the entity resolve
    chose (with the quads that add what the draft says of it, or that create it when it is
    new, and the clashes of the types it gives a known entity, which the gate refuses); any
    other name resolves as in the foreground."""

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
        context: MentionContext | None = None,
    ) -> EntityMatch:
        binding = self._bindings.get(name_key(name))
        if binding is None:
            return super().resolve(uid, name, types, effective, aliases, pending, context)
        iri, more = URIRef(binding.iri), [*binding.aliases, *aliases]
        # resolve decided which of the draft's types the entity gets (an inferred one that
        # does not fit it is dropped), so the binding's types stand for ``types``
        given = (URIRef(t) for t in binding.types)
        classes = [t for t in given if effective.info(t).kind is TermKind.CLASS]
        if binding.created:
            quads = entity_quads(uid, iri, binding.name, classes, more, set())
            return EntityMatch(iri, binding.name, frozenset(classes), True, tuple(quads))
        rows = self._store.select(
            self._queries["pipeline/entity_context"], {"graph": UserGraphs(uid).kg, "entity": iri}
        )
        stored = read_known(iri, rows)
        # a class the answer said the mention is, disjoint with the entity's, is refused
        # as a type the draft gives it would be (it is never written either way)
        said = [URIRef(t) for t in binding.said if URIRef(t) not in classes]
        clashes = type_clashes(iri, stored.types, name, [*classes, *said], effective)
        refused = {v.value for v in clashes}
        added = [t for t in classes if t not in stored.types and t not in refused]
        quads = entity_quads(uid, iri, None, added, more, set(stored.written.values()))
        label = stored.name if stored.names else name
        held = frozenset(stored.types | set(added))
        return EntityMatch(iri, label, held, False, tuple(quads), clashes)


# -- new entities ------------------------------------------------------------------------


def _binding(
    known: Known, mention: Mention, name: str, reason: str, kept: Sequence[URIRef]
) -> EntityBinding:
    """A new entity's binding carries its name and the draft's other names for it as aliases
    (so each draft's memory creates it alike); an existing one's, the names it lacks. Both
    carry the types the draft gives the entity (``kept``)."""
    types = tuple(str(t) for t in kept)
    said = tuple(str(t) for t in mention.said)
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
            said=said,
        )
    aliases = tuple(n for n in mention.names if name_key(n) not in known.stored)
    return EntityBinding(
        name=name, iri=str(known.iri), types=types, aliases=aliases, reason=reason, said=said
    )


def _shell(known: Known, graph: URIRef) -> list[Quad]:
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
    keys = {v for n in known.written.values() for v in key_variants(n)} | set(known.written)
    quads += [Quad(iri, KGM.nameKey, Literal(k), graph) for k in sorted(keys)]
    quads += [Quad(iri, RDF.type, t, graph) for t in sorted(known.types)]
    return quads


def _write_shells(ctx: PassContext, created: Iterable[Known]) -> None:
    """One commit: this run's shells in, those of an earlier failed attempt out."""
    graph = ctx.proposal
    stale = [
        quad
        for shell in list(ctx.store.quads(graph, None, RDF.type, KGM.Shell))
        for quad in ctx.store.quads(graph, shell.subject)
    ]
    fresh = [quad for known in created for quad in _shell(known, graph)]
    ctx.store.commit(Changeset.of(add=fresh, remove=stale))
