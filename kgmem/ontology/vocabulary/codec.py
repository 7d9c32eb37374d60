"""A :class:`Vocabulary` as plain JSON, so a command need not read the catalogue again.

Reading the catalogue's vocabulary from the store takes seconds (60k classes of KBpedia,
five queries over ~600k triples); decoding it from this form takes a tenth of that. Every
IRI is written once, in a table, and named by its position everywhere else.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from rdflib import URIRef

from kgmem.bulk import no_collections
from kgmem.ontology.vocabulary.terms import DisjointAxiom, PropertyInfo
from kgmem.ontology.vocabulary.view import Vocabulary

__all__ = ["decode_vocabulary", "encode_vocabulary"]

FORMAT = "kgmem-vocabulary/1"
_SETS = ("domains", "ranges", "domain_includes", "range_includes", "parents")
_FLAGS = ("functional", "object_property", "datatype_property")


class _Table:
    def __init__(self) -> None:
        self.iris: list[str] = []
        self._ids: dict[str, int] = {}

    def __call__(self, iri: URIRef) -> int:
        found = self._ids.get(iri)
        if found is None:
            found = self._ids[iri] = len(self.iris)
            self.iris.append(str(iri))
        return found

    def many(self, iris: object) -> list[int]:
        return sorted(self(i) for i in iris)  # type: ignore[attr-defined]


def encode_vocabulary(vocab: Vocabulary) -> bytes:
    """``vocab`` as compact JSON bytes (what :func:`decode_vocabulary` reads back)."""
    n = _Table()
    data: dict[str, Any] = {
        "format": FORMAT,
        "parents": [[n(c), n.many(ps)] for c, ps in vocab.parents.items() if ps],
        "classes": n.many(vocab.classes),
        "properties": [
            [n(p), *(n.many(getattr(info, s)) for s in _SETS), [getattr(info, f) for f in _FLAGS]]
            for p, info in vocab.properties.items()
        ],
        "origin": [[n(t), n(g)] for t, g in vocab.origin.items()],
        "labels": [[n(t), ls] for t, ls in vocab.labels.items() if ls],
        "alt_labels": [[n(t), ls] for t, ls in vocab.alt_labels.items() if ls],
        "disjoint": sorted(
            {
                (n(ax.a), n(ax.b), ax.kind, n(ax.graph))
                for pairs in vocab.disjoint.values()
                for ax in pairs.values()
            }
        ),
    }
    data["iris"] = "\n".join(n.iris)  # IRIs hold no newline (rdflib refuses one)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def decode_vocabulary(raw: bytes) -> Vocabulary:
    """The vocabulary :func:`encode_vocabulary` wrote; ValueError if ``raw`` is not one."""
    with no_collections():  # ~300k new containers, none of them garbage
        return _decode(raw)


def _decode(raw: bytes) -> Vocabulary:
    data = json.loads(raw)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError("not a kgmem vocabulary")
    # written from URIRefs, so not checked again (rdflib's check is a third of the time)
    iri = [str.__new__(URIRef, s) for s in data["iris"].split("\n")]
    vocab = Vocabulary()
    vocab.parents = defaultdict(set, {iri[c]: {iri[p] for p in ps} for c, ps in data["parents"]})
    vocab.classes = {iri[c] for c in data["classes"]}
    for p, *sets, flags in data["properties"]:
        domains, ranges, domain_includes, range_includes, parents = (
            {iri[i] for i in ids} for ids in sets
        )
        info = PropertyInfo(iri[p], domains, ranges, domain_includes, range_includes, parents)
        info.functional, info.object_property, info.datatype_property = flags
        vocab.properties[iri[p]] = info
    vocab.origin = {iri[t]: iri[g] for t, g in data["origin"]}
    vocab.labels = defaultdict(list, {iri[t]: ls for t, ls in data["labels"]})
    vocab.alt_labels = defaultdict(list, {iri[t]: ls for t, ls in data["alt_labels"]})
    for a, b, kind, graph in data["disjoint"]:
        vocab.add_disjoint(DisjointAxiom(iri[a], iri[b], kind, iri[graph]))
    return vocab
