"""Term search across the catalogue: labels, alternate labels, and local-name words.

KBpedia's reference concepts carry no labels in the mirrored release, so every term is also
indexed by the words of its local name (``rc:ChemicalElement`` → "chemical element").
Ranking: an exact label beats a label that starts with the query, which beats word overlap
weighted by field (label > alternate label > local name) and by rarity (IDF).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.ontology.vocabulary import TermKind, Vocabulary, local_name_words

__all__ = ["TermHit", "TermIndex", "normalize"]

_WORD = re.compile(r"[a-z0-9]+")
_FIELD_WEIGHT = {"label": 3.0, "alt": 2.0, "name": 1.5}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalize(text: str) -> list[str]:
    """Lower-cased, light-stemmed words; camelCase is split first.

    >>> normalize("ChemicalElements of Cities")
    ['chemical', 'element', 'of', 'city']
    """
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [_stem(w) for w in _WORD.findall(spaced.lower())]


@dataclass(frozen=True)
class TermHit:
    term: URIRef
    label: str
    kind: TermKind
    ontology: URIRef | None
    score: float
    matched: str  # which text matched best: the label, an alternate label or the local name


class TermIndex:
    """An inverted index over one :class:`Vocabulary`."""

    def __init__(self, vocab: Vocabulary) -> None:
        self._vocab = vocab
        self._postings: dict[str, dict[URIRef, tuple[float, str]]] = defaultdict(dict)
        self._exact: dict[str, list[tuple[URIRef, str]]] = defaultdict(list)
        self._texts: dict[URIRef, list[tuple[str, str]]] = {}
        terms = set(vocab.classes) | set(vocab.properties)
        for term in terms:
            texts = [("label", t) for t in vocab.labels.get(term, ())]
            texts += [("alt", t) for t in vocab.alt_labels.get(term, ())]
            texts.append(("name", local_name_words(term)))
            self._texts[term] = texts
            for field_name, text in texts:
                self._index(term, field_name, text)
        self._idf = {w: math.log(1 + len(terms) / len(p)) for w, p in self._postings.items()}

    def _index(self, term: URIRef, field_name: str, text: str) -> None:
        words = normalize(text)
        if not words:
            return
        self._exact[" ".join(words)].append((term, text))
        weight = _FIELD_WEIGHT[field_name]
        for word in words:
            current = self._postings[word].get(term)
            if current is None or current[0] < weight:
                self._postings[word][term] = (weight, text)

    def exact(self, text: str) -> list[URIRef]:
        """Terms whose label, alternate label or local name is ``text`` (normalized)."""
        return list(dict.fromkeys(t for t, _ in self._exact.get(" ".join(normalize(text)), ())))

    def search(self, text: str, limit: int = 10, kind: TermKind | None = None) -> list[TermHit]:
        """The best ``limit`` terms for ``text``, best first."""
        words = normalize(text)
        if not words or limit <= 0:
            return []
        phrase = " ".join(words)
        scores: dict[URIRef, float] = defaultdict(float)
        matched: dict[URIRef, str] = {}
        for word in dict.fromkeys(words):
            for term, (weight, source) in self._postings.get(word, {}).items():
                scores[term] += weight * self._idf[word]
                matched.setdefault(term, source)
        for term, source in self._exact.get(phrase, ()):
            scores[term] += 100.0
            matched[term] = source
        for term in list(scores):
            if any(" ".join(normalize(t)).startswith(phrase) for _, t in self._texts[term]):
                scores[term] += 10.0
            scores[term] /= 1 + 0.1 * len(normalize(self._vocab.label(term)))
        hits = [
            TermHit(t, self._vocab.label(t), k, self._vocab.origin.get(t), round(s, 4), matched[t])
            for t, s in scores.items()
            if (k := self._vocab.kind_of(t)) is not None and (kind is None or k is kind)
        ]
        hits.sort(key=lambda h: (-h.score, len(h.label), str(h.term)))
        return hits[:limit]
