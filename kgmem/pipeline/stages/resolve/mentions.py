"""What a draft names, for resolve: its mentions, and the scene each is mentioned in.

:func:`draft_mentions` groups the names a draft uses (claim subjects and objects, its
entities and their aliases; never the user) into one :class:`Mention` per thing: names a
draft declares as aliases of each other, directly or through a third, are one thing. A
mention keeps the types the draft states apart from those classify only inferred from a
claim's predicate (the pass draft's ``inferred``): only a stated type is a reason to think
the mention is not a known entity of that name.
:func:`draft_scene` is the rest of what the draft says, the identity evidence for each
mention: the other names it uses, whether it mentions the user, the attributes it gives,
its claims as lines and the text a tie-break is shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.memory.entities import is_self_mention, key_variants, name_key
from kgmem.memory.model import DraftMemory
from kgmem.memory.planning import expand_term

__all__ = ["Mention", "Scene", "draft_mentions", "draft_scene", "value_key"]


@dataclass(frozen=True)
class Mention:
    """One thing a draft names, under every name the draft gives it (the first is its name)."""

    names: tuple[str, ...]
    types: tuple[URIRef, ...]  # stated by the draft
    inferred: tuple[URIRef, ...] = ()  # from a claim's predicate alone: provisional
    #: what the model's answer says it is where the draft cites it (the pass draft's
    #: ``said``): never written, but a known entity of a disjoint type is not this one
    said: tuple[URIRef, ...] = ()

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(name_key(n) for n in self.names)

    @property
    def lookup(self) -> frozenset[str]:
        """The keys its names are looked up by (see :func:`key_variants`)."""
        return frozenset(v for n in self.names for v in key_variants(n))

    @property
    def vetoes(self) -> tuple[URIRef, ...]:
        """The types a candidate must not be disjoint with: stated, and said."""
        return (*self.types, *self.said)

    @property
    def every_type(self) -> tuple[URIRef, ...]:
        """Stated and inferred: what the draft suggests the mention is."""
        return (*self.types, *self.inferred)


@dataclass(frozen=True)
class Scene:
    """What else a draft says: the identity evidence for each of its mentions."""

    keys: frozenset[str]  # every name key it uses, the user's aside
    user: bool  # whether it mentions the user
    values: Mapping[str, frozenset[tuple[URIRef, str]]]  # subject key -> (predicate, value)
    claims: tuple[tuple[frozenset[str], str], ...]  # (name keys, the claim as a line)
    text: str  # title, claims and quotes: the tie-break's context


def value_key(text: str) -> str:
    """A literal value as compared between a draft and the kg graph."""
    return " ".join(text.split()).casefold()


def draft_mentions(
    draft: DraftMemory,
    uid: str,
    inferred: Mapping[str, Sequence[str]] | None = None,
    said: Mapping[str, Sequence[str]] | None = None,
) -> list[Mention]:
    """The things ``draft`` names, declared entities first; names a draft declares as aliases
    of each other (directly or through a third) are one thing. ``inferred`` holds, by entity
    name key, which of its types classify inferred (see the module docstring); ``said``, by
    name key, the classes the model's answer says it is (:attr:`Mention.said`)."""
    named = [_named(e.name, e.aliases, e.types, inferred or {}) for e in draft.entities]
    for claim in draft.claims:
        named += [Mention((n,), ()) for n in (claim.subject, claim.object) if n is not None]
    groups: list[Mention] = []
    for given in named:
        mention = Mention(
            _unique(n for n in given.names if not is_self_mention(n, uid)),
            given.types,
            given.inferred,
        )
        if not mention.names:
            continue
        joined = [g for g in groups if g.keys & mention.keys]
        for group in reversed(joined):
            mention = Mention(
                _unique([*group.names, *mention.names]),
                (*group.types, *mention.types),
                (*group.inferred, *mention.inferred),
            )
        at = groups.index(joined[0]) if joined else len(groups)
        groups = [g for g in groups if g not in joined]
        groups.insert(at, mention)
    return [_settled(m, said or {}) for m in groups]


def _named(
    name: str,
    aliases: Sequence[str],
    types: Sequence[str],
    inferred: Mapping[str, Sequence[str]],
) -> Mention:
    """One declared entity as a mention, its inferred types set apart from its stated ones."""
    guessed = {expand_term(t) for n in (name, *aliases) for t in inferred.get(name_key(n), ())}
    iris = [expand_term(t) for t in types]
    stated = tuple(t for t in iris if t not in guessed)
    return Mention((name, *aliases), stated, tuple(t for t in iris if t in guessed))


def _settled(mention: Mention, said: Mapping[str, Sequence[str]]) -> Mention:
    """Each type once; a type one name states and another only infers is stated; the
    classes the answer says any of its names is."""
    stated = tuple(dict.fromkeys(mention.types))
    inferred = tuple(t for t in dict.fromkeys(mention.inferred) if t not in stated)
    named = (URIRef(t) for n in mention.names for t in said.get(name_key(n), ()))
    return Mention(mention.names, stated, inferred, tuple(dict.fromkeys(named)))


def _unique(names: Iterable[str]) -> tuple[str, ...]:
    """Each name once (by key), as first written."""
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(name_key(name), name)
    return tuple(seen.values())


def draft_scene(draft: DraftMemory, uid: str) -> Scene:
    """Everything ``draft`` says around its mentions (the user aside)."""
    keys: set[str] = set()
    user = False
    values: dict[str, set[tuple[URIRef, str]]] = defaultdict(set)
    claims: list[tuple[frozenset[str], str]] = []
    for claim in draft.claims:
        ends = [n for n in (claim.subject, claim.object) if n is not None]
        user = user or any(is_self_mention(n, uid) for n in ends)
        named = frozenset(name_key(n) for n in ends if not is_self_mention(n, uid))
        keys |= named
        if claim.value is not None and not is_self_mention(claim.subject, uid):
            fact = (expand_term(claim.predicate), value_key(claim.value))
            values[name_key(claim.subject)].add(fact)
        said = claim.object if claim.object is not None else repr(claim.value)
        verb = f"not {claim.predicate}" if claim.negated else claim.predicate
        claims.append((named, f"{claim.subject} {verb} {said}"))
    for entity in draft.entities:
        names = (entity.name, *entity.aliases)
        user = user or any(is_self_mention(n, uid) for n in names)
        keys |= {name_key(n) for n in names if not is_self_mention(n, uid)}
    quotes = [f'- "{e.quote}"' for e in draft.evidence if e.quote]
    text = "\n".join(
        [f"title: {draft.title}", "claims:", *(f"- {line}" for _, line in claims)]
        + (["quotes:", *quotes] if quotes else [])
    )
    frozen = {k: frozenset(v) for k, v in values.items()}
    return Scene(frozenset(keys), user, frozen, tuple(claims), text)
