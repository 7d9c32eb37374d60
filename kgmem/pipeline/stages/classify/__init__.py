"""Classify (label matching + model): the terms a draft uses, taken from the user's effective
ontology; what is missing is proposed, never silently invented.

Per draft (an item of the stage), every claim predicate is a property and every entity type
a class of the effective ontology, written as a full IRI:

- a CURIE or IRI the ontology knows with that role stays;
- words ("works for", "worksFor", a CURIE the ontology does not know) are matched against
  the labels, alternate labels and local names of the effective ontology's terms, normalized
  (case, spacing, camelCase, plurals; :class:`~kgmem.pipeline.terms_match.TermMatcher`).
  One exact match is taken. Several, or only near ones:
  the model (group ``memory``) chooses among those offered, and an answer that was not
  offered counts as no match; without a model the best exact match is taken only when its
  field (label > alternate label > local name) beats every other;
- no match: the draft uses a placeholder in the user's own term namespace
  (:func:`~kgmem.ontology.delta_term`) and the worklist reports it as :class:`Undeclared`
  with nearby terms as candidates. The assemble stage decides what the placeholder becomes.

Entities: the draft's ``entities`` get an entry for every claim subject and object that is
not the user, with the types the draft gave (classified as above, typing claims included)
plus a provisional type from the predicate's domain (subject) or range (object) when the
ontology names exactly one class there and it neither repeats nor contradicts a type the
draft gave. A provisional type is also listed in the pass draft's ``inferred``: the claim's
own predicate is no evidence of what its subject or object is, so resolve never sets a known
entity aside for it (otherwise every domain or range violation would validate, on a fresh
namesake typed to fit). The user ("I", "me", "user", the user id) is left to the write
gate, which maps it to the user's own entity.

A provisional type is also checked against what the same model answer says the mention is
(:mod:`~kgmem.pipeline.stages.classify.answer_types`: its typing claims in any of its
drafts, those ground refused included, which are never facts): disjoint with it, the answer
contradicts itself and the draft is dropped with ``self_contradictory_type`` instead of typed
by a guess. The classes its typings give a mention citing the draft's own words
(:func:`~kgmem.pipeline.stages.classify.answer_types.quoted_types`) are kept on the pass
draft as ``said``: never written, but checked as a draft's types are (resolve, reconcile).

Typing claims (predicate ``rdf:type``, "a", "type", "is a") are not relations: their object
is classified as a class and becomes a type of the subject's entity, and the claim leaves
``claims`` (the memory keeps its quotes, title and other claims; a draft whose only claim
was a typing is a memory of its quotes about the typed entity). A *negated* typing cannot be
written as a type, so its draft is dropped with ``negated_type``; a term with no letters to
name it is dropped with ``unnameable_term``; a self-contradictory answer as above with
``self_contradictory_type``. Nothing is dropped without a code and a reason, and each drop
is a refusal decision in the feed, written with the pass.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from rdflib import URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.entities import SELF_MENTIONS as USER_MENTIONS
from kgmem.memory.entities import is_self_mention, name_key
from kgmem.memory.model import ClaimDraft, DraftMemory, EntityDraft
from kgmem.ontology import EffectiveOntology, TermKind, delta_term
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import NO_TERM, TermCandidate, TermChoice
from kgmem.pipeline.refusals import refused
from kgmem.pipeline.stages import ItemKey, ItemResult, PassContext, PassState, StageName
from kgmem.pipeline.stages.classify.answer_types import (
    QuoteSpans,
    is_typing,
    quoted_types,
    said_classes,
    said_types,
    self_contradiction,
)
from kgmem.pipeline.terms_match import (
    ROLE_KINDS,
    TIERS,
    Role,
    TermMatcher,
    as_iri,
    curie,
    term_name,
    term_words,
)
from kgmem.pipeline.worklist import Dropped, PassDraft, Undeclared, Worklist, worklist

if TYPE_CHECKING:
    import dspy

__all__ = [
    "MAX_CANDIDATES",
    "USER_MENTIONS",
    "ClassifiedDraft",
    "ClassifyDrop",
    "ClassifyNote",
    "ClassifyStage",
    "curie",
    "term_name",
]

_log = logging.getLogger(__name__)

MAX_CANDIDATES = 8  # terms offered to the model, and kept as an undeclared term's candidates


class ClassifyDrop(StrEnum):
    NEGATED_TYPE = "negated_type"  # "X is not a Y" cannot be written as a type
    UNNAMEABLE_TERM = "unnameable_term"  # no letters to name a placeholder term with
    #: a type inferred from a domain or range is disjoint with one the same answer gave
    SELF_CONTRADICTORY_TYPE = "self_contradictory_type"


@dataclass(frozen=True)
class ClassifyNote:
    """Why a surface did not get an ontology term (a tie, a refused or empty model answer)."""

    surface: str
    role: Role
    reason: str


@dataclass(frozen=True)
class ClassifiedDraft:
    """One draft's outcome: the worklist part the stage banks, and the notes behind it."""

    work: Worklist
    notes: tuple[ClassifyNote, ...] = ()


class _Drop(Exception):
    def __init__(self, code: ClassifyDrop, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _claim_line(claim: ClaimDraft) -> str:
    target = claim.object if claim.object is not None else repr(claim.value)
    return f"{claim.subject} | {'NOT ' if claim.negated else ''}{claim.predicate} | {target}"


@dataclass
class _Session:
    """The classification of one draft: its terms, undeclared placeholders and notes."""

    ports: PassPorts
    uid: str
    key: str
    draft: DraftMemory
    effective: EffectiveOntology
    matchers: dict[TermKind, TermMatcher]
    #: mention name key -> the classes the same model answer names for it (never facts)
    said: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    undeclared: dict[str, Undeclared] = field(default_factory=dict)
    notes: list[ClassifyNote] = field(default_factory=list)
    _terms: dict[tuple[str, Role], URIRef] = field(default_factory=dict)
    _lm: dspy.LM | None = None
    _lm_built: bool = False

    @property
    def context(self) -> str:
        lines = [f"memory: {self.draft.title}", *map(_claim_line, self.draft.claims)]
        return "\n".join(lines)

    def lm(self) -> dspy.LM | None:
        if not self._lm_built:
            self._lm, self._lm_built = self.ports.models.lm(ModelGroup.MEMORY), True
        return self._lm

    def term(self, surface: str, role: Role) -> URIRef:
        """The IRI ``surface`` stands for in ``role``: known, chosen or a placeholder."""
        key = (" ".join(surface.split()), role)
        if key not in self._terms:
            self._terms[key] = self._classify(key[0], role)
        return self._terms[key]

    def _classify(self, surface: str, role: Role) -> URIRef:
        kind = ROLE_KINDS[role]
        iri = as_iri(surface)
        if iri is not None and self.effective.info(iri).kind is kind:
            return iri
        words = term_words(surface)
        matches = self.matchers[kind].exact(words)
        if len(matches) == 1:
            return matches[0][0]
        offered = self._offer([t for t, _ in matches], words, kind)
        chosen, why = self._choose(surface, role, matches, offered)
        if chosen is not None:
            return chosen
        if why:
            self.notes.append(ClassifyNote(surface, role, why))
        return self._placeholder(surface, role, words, offered)

    def _offer(self, exact: list[URIRef], words: str, kind: TermKind) -> list[URIRef]:
        near = self.matchers[kind].near(words)[: MAX_CANDIDATES // 2]
        hits = [h.term for h in self.ports.ontology.search(words, MAX_CANDIDATES, kind)]
        return list(dict.fromkeys([*exact, *near, *hits]))[:MAX_CANDIDATES]

    def _choose(
        self, surface: str, role: Role, matches: list[tuple[URIRef, int]], offered: list[URIRef]
    ) -> tuple[URIRef | None, str]:
        lm = self.lm() if offered else None
        if lm is not None:
            return self._ask(lm, surface, role, offered)
        if not matches:
            return None, ""
        (best, tier), (runner_up, other) = matches[0], matches[1]
        if tier > other:
            return best, ""
        why = f"{curie(best)} and {curie(runner_up)} both match by {TIERS[tier]}; no model"
        return None, why

    def _ask(
        self, lm: dspy.LM, surface: str, role: Role, offered: list[URIRef]
    ) -> tuple[URIRef | None, str]:
        from kgmem.pipeline.programs import run_signature
        from kgmem.pipeline.signatures import ClassifyTerm

        candidates = [self.candidate(t) for t in offered]
        answer = run_signature(
            ClassifyTerm,
            lm,
            StageName.CLASSIFY.value,
            surface=surface,
            role=role,
            context=self.context,
            candidates=candidates,
        )
        choice = answer.choice
        if not isinstance(choice, TermChoice):
            raise ModelOutputError(StageName.CLASSIFY.value, "choice is not a term choice")
        answered = choice.term.strip()
        if answered.lower() == NO_TERM:
            return None, f"the model found none of {len(offered)} candidates fits: {choice.reason}"
        for term in offered:
            if answered in (curie(term), str(term)):
                return term, ""
        return None, f"the model answered {answered!r}, which was not among the candidates"

    def candidate(self, term: URIRef) -> TermCandidate:
        vocab, effective = self.effective.vocabulary, self.effective
        parts = []
        if alt := vocab.alt_labels.get(term):
            parts.append("also: " + ", ".join(alt[:5]))
        if vocab.kind_of(term) is TermKind.PROPERTY:
            for name, classes in (
                ("domain", effective.domain(term) | effective.domain_includes(term)),
                ("range", effective.range(term) | effective.range_includes(term)),
            ):
                if classes:
                    parts.append(f"{name}: " + ", ".join(sorted(map(curie, classes))))
        elif parents := vocab.parents.get(term):
            parts.append("a kind of: " + ", ".join(sorted(map(curie, parents))[:4]))
        return TermCandidate(
            term=curie(term), label=vocab.label(term), description="; ".join(parts)
        )

    def _placeholder(self, surface: str, role: Role, words: str, offered: list[URIRef]) -> URIRef:
        name = term_name(words, role)
        if name is None:
            code = ClassifyDrop.UNNAMEABLE_TERM
            raise _Drop(code, f"the {role} {surface!r} has no letters to name a new term with")
        iri = delta_term(self.uid, name)
        if self.effective.info(iri).kind is ROLE_KINDS[role]:
            return iri  # the user's own term of that very name
        if str(iri) not in self.undeclared:
            candidates = tuple(self.candidate(t) for t in offered)
            self.undeclared[str(iri)] = Undeclared(
                iri=str(iri), surface=surface, role=role, uses=(self.key,), candidates=candidates
            )
        return iri


@dataclass
class _Entity:
    name: str
    types: list[URIRef]
    aliases: tuple[str, ...] = ()
    inferred: list[URIRef] = field(default_factory=list)  # of ``types``: the provisional ones


def _one_class(effective: EffectiveOntology, classes: frozenset[URIRef]) -> URIRef | None:
    known = [c for c in classes if effective.info(c).kind is TermKind.CLASS]
    return known[0] if len(known) == 1 else None


def _provisional(effective: EffectiveOntology, prop: URIRef, subject: bool) -> URIRef | None:
    """The one class the property's domain (``subject``) or range names, if exactly one."""
    plain = effective.domain(prop) if subject else effective.range(prop)
    if plain:
        return _one_class(effective, plain)
    loose = effective.domain_includes(prop) if subject else effective.range_includes(prop)
    return _one_class(effective, loose)


def _add_type(session: _Session, entity: _Entity, cls: URIRef, end: tuple[URIRef, bool]) -> None:
    """Add a provisional type (from the property and side ``end``) unless a held type
    already implies or contradicts it; drop the draft when the same answer says the entity
    is of a disjoint class (see the module docstring)."""
    effective, types = session.effective, entity.types
    if any(effective.is_subclass(t, cls) for t in types):
        return
    if any(effective.disjointness(t, cls) is not None for t in types):
        return  # a stated type's clash is validation's to refuse
    matcher, names = session.matchers[TermKind.CLASS], (entity.name, *entity.aliases)
    if (why := self_contradiction(effective, matcher, session.said, names, cls, end)) is not None:
        raise _Drop(ClassifyDrop.SELF_CONTRADICTORY_TYPE, why)
    types.append(cls)
    entity.inferred.append(cls)


def _rewrite(session: _Session) -> tuple[DraftMemory, dict[str, tuple[str, ...]]]:
    """The draft with IRIs for its predicates and a typed entity for every mention, and the
    provisional types among those by entity name key. Provisional types come last, so the
    types the draft gives (typing claims anywhere in it included) decide what fits."""
    draft, effective = session.draft, session.effective
    book: dict[str, _Entity] = {}
    order: list[_Entity] = []

    def entity(name: str) -> _Entity:
        if name_key(name) not in book:
            book[name_key(name)] = _Entity(name, [])
            order.append(book[name_key(name)])
        return book[name_key(name)]

    for given in draft.entities:
        record = _Entity(given.name, [session.term(t, "class") for t in given.types], given.aliases)
        order.append(record)
        for name in (given.name, *given.aliases):
            book.setdefault(name_key(name), record)
    claims: list[ClaimDraft] = []
    ends: list[tuple[_Entity, URIRef, bool]] = []  # (entity, property, as its subject)
    for claim in draft.claims:
        if is_typing(claim):
            cls = _typing(session, claim)
            types = entity(claim.subject).types
            types += [] if cls in types else [cls]
            continue
        prop = session.term(claim.predicate, "property")
        claims.append(claim.model_copy(update={"predicate": str(prop)}))
        for mention, subject in ((claim.subject, True), (claim.object, False)):
            if mention is not None and not is_self_mention(mention, session.uid):
                ends.append((entity(mention), prop, subject))
    for record, prop, subject in ends:
        if (provisional := _provisional(effective, prop, subject)) is not None:
            _add_type(session, record, provisional, (prop, subject))
    entities = tuple(
        EntityDraft(name=e.name, types=tuple(dict.fromkeys(map(str, e.types))), aliases=e.aliases)
        for e in order
    )
    inferred = {name_key(e.name): tuple(map(str, e.inferred)) for e in order if e.inferred}
    return draft.model_copy(update={"claims": tuple(claims), "entities": entities}), inferred


def _typing(session: _Session, claim: ClaimDraft) -> URIRef:
    named = claim.object if claim.object is not None else claim.value
    if claim.negated:
        message = f"{claim.subject!r} is NOT a {named!r}: a negated typing cannot be a type"
        raise _Drop(ClassifyDrop.NEGATED_TYPE, message)
    return session.term(named or "", "class")


class ClassifyStage:
    """The classify stage: one item per draft (see the module docstring)."""

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports
        self._matchers: dict[str, tuple[EffectiveOntology, dict[TermKind, TermMatcher]]] = {}

    @property
    def name(self) -> StageName:
        return StageName.CLASSIFY

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]:
        return worklist(state, before=StageName.CLASSIFY).keys()

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult:
        current = worklist(state, before=StageName.CLASSIFY).draft(item)
        extracted = worklist(state, before=StageName.GROUND)
        said = said_types(extracted, item)
        quoted = quoted_types(extracted, item, QuoteSpans(self._ports.sources, ctx.uid))
        result = self.classify(ctx.uid, current, said, quoted)
        for note in result.notes:
            _log.info("classify %s: %s %r: %s", item, note.role, note.surface, note.reason)
        # a dropped draft is refused whole: its refusal is a decision in the feed
        dropped = tuple(refused(ctx, d, current) for d in result.work.dropped)
        return ItemResult(value=result.work.model_copy(update={"dropped": dropped}).to_json())

    def classify(
        self,
        uid: str,
        item: PassDraft,
        said: Mapping[str, tuple[str, ...]] | None = None,
        quoted: Mapping[str, tuple[str, ...]] | None = None,
    ) -> ClassifiedDraft:
        """One draft rewritten onto ontology terms (or dropped), with its undeclared terms;
        ``said``: mention name key -> the class surfaces the same model answer gives it;
        ``quoted``: those of them its typings give citing the draft's own words, kept on the
        pass draft as the classes they name (its ``said``)."""
        effective = self._ports.ontology.effective(uid)
        matchers = self._matchers_for(uid, effective)
        session = _Session(
            self._ports, uid, item.key, item.draft, effective, matchers, dict(said or {})
        )
        try:
            draft, inferred = _rewrite(session)
        except _Drop as drop:
            dropped = Dropped(
                key=item.key, stage=StageName.CLASSIFY, code=drop.code.value, message=drop.message
            )
            return ClassifiedDraft(Worklist(dropped=(dropped,)), tuple(session.notes))
        matcher = matchers[TermKind.CLASS]
        named = {k: said_classes(effective, matcher, v) for k, v in (quoted or {}).items()}
        kept = {k: tuple(map(str, v)) for k, v in named.items() if v}
        rewritten = item.model_copy(update={"draft": draft, "inferred": inferred, "said": kept})
        work = Worklist(drafts=(rewritten,), undeclared=tuple(session.undeclared.values()))
        return ClassifiedDraft(work, tuple(session.notes))

    def _matchers_for(self, uid: str, effective: EffectiveOntology) -> dict[TermKind, TermMatcher]:
        cached = self._matchers.get(uid)
        if cached is None or cached[0] is not effective:
            built = {kind: TermMatcher(effective, kind) for kind in TermKind}
            cached = self._matchers[uid] = (effective, built)
        return cached[1]
