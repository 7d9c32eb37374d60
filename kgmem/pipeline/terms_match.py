"""Naming and finding ontology terms: what classify, assemble and resolve share.

A term is asked for in a :data:`Role` (a class or a property). :func:`curie` shows an IRI
the way the model and the logs see it, :func:`as_iri` reads a CURIE or IRI back (words are
not terms), :func:`term_name` mints the local name of a new term, and :class:`TermMatcher`
finds the effective ontology's terms of one kind by their label, alternate label or local
name, exactly or by shared words.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from typing import Literal

from rdflib import URIRef

from kgmem.memory.planning import expand_term
from kgmem.ontology import EffectiveOntology, TermKind
from kgmem.ontology.search import normalize
from kgmem.ontology.vocabulary import local_name_words
from kgmem.vocab import PREFIXES

__all__ = [
    "ROLE_KINDS",
    "TIERS",
    "Role",
    "TermMatcher",
    "as_iri",
    "curie",
    "term_name",
    "term_words",
]

Role = Literal["class", "property"]
ROLE_KINDS: dict[Role, TermKind] = {"class": TermKind.CLASS, "property": TermKind.PROPERTY}
#: how a term matched, best first: its label, an alternate label, its local name
TIERS = {3: "label", 2: "alternate label", 1: "local name"}
_STOP = frozenset({"a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "is", "has"})


def curie(term: str) -> str:
    """``https://schema.org/worksFor`` → ``schema:worksFor``; other IRIs stay whole.

    >>> curie("https://schema.org/worksFor")
    'schema:worksFor'
    """
    for prefix, namespace in sorted(PREFIXES.items(), key=lambda item: -len(item[1])):
        local = term.removeprefix(namespace)
        if local != term and re.fullmatch(r"[A-Za-z_][\w-]*", local):
            return f"{prefix}:{local}"
    return str(term)


def term_name(surface: str, role: Role) -> str | None:
    """The local name to mint for ``surface``: lowerCamelCase for a property, UpperCamelCase
    for a class; None when it has no letters to name it with.

    >>> term_name("prefers seat", "property"), term_name("vegan café", "class")
    ('prefersSeat', 'VeganCafe')
    """
    ascii_text = unicodedata.normalize("NFKD", surface).encode("ascii", "ignore").decode()
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", ascii_text)
    words = re.findall(r"[A-Za-z0-9]+", spaced)
    while words and not words[0][0].isalpha():
        words.pop(0)
    if not words:
        return None
    name = "".join(w[:1].upper() + w[1:].lower() for w in words)[:64]
    return name[:1].lower() + name[1:] if role == "property" else name


def as_iri(text: str) -> URIRef | None:
    """A CURIE with a known prefix or an absolute IRI; None for words."""
    text = text.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    prefix, _, local = text.partition(":")
    if prefix in PREFIXES and local:
        return expand_term(text)
    return URIRef(text) if re.match(r"(https?|urn):", text) else None


def term_words(surface: str) -> str:
    """The words ``surface`` names a term with: an IRI's local name as words, else itself."""
    iri = as_iri(surface)
    return local_name_words(iri) if iri is not None else surface


class TermMatcher:
    """The effective ontology's terms of one kind by normalized label, alternate label and
    local name (exact), and by their words (near)."""

    def __init__(self, effective: EffectiveOntology, kind: TermKind) -> None:
        vocab = effective.vocabulary
        pool = effective.properties if kind is TermKind.PROPERTY else effective.classes
        self._exact: dict[str, dict[URIRef, int]] = defaultdict(dict)
        self._words: dict[str, set[URIRef]] = defaultdict(set)
        for term in pool:
            if vocab.kind_of(term) is not kind:
                continue
            fields = (
                (3, vocab.labels.get(term, [])),
                (2, vocab.alt_labels.get(term, [])),
                (1, [local_name_words(term)]),
            )
            for tier, texts in fields:
                for text in texts:
                    words = normalize(text)
                    tiers = self._exact[" ".join(words)]
                    tiers[term] = max(tiers.get(term, 0), tier)
                    for word in set(words) - _STOP:
                        self._words[word].add(term)

    def exact(self, text: str) -> list[tuple[URIRef, int]]:
        found = self._exact.get(" ".join(normalize(text)), {})
        return sorted(found.items(), key=lambda item: (-item[1], str(item[0])))

    def near(self, text: str) -> list[URIRef]:
        shared: dict[URIRef, int] = defaultdict(int)
        for word in set(normalize(text)) - _STOP:
            for term in self._words.get(word, ()):
                shared[term] += 1
        return sorted(shared, key=lambda term: (-shared[term], str(term)))
