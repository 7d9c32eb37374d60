"""The candidates resolve weighs: entities as the kg graph (or this pass) knows them.

A :class:`Known` is an entity a mention may denote, read from its
``pipeline/entity_context`` rows (:func:`read_known`) or minted by the pass.
:func:`candidate_score` weighs a candidate for a mention on (exact name, context, agreeing
types); one candidate :func:`beats` another only when it is at least as good on every count
and better on one. :func:`offer` shows a candidate to the tie-break model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rdflib import Literal, URIRef

from kgmem.memory.entities import key_variants, name_key, self_entity
from kgmem.ontology import EffectiveOntology
from kgmem.pipeline.proposals import EntityCandidate
from kgmem.pipeline.stages.resolve.mentions import Mention, Scene, value_key
from kgmem.pipeline.terms_match import curie
from kgmem.store import Term
from kgmem.vocab import KGM, RDF

__all__ = ["Known", "beats", "candidate_score", "offer", "read_known", "verdict"]

_NAMING = frozenset({RDF.type, KGM.name, KGM.alias, KGM.nameKey})
_FACTS = 8  # known facts shown per candidate in a tie-break


@dataclass
class Known:
    """An entity a mention may denote: one of the kg graph, or one this pass minted."""

    iri: URIRef
    name: str = ""
    created: bool = False
    names: set[str] = field(default_factory=set)  # keys of its kgm:name values
    stored: set[str] = field(default_factory=set)  # name keys the kg graph has
    written: dict[str, str] = field(default_factory=dict)  # every name it goes by, by key
    types: set[URIRef] = field(default_factory=set)
    said: set[URIRef] = field(default_factory=set)  # what this pass's answers said it is
    links: set[str] = field(default_factory=set)  # name keys of entities it is related to
    linked: set[URIRef] = field(default_factory=set)  # and their IRIs
    values: set[tuple[URIRef, str]] = field(default_factory=set)  # its attributes
    facts: set[str] = field(default_factory=set)
    bound: bool = False  # a mention of this pass denotes it

    @property
    def keys(self) -> set[str]:
        return self.stored | set(self.written)

    @property
    def lookup(self) -> set[str]:
        """The keys a name finds it by, as the kg graph's ``kgm:nameKey`` index has them
        (a company's name also without its legal form: "Acme Ltd" is found as "Acme")."""
        return self.stored | {v for n in self.written.values() for v in key_variants(n)}


def read_known(iri: URIRef, rows: Iterable[Mapping[str, Term]]) -> Known:
    """An entity of the kg graph from its ``pipeline/entity_context`` rows."""
    known = Known(iri)
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
            known.values.add((p, value_key(str(other))))
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
        end = curie(other) if isinstance(other, URIRef) else repr(str(other))
    if direction == "in":
        return f"{end} {curie(p)} this"
    if direction == "with":
        return f"remembered together with {end}"
    return f"{curie(p)} {end}"


def offer(id_: str, known: Known) -> EntityCandidate:
    """``known`` as a tie-break shows it, under the id ``id_``."""
    canonical = name_key(known.name)
    return EntityCandidate(
        id=id_,
        name=known.name,
        types=sorted(curie(t) for t in known.types),
        aliases=sorted(n for k, n in known.written.items() if k != canonical),
        facts=sorted(known.facts)[:_FACTS],
    )


def beats(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """``a`` is at least as good as ``b`` on every count and better on one."""
    return a != b and all(x >= y for x, y in zip(a, b, strict=True))


def verdict(score: tuple[int, int, int], fits: int) -> str:
    """Why the candidate of ``score`` won, the best of ``fits`` compatible ones."""
    exact, context, agree = score
    how = "exact name" if exact else "alias"
    if fits == 1:
        return f"{how}: the only compatible candidate"
    return f"{how}, {context} contextual match(es), {agree} agreeing type(s): best of {fits}"


def candidate_score(
    known: Known, mention: Mention, scene: Scene, uid: str, effective: EffectiveOntology
) -> tuple[int, int, int]:
    """(exact name, context, agreeing types): compared one candidate against another."""
    exact = int(bool(mention.keys & known.names))
    context = len(known.links & (scene.keys - mention.keys))
    context += int(scene.user and self_entity(uid) in known.linked)
    context += len(known.values & {v for k in mention.keys for v in scene.values.get(k, ())})
    agree = sum(
        any(effective.is_subclass(c, t) or effective.is_subclass(t, c) for c in known.types)
        for t in mention.every_type  # an inferred type is evidence too, only never a veto
    )
    return exact, context, agree
