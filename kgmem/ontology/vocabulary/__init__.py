"""An in-memory view of ontology graphs: hierarchy, properties, labels and disjointness.

Built once per catalogue version from a handful of named queries (``read``), kept between
processes as plain JSON (``codec``), and given to each user as a copy-on-write layer
(``layered``) over the one shared view (``view``); ``terms`` holds what it is made of.
"""

from kgmem.ontology.vocabulary.read import load_vocabulary
from kgmem.ontology.vocabulary.terms import (
    DisjointAxiom,
    DisjointnessProof,
    PropertyInfo,
    TermKind,
    local_name_words,
)
from kgmem.ontology.vocabulary.view import Vocabulary

__all__ = [
    "DisjointAxiom",
    "DisjointnessProof",
    "PropertyInfo",
    "TermKind",
    "Vocabulary",
    "load_vocabulary",
    "local_name_words",
]
