"""Entity resolution at write time: a name becomes one identity, or a new one.

Candidates come from the user's graph by normalized name or alias (an index lookup, not a
scan). A candidate whose types are disjoint with the types the draft gives is not the same
thing ("Mercury" the planet is never the company), so it is dropped; among the rest, an
exact name beats an alias, then shared types decide. No surviving candidate: a new entity.

Unless the draft itself ties the name to a candidate it would drop (:class:`MentionContext`):
the name is the speaker of a message the draft cites (whoever wrote "I work at Acme" is the
one person of that name, not a new organization), or the draft states of the name a fact the
candidate already has. Then the types cannot make it something else: the name resolves to
that entity, and the disjoint types are a conflict the match carries (``clashes``) for the
gate to refuse, never a silent second entity and never a silent retype. Consolidation's
resolve stage applies the same rule (:meth:`EntityResolver.ties`, :func:`type_clashes`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rdflib import Literal, URIRef

from kgmem.ontology import EffectiveOntology, Violation, ViolationKind
from kgmem.store import (
    NodeKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    new_node,
    stable_node,
)
from kgmem.vocab import KGM, OWL, RDF, SDO

__all__ = [
    "SELF_MENTIONS",
    "EntityMatch",
    "EntityResolver",
    "MentionContext",
    "entity_quads",
    "is_self_mention",
    "key_variants",
    "name_key",
    "self_entity",
    "self_quads",
    "type_clashes",
    "types_compatible",
]

#: what a draft may call the user by; these (and the user's own name) are the user's entity
SELF_MENTIONS = frozenset({"i", "me", "my", "mine", "myself", "the user", "user"})
_SPACE = re.compile(r"\s+")


def name_key(name: str) -> str:
    """The lookup form of a name.

    >>> name_key("  Dr.  Ada   LOVELACE ")
    'dr. ada lovelace'
    """
    return _SPACE.sub(" ", name.strip().lower())


_LEGAL = re.compile(
    r"(?:,?\s*(?:&\s*co\.?|ltd\.?|limited|inc\.?|incorporated|llc|l\.l\.c\.|gmbh|corp\.?|"
    r"corporation|plc|s\.?\s?l\.?|s\.?\s?a\.?|ag|b\.?v\.?|pty|llp))+$"
)


_UNIVERSITY_OF = re.compile(r"(?:the )?university of (\w[\w .'-]*)")
_X_UNIVERSITY = re.compile(r"(\w[\w .'-]*?) uni(?:versity)?")


def key_variants(name: str) -> tuple[str, ...]:
    """The lookup forms of a name: its key, and without a company's legal form, so
    "Quillon Data Ltd.", "Quillon Data" and "Quillon Data Inc" are found as one.

    >>> key_variants("Molinos del Sur S.L.")
    ('molinos del sur s.l.', 'molinos del sur')
    >>> key_variants("Edinburgh Uni"), key_variants("University of Edinburgh")
    (('edinburgh uni', 'edinburgh university'), ('university of edinburgh', 'edinburgh university'))
    """
    key = name_key(name)
    bare = _LEGAL.sub("", key).strip(" ,")
    out = [key, bare] if bare and bare != key else [key]
    # "Edinburgh Uni", "Edinburgh University" and "the University of Edinburgh" are one
    if (m := _UNIVERSITY_OF.fullmatch(bare)) or (m := _X_UNIVERSITY.fullmatch(bare)):
        out += [f"{m.group(1)} university"]
    return tuple(dict.fromkeys(out))


def is_self_mention(name: str, own: str) -> bool:
    """Whether ``name`` means the user: one of :data:`SELF_MENTIONS`, or ``own`` (the user's
    id or account name).

    >>> is_self_mention("Me", "alice"), is_self_mention(" Alice", "alice")
    (True, True)
    """
    key = name_key(name)
    return key in SELF_MENTIONS or key == name_key(own)


def self_entity(uid: str) -> URIRef:
    """The node for the user themself: what "I" and "me" resolve to."""
    return stable_node(uid, NodeKind.ENTITY, "self")


@dataclass(frozen=True)
class EntityMatch:
    """The entity a name resolved to, and what must be written to make it so."""

    iri: URIRef
    name: str
    types: frozenset[URIRef]
    created: bool
    quads: tuple[Quad, ...] = field(default=(), repr=False)
    clashes: tuple[Violation, ...] = ()  # the draft's types disjoint with the entity's


@dataclass(frozen=True)
class MentionContext:
    """What a draft says that ties a name to an entity the user already has, whatever types
    the draft gives the name. All names are :func:`name_key` forms."""

    speakers: frozenset[str] = frozenset()  # who wrote the messages the draft cites
    attributes: frozenset[tuple[str, URIRef, Literal]] = frozenset()  # (name, predicate, value)
    relations: frozenset[tuple[str, URIRef, str]] = frozenset()  # (name, predicate, object name)


@dataclass
class _Candidate:
    iri: URIRef
    names: set[str] = field(default_factory=set)
    types: set[URIRef] = field(default_factory=set)


class EntityResolver:
    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def candidates(self, uid: str, name: str) -> list[_Candidate]:
        rows = [
            row
            for key in key_variants(name)
            for row in self._store.select(
                self._queries["memory/entities_by_key"],
                {"graph": UserGraphs(uid).kg, "key": Literal(key)},
            )
        ]
        found: dict[URIRef, _Candidate] = {}
        for row in rows:
            entity = row["entity"]
            assert isinstance(entity, URIRef)
            candidate = found.setdefault(entity, _Candidate(entity))
            if "name" in row:
                candidate.names.add(str(row["name"]))
            if isinstance(t := row.get("type"), URIRef) and t != KGM.Entity:
                candidate.types.add(t)
        return list(found.values())

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
        """The entity ``name`` (of ``types``) denotes, creating one when nothing fits.

        ``pending`` carries the entities already resolved in the same batch, so two drafts
        naming one new person create it once. ``context`` is what the draft says that can
        tie the name to a candidate of disjoint types (see the module docstring).
        """
        key = name_key(name)
        if pending is not None and key in pending:
            earlier = pending[key]
            if types_compatible(earlier.types, types, effective):
                return EntityMatch(earlier.iri, earlier.name, earlier.types, created=False)
        found = self.candidates(uid, name)
        fits = [c for c in found if types_compatible(frozenset(c.types), types, effective)]
        if not fits and context is not None:
            fits = [c for c in found if self.ties(uid, key, c.iri, context)]
        if fits:
            best = max(
                fits,
                key=lambda c: (
                    key in {name_key(n) for n in c.names},
                    len(c.types & set(types)),
                    str(c.iri),
                ),
            )
            added = [t for t in types if t not in best.types]
            quads = entity_quads(uid, best.iri, None, added, aliases, best.names)
            return EntityMatch(
                best.iri,
                sorted(best.names)[0] if best.names else name,
                frozenset(best.types | set(types)),
                False,
                tuple(quads),
                type_clashes(best.iri, best.types, name, types, effective),
            )
        iri = new_node(uid, NodeKind.ENTITY)
        match = EntityMatch(
            iri,
            name,
            frozenset(types),
            True,
            tuple(entity_quads(uid, iri, name, types, aliases, set())),
        )
        if pending is not None:
            pending[key] = match
        return match

    def ties(self, uid: str, name: str, entity: URIRef, context: MentionContext) -> bool:
        """Whether the draft of ``context`` ties ``name`` to ``entity`` whatever types it gives
        the name: the name is a cited message's speaker, or ``entity`` already has a fact the
        draft states of it. Consolidation's resolve stage asks this too."""
        key = name_key(name)
        if key in context.speakers:
            return True
        graph = UserGraphs(uid).kg
        for said, predicate, value in context.attributes:
            if said == key and any(self._store.quads(graph, entity, predicate, value)):
                return True
        return any(
            said == key and self._related(graph, entity, predicate, other)
            for said, predicate, other in context.relations
        )

    def _related(self, graph: URIRef, iri: URIRef, predicate: URIRef, other: str) -> bool:
        """Whether ``iri`` has a ``predicate`` relation to an entity going by ``other``."""
        return any(
            isinstance(quad.object, URIRef)
            and any(self._store.quads(graph, quad.object, KGM.nameKey, Literal(other)))
            for quad in self._store.quads(graph, iri, predicate)
        )


def type_clashes(
    entity: URIRef,
    known: Iterable[URIRef],
    name: str,
    types: Iterable[URIRef],
    effective: EffectiveOntology,
) -> tuple[Violation, ...]:
    """Each type a draft gives ``name`` that is disjoint with one the known ``entity`` has
    (``known``): a disjointness violation on the entity, with its proof."""
    found = []
    held = sorted(known)
    for proposed in types:
        for have in held:
            proof = effective.disjointness(have, proposed)
            if proof is None:
                continue
            message = (
                f"{name!r} is the known entity {entity}, a {have}; the draft types it "
                f"{proposed}, which is disjoint with that: {proof.explain()}"
            )
            found.append(
                Violation(
                    entity,
                    ViolationKind.DISJOINT,
                    OWL.disjointWith,
                    RDF.type,
                    proposed,
                    message,
                    proof=proof,
                )
            )
    return tuple(found)


def types_compatible(
    have: Iterable[URIRef], want: Iterable[URIRef], effective: EffectiveOntology
) -> bool:
    """Whether something of the ``have`` types may also be of the ``want`` types (no two
    of them are disjoint in ``effective``)."""
    want = list(want)
    return not any(effective.disjointness(a, b) for a in have for b in want)


def entity_quads(
    uid: str,
    iri: URIRef,
    name: str | None,
    types: Iterable[URIRef],
    aliases: Iterable[str],
    known_names: set[str],
) -> list[Quad]:
    """The quads of entity ``iri`` in ``uid``'s kg graph: with ``name``, the ones that create
    it; without, the ones that add ``types`` and the ``aliases`` not among ``known_names``."""
    graph = UserGraphs(uid).kg
    quads: list[Quad] = []
    keys: dict[str, str] = defaultdict(str)
    if name is not None:
        quads += [Quad(iri, RDF.type, KGM.Entity, graph), Quad(iri, KGM.name, Literal(name), graph)]
        keys[name_key(name)] = name
    for cls in types:
        quads.append(Quad(iri, RDF.type, cls, graph))
    known = {name_key(n) for n in known_names} | set(keys)
    for alias in aliases:
        if name_key(alias) not in known:
            quads.append(Quad(iri, KGM.alias, Literal(alias), graph))
            keys[name_key(alias)] = alias
            known.add(name_key(alias))
    variants = {v for k, n in keys.items() for v in key_variants(n)} | set(keys)
    quads += [Quad(iri, KGM.nameKey, Literal(k), graph) for k in sorted(variants)]
    return quads


def self_quads(uid: str, account_name: str) -> list[Quad]:
    """The user's own entity, typed as a person and named after the account."""
    return entity_quads(uid, self_entity(uid), account_name, [SDO.Person], (), set())
