"""From a draft to what the gate decides on: grounded claims on resolved, typed entities.

Deterministic code only. Every claim is grounded (:mod:`kgmem.memory.grounding`); those that
fail are dropped with their reasons. Predicates and entity types must be terms of the user's
effective ontology or delta: an unknown term does not become a silent new term, it makes the
memory wait for a vocabulary decision (``needs_terms``). Names resolve to entities ("I" and
"me" to the user themself), with what the draft says that ties a name to a known entity (its
cited speakers, its facts): a name so tied to an entity of a disjoint type is a conflict
(``clashes``), and the gate refuses the draft. Values of date-ranged properties are typed
``xsd:date`` however the draft writes them, so one date written two ways is one value.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.memory.change import change_stated, ending_stated, moved_to
from kgmem.memory.discourse import TITLES, Identity, Kind, name_keys
from kgmem.memory.entities import (
    SELF_MENTIONS,
    EntityMatch,
    EntityResolver,
    MentionContext,
    entity_quads,
    is_self_mention,
    name_key,
    self_entity,
    self_quads,
    type_clashes,
)
from kgmem.memory.grounding import (
    BatchNames,
    GroundedEvidence,
    GroundingContext,
    GroundingResult,
    Refusal,
    ground_claim,
)
from kgmem.memory.model import (
    Authority,
    ClaimDraft,
    DraftMemory,
    SourceRecord,
    SourceType,
)
from kgmem.memory.prepass import DEFAULT_AUTHORITY_ORDER, rank
from kgmem.memory.records import ClaimRecord, EvidenceRecord
from kgmem.memory.surface import analyse, date_value, phrase
from kgmem.memory.unstructured import ground_unstructured
from kgmem.ontology import EffectiveOntology, TermKind, Violation
from kgmem.store import NodeKind, Quad, new_node
from kgmem.vocab import FOAF, PREFIXES, SDO

__all__ = ["DraftPlan", "expand_term", "grounding_context", "mention_context", "plan_draft"]


def expand_term(term: str) -> URIRef:
    """``schema:worksFor`` → its IRI with kgmem's standard prefixes; IRIs pass through."""
    prefix, _, local = term.partition(":")
    if prefix in PREFIXES and local and not local.startswith("//"):
        return URIRef(PREFIXES[prefix] + local)
    return URIRef(term)


@dataclass
class DraftPlan:
    """A draft's claims and evidence, grounded and resolved, before the pre-pass."""

    claims: list[ClaimRecord] = field(default_factory=list)
    evidence: list[EvidenceRecord] = field(default_factory=list)
    entity_quads: list[Quad] = field(default_factory=list)
    about: list[URIRef] = field(default_factory=list)
    needs_terms: list[URIRef] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    clashes: list[Violation] = field(default_factory=list)  # names tied to disjoint entities
    identities: dict[str, Identity] = field(default_factory=dict)  # whom the chat says
    #: the cited texts whose quoted sentence says the world changed, and when the newest
    #: of them was said: an older value of a claim's slot may close
    change_texts: list[str] = field(default_factory=list)
    change_at: datetime | None = None
    moved: list[int] = field(default_factory=list)  # claims whose thing moved to their subject
    authority: Authority | None = None
    confidence_cap: float = 1.0
    may_auto_activate: bool = True

    @property
    def grounded(self) -> bool:
        return bool(self.evidence)


@dataclass(frozen=True)
class PlanContext:
    uid: str
    account_name: str
    effective: EffectiveOntology
    resolver: EntityResolver
    sources: Mapping[str, SourceRecord]
    previous: Mapping[URIRef, SourceRecord]
    pending_entities: dict[str, EntityMatch]
    order: Sequence[Authority] = DEFAULT_AUTHORITY_ORDER
    history: Mapping[URIRef, tuple[SourceRecord, ...]] = field(default_factory=dict)
    user_names: tuple[str, ...] = ()
    batch: BatchNames | None = None  # the names of the batch the draft came in with others


def plan_draft(draft: DraftMemory, ctx: PlanContext) -> DraftPlan:
    plan = DraftPlan()
    types = _entity_types(draft, ctx, plan)
    grounding = grounding_context(
        draft,
        ctx.account_name,
        ctx.previous,
        history=ctx.history,
        user_names=ctx.user_names,
        effective=ctx.effective,
        batch=ctx.batch,
    )
    tied = mention_context(draft, ctx.sources.values(), ctx.effective)
    if not draft.claims:
        _ground_unstructured(draft, ctx, plan)
    said: list[ClaimDraft] = []  # the grounded claims, as plan.claims holds their records
    for index, claim in enumerate(draft.claims):
        result = ground_claim(
            claim, draft.evidence, ctx.sources, grounding, authority_order=ctx.order
        )
        if not result.grounded:
            plan.refusals += [f"claim {index}: {_why(r)}" for r in result.reasons]
            continue
        _absorb(plan, result, ctx)
        for term, identity in result.identities.items():
            plan.identities.setdefault(term, identity)
        plan.claims.append(_claim_record(claim, types, draft, ctx, plan, tied))
        said.append(claim)
    plan.moved = [
        n
        for n, claim in enumerate(said)
        if (thing := claim.object or claim.value) is not None
        and any(moved_to(analyse(text), thing, claim.subject) for text in plan.change_texts)
    ]
    for entity in draft.entities:
        match = _entity(entity.name, types, entity.aliases, ctx, plan, tied)
        plan.about.append(match.iri)
    plan.about = list(dict.fromkeys(plan.about))
    return plan


def grounding_context(
    draft: DraftMemory,
    account_name: str,
    previous: Mapping[URIRef, SourceRecord],
    *,
    history: Mapping[URIRef, tuple[SourceRecord, ...]] | None = None,
    user_names: Sequence[str] = (),
    effective: EffectiveOntology | None = None,
    batch: BatchNames | None = None,
) -> GroundingContext:
    """Who "I" is and which names are aliases, as grounding sees a draft: the user's names
    (the account's and those their entity took), the draft's entities (persons or things,
    by the types it gives them), and the chat before each cited message."""
    kinds: dict[str, Kind] = {}
    if effective is not None:
        for entity in draft.entities:
            types = [expand_term(t) for t in entity.types]
            if any(effective.is_subclass(t, SDO.Person) for t in types):
                kinds[entity.name] = Kind.PERSON
            elif any(
                effective.disjointness(t, SDO.Person) and not _animal(t, effective) for t in types
            ):
                kinds[entity.name] = Kind.THING  # a place, an organization: never "she"
    own = [n for n in user_names if name_key(n) != name_key(account_name)]
    return GroundingContext(
        user=account_name,
        user_aliases=tuple(own),
        entities={e.name: e.aliases for e in draft.entities},
        previous=previous,
        history=history or {},
        kinds=kinds,
        batch=batch,
    )


def _animal(cls: URIRef, effective: EffectiveOntology) -> bool:
    """Whether ``cls`` is an animal's class: a pet is "she" or "he" too."""
    return any(
        str(c).rsplit("/", 1)[-1].rsplit("#", 1)[-1] in {"Animal", "Pet", "DomesticPet"}
        for c in (cls, *effective.ancestors(cls))
    )


def mention_context(
    draft: DraftMemory, sources: Iterable[SourceRecord], effective: EffectiveOntology
) -> MentionContext:
    """What ``draft`` says that ties its names to known entities: who wrote the ``sources``
    it cites, and the facts its positive claims state of each name."""
    attributes: set[tuple[str, URIRef, Literal]] = set()
    relations: set[tuple[str, URIRef, str]] = set()
    for claim in draft.claims:
        if claim.negated:
            continue
        key, predicate = name_key(claim.subject), expand_term(claim.predicate)
        if claim.object is not None:
            relations.add((key, predicate, name_key(claim.object)))
        elif claim.value is not None:
            attributes.add((key, predicate, _literal(claim.value, effective, predicate)))
    return MentionContext(
        frozenset(name_key(s.speaker) for s in sources if s.speaker),
        frozenset(attributes),
        frozenset(relations),
    )


def _why(refusal: Refusal) -> str:
    return refusal.message


def _absorb(plan: DraftPlan, result: GroundingResult, ctx: PlanContext) -> None:
    seen = {(e.source, e.span, e.support) for e in plan.evidence}
    for item in result.items:
        key = (item.source, (item.start, item.end), item.support)
        if key not in seen:
            seen.add(key)
            plan.evidence.append(_evidence(ctx.uid, item))
            _change(plan, ctx.sources.get(str(item.source)), (item.start, item.end))
    plan.confidence_cap = min(plan.confidence_cap, result.confidence_cap)
    plan.may_auto_activate = plan.may_auto_activate and result.may_auto_activate
    if result.authority is not None and (
        plan.authority is None
        or rank(result.authority, ctx.order) > rank(plan.authority, ctx.order)
    ):
        plan.authority = result.authority


def _change(plan: DraftPlan, source: SourceRecord | None, span: tuple[int, int]) -> None:
    """Note a cited sentence that says the world changed ("since March I'm at Y")."""
    if source is None or source.type is SourceType.AGENT_MESSAGE:
        return
    doc = analyse(source.text)
    if not (change_stated(doc, span) or ending_stated(doc, span)):
        return
    plan.change_texts.append(source.text)
    if plan.change_at is None or source.timestamp > plan.change_at:
        plan.change_at = source.timestamp


def _evidence(uid: str, item: GroundedEvidence) -> EvidenceRecord:
    return EvidenceRecord(
        new_node(uid, NodeKind.EVIDENCE),
        item.source,
        item.source_type,
        item.support,
        item.authority,
        item.quote,
        (item.start, item.end),
        item.agent_reported,
        item.confirms,
    )


def _ground_unstructured(draft: DraftMemory, ctx: PlanContext, plan: DraftPlan) -> None:
    """A draft without claims is grounded by its quotes alone, a procedure's steps and
    triggers by what they say (:mod:`kgmem.memory.unstructured`)."""
    result = ground_unstructured(draft, ctx.sources, ctx.order)
    plan.refusals += result.reasons
    plan.evidence += [_evidence(ctx.uid, item) for item in result.items]
    if result.authority is not None and (
        plan.authority is None
        or rank(result.authority, ctx.order) > rank(plan.authority, ctx.order)
    ):
        plan.authority = result.authority
    plan.may_auto_activate = plan.authority not in (None, Authority.AGENT)


def _entity_types(draft: DraftMemory, ctx: PlanContext, plan: DraftPlan) -> dict[str, list[URIRef]]:
    types: dict[str, list[URIRef]] = {}
    for entity in draft.entities:
        known = []
        for term in entity.types:
            iri = expand_term(term)
            if ctx.effective.info(iri).kind is TermKind.CLASS:
                known.append(iri)
            else:
                plan.needs_terms.append(iri)
        for name in (entity.name, *entity.aliases):
            types[name_key(name)] = known
    return types


def _is_user(name: str, ctx: PlanContext, plan: DraftPlan) -> bool:
    identity = plan.identities.get(name)
    if identity is not None:
        return identity.is_user
    own = {name_key(n) for n in ctx.user_names}
    return is_self_mention(name, ctx.account_name) or name_key(name) in own


def _entity(
    name: str,
    types: Mapping[str, list[URIRef]],
    aliases: Sequence[str],
    ctx: PlanContext,
    plan: DraftPlan,
    tied: MentionContext,
) -> EntityMatch:
    identity = plan.identities.get(name)
    if _is_user(name, ctx, plan):
        me = self_entity(ctx.uid)
        quads = self_quads(ctx.uid, ctx.account_name)
        # the names the user goes by in the chat ("I'm Ana Ruiz", "call me Anita")
        names = [] if name_key(name) in SELF_MENTIONS else [name]
        if identity is not None:
            names += [identity.name, *identity.aliases]
        quads += entity_quads(ctx.uid, me, None, (), _new_names(names, ctx), set())
        plan.entity_quads += [q for q in quads if q not in plan.entity_quads]
        typed = types.get(name_key(name), [])
        clashes = type_clashes(me, [SDO.Person], name, typed, ctx.effective)
        plan.clashes += [v for v in clashes if v not in plan.clashes]
        return EntityMatch(me, ctx.account_name, frozenset(), False, clashes=clashes)
    canonical, known = name, list(aliases)
    if identity is not None:
        # a bare first or last name the user has no entity for resolves as the full name
        # the chat gives it ("Claire" is Claire Fontaine)
        if _part_of(name_key(name), name_key(identity.name)) and not ctx.resolver.candidates(
            ctx.uid, name
        ):
            canonical = identity.name
        known += [identity.name, *identity.aliases]
    match = ctx.resolver.resolve(
        ctx.uid,
        canonical,
        types.get(name_key(name), []) or types.get(name_key(canonical), []),
        ctx.effective,
        [a for a in known if name_key(a) != name_key(canonical)],
        ctx.pending_entities,
        context=tied,
    )
    plan.entity_quads += [q for q in match.quads if q not in plan.entity_quads]
    plan.clashes += [v for v in match.clashes if v not in plan.clashes]
    if identity is not None and identity.person:
        # "my colleague Claire Fontaine" typed as an organization: the chat's words say
        # this one is a person, whatever the draft says
        typed = types.get(name_key(name), [])
        said = type_clashes(match.iri, [SDO.Person], name, typed, ctx.effective)
        plan.clashes += [v for v in said if v not in plan.clashes]
    return match


def _part_of(short: str, full: str) -> bool:
    """Whether ``short`` is a bare first or last word of the longer name ``full``, a title
    aside ("Dr. Okafor" of "Adaeze Okafor")."""
    words = full.split()
    if phrase(short) in name_keys(full):
        return False  # "Acme" is "Acme Inc": the same name
    bare = short.split()
    if len(bare) == 2 and bare[0].rstrip(".") in TITLES:
        short = bare[1]
    return " " not in short and len(words) > 1 and short in (words[0], words[-1])


def _new_names(names: Sequence[str], ctx: PlanContext) -> list[str]:
    """``names`` the user does not go by yet (the account name is the entity's own)."""
    own = {name_key(n) for n in (ctx.account_name, *ctx.user_names)}
    return [n for n in dict.fromkeys(names) if name_key(n) not in own]


def _claim_record(
    claim: ClaimDraft,
    types: Mapping[str, list[URIRef]],
    draft: DraftMemory,
    ctx: PlanContext,
    plan: DraftPlan,
    tied: MentionContext,
) -> ClaimRecord:
    predicate = expand_term(claim.predicate)
    info = ctx.effective.info(predicate)
    if info.kind is not TermKind.PROPERTY:
        plan.needs_terms.append(predicate)
    aliases = {e.name: e.aliases for e in draft.entities}
    subject = _entity(claim.subject, types, aliases.get(claim.subject, ()), ctx, plan, tied).iri
    plan.about.append(subject)
    obj: URIRef | None = None
    if claim.object is not None:
        obj = _entity(claim.object, types, aliases.get(claim.object, ()), ctx, plan, tied).iri
        plan.about.append(obj)
    value = None if claim.value is None else _literal(claim.value, ctx.effective, predicate)
    if predicate in _NAMING and claim.value is not None and not claim.negated:
        # "Everyone calls him Hal", "I'm Ana Ruiz": a name the entity answers to from now on
        plan.entity_quads += [
            q
            for q in entity_quads(ctx.uid, subject, None, (), _new_names([claim.value], ctx), set())
            if q not in plan.entity_quads
        ]
    return ClaimRecord(
        new_node(ctx.uid, NodeKind.CLAIM), subject, predicate, obj, value, claim.negated
    )


_NAMING = frozenset({SDO.name, SDO.alternateName, FOAF.nick, FOAF.name})


def _literal(text: str, effective: EffectiveOntology, predicate: URIRef) -> Literal:
    """A typed literal when the property's range is a date or a number and the text parses.

    A date is read in any spelling grounding reads ("12 March 1990", "March 12th, 1990") and
    stored in its one canonical form, so the pre-pass sees a restatement, not a second value.
    """
    for datatype in effective.range(predicate):
        if datatype == XSD.date:
            if (day := date_value(text)) is not None:
                return Literal(day, datatype=XSD.date)
            continue
        if datatype in (XSD.integer, XSD.decimal, XSD.double) and _number(text):
            return Literal(text, datatype=datatype)
    return Literal(text)


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
