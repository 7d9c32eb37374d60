"""Checks SHACL cannot express over the effective ontology: disjoint types, functional
properties, and subjects or objects whose types are disjoint with a domain or range.

Open world: an untyped node never violates a domain or range; only a type that is provably
disjoint with it does (a missing ``⊑`` link is not evidence of a mislabel).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import NamedTuple

from rdflib import Literal, URIRef
from rdflib.term import Node

from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.report import Violation, ViolationKind
from kgmem.vocab import OWL, RDF, RDFS, XSD

__all__ = ["check_axioms"]

Triple = tuple[Node, Node, Node]


def check_axioms(
    triples: Iterable[Triple], focus: Iterable[Node], effective: EffectiveOntology
) -> list[Violation]:
    """Every axiom violation of the ``focus`` nodes within ``triples``."""
    types: dict[Node, list[URIRef]] = defaultdict(list)
    values: dict[Node, dict[URIRef, list[Node]]] = defaultdict(lambda: defaultdict(list))
    for s, p, o in triples:
        if p == RDF.type and isinstance(o, URIRef):
            types[s].append(o)
        elif isinstance(p, URIRef):
            values[s][p].append(o)
    found: list[Violation] = []
    bounds: dict[URIRef, _Bounds] = {}  # a batch writes the same few predicates many times
    for node in focus:
        found += _disjoint_types(node, sorted(set(types.get(node, ()))), effective)
        for p, objs in values.get(node, {}).items():
            found += _functional(node, p, objs, effective)
            bound = bounds.get(p)
            if bound is None:
                bound = bounds[p] = _bounds(p, effective)
            if bound.domain or bound.domain_includes or bound.range or bound.range_includes:
                for o in dict.fromkeys(objs):
                    found += _domain_range(types, node, p, o, effective, bound)
    return found


class _Bounds(NamedTuple):
    """What a property's declarations allow: rdfs:domain, schema:domainIncludes, rdfs:range,
    schema:rangeIncludes, and whether its ranges refuse a literal, or a node."""

    domain: frozenset[URIRef]
    domain_includes: frozenset[URIRef]
    range: frozenset[URIRef]
    range_includes: frozenset[URIRef]
    no_literal: bool
    no_node: bool


def _bounds(p: URIRef, effective: EffectiveOntology) -> _Bounds:
    every, some = effective.range(p), effective.range_includes(p)
    return _Bounds(
        effective.domain(p),
        effective.domain_includes(p),
        every,
        some,
        _refuses(every | some, literal=True),
        _refuses(every | some, literal=False),
    )


def _functional(
    node: Node, p: URIRef, objs: list[Node], effective: EffectiveOntology
) -> list[Violation]:
    distinct = sorted(set(objs), key=str)
    if len(distinct) < 2 or not effective.is_functional(p):
        return []
    return [
        Violation(
            node,
            ViolationKind.FUNCTIONAL,
            OWL.FunctionalProperty,
            p,
            distinct[1],
            f"{p} is single-valued but has {len(distinct)} values",
        )
    ]


def _disjoint_types(
    node: Node, types: list[URIRef], effective: EffectiveOntology
) -> list[Violation]:
    found = []
    for a, b in combinations(types, 2):
        proof = effective.disjointness(a, b)
        if proof is not None:
            found.append(
                Violation(
                    node,
                    ViolationKind.DISJOINT,
                    OWL.disjointWith,
                    RDF.type,
                    b,
                    f"typed both {a} and {b}, which are disjoint: {proof.explain()}",
                    proof=proof,
                )
            )
    return found


def _domain_range(
    types: dict[Node, list[URIRef]],
    node: Node,
    p: URIRef,
    o: Node,
    effective: EffectiveOntology,
    bound: _Bounds,
) -> list[Violation]:
    found: list[Violation] = []
    checks = (
        (ViolationKind.DOMAIN, node, bound.domain, bound.domain_includes),
        (ViolationKind.RANGE, o, bound.range, bound.range_includes),
    )
    wrong = bound.no_literal if isinstance(o, Literal) else bound.no_node
    for kind, subject, every, some in checks:
        if not every and not some:
            continue
        if kind is ViolationKind.RANGE and wrong:
            wanted = "a literal" if isinstance(o, URIRef) else "a node"
            found.append(Violation(node, kind, "rdfs:range", p, o, f"{p} expects {wanted}"))
            continue
        subject_types = types.get(subject, [])
        for cls in every:
            proof = next(
                (pr for t in subject_types if (pr := effective.disjointness(t, cls))), None
            )
            if proof is not None:
                found.append(
                    Violation(
                        node,
                        kind,
                        f"rdfs:{kind.value}",
                        p,
                        subject,
                        f"{subject} cannot be a {cls}: {proof.explain()}",
                        proof=proof,
                    )
                )
        if (
            some
            and subject_types
            and all(any(effective.disjointness(t, cls) for t in subject_types) for cls in some)
        ):
            found.append(
                Violation(
                    node,
                    kind,
                    f"schema:{kind.value}Includes",
                    p,
                    subject,
                    f"no type of {subject} fits any {kind.value} of {p}",
                )
            )
    return found


def _refuses(ranges: frozenset[URIRef], *, literal: bool) -> bool:
    """Whether ``ranges`` refuse a literal (only classes allowed) or, with ``literal``
    false, a node (only datatypes allowed).

    Schema.org ranges are exempt: its properties take text for things routinely.
    """
    if not ranges:
        return False
    datatypes = {
        r for r in ranges if str(r).startswith(str(XSD)) or r in (RDF.langString, RDFS.Literal)
    }
    if literal:
        return not datatypes and all(not str(r).startswith("https://schema.org/") for r in ranges)
    return bool(datatypes) and datatypes == set(ranges)
