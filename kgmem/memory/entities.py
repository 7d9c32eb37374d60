"""Entity resolution at write time: a name becomes one identity, or a new one.

Candidates come from the user's graph by normalized name or alias (an index lookup, not a
scan). A candidate whose types are disjoint with the types the draft gives is not the same
thing ("Mercury" the planet is never the company), so it is dropped; among the rest, an
exact name beats an alias, then shared types decide. No surviving candidate: a new entity.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rdflib import Literal, URIRef

from kgmem.memory.ids import NodeKind, new_node, stable_node
from kgmem.ontology.effective import EffectiveOntology
from kgmem.store import Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF, SDO

__all__ = [
    "SELF_MENTIONS",
    "EntityMatch",
    "EntityResolver",
    "entity_quads",
    "is_self_mention",
    "name_key",
    "self_entity",
    "self_quads",
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


@dataclass
class _Candidate:
    iri: URIRef
    names: set[str] = field(default_factory=set)
    types: set[URIRef] = field(default_factory=set)


class EntityResolver:
    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def candidates(self, uid: str, name: str) -> list[_Candidate]:
        rows = self._store.select(
            self._queries["memory/entities_by_key"],
            {"graph": UserGraphs(uid).kg, "key": Literal(name_key(name))},
        )
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
    ) -> EntityMatch:
        """The entity ``name`` (of ``types``) denotes, creating one when nothing fits.

        ``pending`` carries the entities already resolved in the same batch, so two drafts
        naming one new person create it once.
        """
        key = name_key(name)
        if pending is not None and key in pending:
            earlier = pending[key]
            if types_compatible(earlier.types, types, effective):
                return EntityMatch(earlier.iri, earlier.name, earlier.types, created=False)
        fits = [
            c
            for c in self.candidates(uid, name)
            if types_compatible(frozenset(c.types), types, effective)
        ]
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
    quads += [Quad(iri, KGM.nameKey, Literal(k), graph) for k in keys]
    return quads


def self_quads(uid: str, account_name: str) -> list[Quad]:
    """The user's own entity, typed as a person and named after the account."""
    return entity_quads(uid, self_entity(uid), account_name, [SDO.Person], (), set())
