"""SHACL validation of a 25-memory patch: native validator vs pySHACL, and store-size independence.

    .venv/bin/python benchmarks/validation.py [--runs 30] [--reference-runs 10] [--large 1000000]

Builds a realistic patch (25 memories, each with a claim, evidence, a source message and
entities, shaped like tests/data/shapes/memory_semantic_active_conforms.ttl), validates it with
shapes/core.ttl natively and with pySHACL, then loads it into on-disk Oxigraph stores of ~10k and
~1M triples of synthetic memories, extracts its touched neighbourhood (the patch's nodes and
everything two hops out: evidence, claims, sources, entities) and validates that. Prints a
table, then `validation_p50_ms=<native median at the large store>`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD
from rdflib.term import Node

from kgmem.ontology.shacl import GraphHierarchy, compile_shapes, pyshacl_reference
from kgmem.vocab import KGM

REPO = Path(__file__).resolve().parent.parent
EX = "https://example.org/bench/"
TEXT = "I work at Acme since March."
Triple = tuple[Node, Node, Node]


def memory(prefix: str, i: int) -> Iterator[Triple]:
    """One active semantic memory with a claim, grounded evidence and a user message."""
    m, claim, ev, msg = (URIRef(f"{EX}{prefix}{kind}{i}") for kind in ("m", "c", "e", "msg"))
    alice, acme = URIRef(f"{EX}alice{i % 50}"), URIRef(f"{EX}acme{i % 20}")
    dt = XSD.dateTime
    yield from [
        (m, RDF.type, KGM.Memory), (m, KGM.kind, KGM.semantic), (m, KGM.status, KGM.active),
        (m, KGM.title, Literal(f"Alice works at Acme ({i})")),
        (m, KGM.excerpt, Literal("Alice is employed by Acme.")),
        (m, KGM.confidence, Literal("0.9", datatype=XSD.double)),
        (m, KGM.strength, Literal("1.0", datatype=XSD.double)),
        (m, KGM.pinned, Literal(False)), (m, KGM.domain, Literal("people")),
        (m, KGM.tag, Literal("work")), (m, KGM.tag, Literal(f"t{i % 7}")),
        (m, KGM.about, alice), (m, KGM.about, acme), (m, KGM.claim, claim), (m, KGM.evidence, ev),
        (m, KGM.recordedAt, Literal("2025-03-01T10:05:00Z", datatype=dt)),
        (claim, RDF.type, KGM.Claim), (claim, KGM.subject, alice),
        (claim, KGM.predicate, URIRef("https://schema.org/worksFor")), (claim, KGM.object, acme),
        (ev, RDF.type, KGM.Evidence), (ev, KGM.source, msg),
        (ev, KGM.sourceType, KGM.userMessage), (ev, KGM.quote, Literal("I work at Acme")),
        (ev, KGM.spanStart, Literal(0)), (ev, KGM.spanEnd, Literal(14)),
        (ev, KGM.supportKind, KGM.explicit), (ev, KGM.authority, KGM.userAuthority),
        (msg, RDF.type, KGM.Message), (msg, KGM.chat, Literal(f"chat-{i % 10}")),
        (msg, KGM.turn, Literal(i % 30)), (msg, KGM.role, Literal("user")),
        (msg, KGM.text, Literal(TEXT)),
        (msg, KGM.timestamp, Literal("2025-03-01T10:00:00Z", datatype=dt)),
        (alice, RDF.type, KGM.Entity), (alice, KGM.name, Literal("Alice")),
        (acme, RDF.type, KGM.Entity), (acme, KGM.name, Literal("Acme")),
    ]  # fmt: skip


def to_ox(node: Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(node, URIRef):
        return ox.NamedNode(str(node))
    if isinstance(node, BNode):
        return ox.BlankNode(str(node))
    assert isinstance(node, Literal)
    if node.datatype is not None:
        return ox.Literal(str(node), datatype=ox.NamedNode(str(node.datatype)))
    return ox.Literal(str(node), language=node.language)


def from_ox(term: object) -> Node:
    if isinstance(term, ox.NamedNode):
        return URIRef(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    assert isinstance(term, ox.Literal)
    if term.language:
        return Literal(term.value, lang=term.language)
    if term.datatype.value == str(XSD.string):
        return Literal(term.value)
    return Literal(term.value, datatype=URIRef(term.datatype.value))


def build_store(directory: Path, triples: int, patch: Graph) -> ox.Store:
    store = ox.Store(str(directory))
    # the 4 entity triples of a memory are shared with other memories
    per_memory = sum(1 for _ in memory("s", 0)) - 4
    batch: list[ox.Quad] = []
    for i in range(triples // per_memory):
        batch.extend(ox.Quad(*map(to_ox, t)) for t in memory("s", i))  # type: ignore[arg-type]
        if len(batch) >= 200_000:
            store.bulk_extend(batch)
            batch = []
    batch.extend(ox.Quad(*map(to_ox, t)) for t in patch)  # type: ignore[arg-type]
    store.bulk_extend(batch)
    store.optimize()
    return store


def neighbourhood(store: ox.Store, roots: list[URIRef], hops: int = 2) -> Graph:
    """The roots' outgoing triples and those of every node reached within ``hops``."""
    g = Graph()
    frontier: set[object] = {ox.NamedNode(str(r)) for r in roots}
    seen: set[object] = set()
    for _ in range(hops + 1):
        nxt: set[object] = set()
        for node in frontier - seen:
            seen.add(node)
            for quad in store.quads_for_pattern(node, None, None):
                g.add((from_ox(quad.subject), from_ox(quad.predicate), from_ox(quad.object)))
                if not isinstance(quad.object, ox.Literal) and quad.predicate.value != str(
                    RDF.type
                ):
                    nxt.add(quad.object)
        frontier = nxt
    return g


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.95 * len(values)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--reference-runs", type=int, default=10)
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    args = parser.parse_args()

    shapes = Graph().parse(REPO / "shapes" / "core.ttl", format="turtle")
    ontology = Graph().parse(REPO / "ontologies" / "kgmem.ttl", format="turtle")
    compile_ms = timed(lambda: compile_shapes(shapes), 5)
    program = compile_shapes(shapes)
    hierarchy = GraphHierarchy(ontology)
    patch = Graph()
    for i in range(25):
        for t in memory("p", i):
            patch.add(t)
    roots = [URIRef(f"{EX}pm{i}") for i in range(25)]
    focus = [n for n in patch.subjects(unique=True)]

    native = program.validate(patch, hierarchy, focus)
    reference = pyshacl_reference(shapes, patch, ontology)
    assert native.conforms and reference.conforms, (native, reference)
    native_ms = timed(lambda: program.validate(patch, hierarchy, focus), args.runs)
    reference_ms = timed(lambda: pyshacl_reference(shapes, patch, ontology), args.reference_runs)
    rows = [
        ("compile shapes/core.ttl", compile_ms),
        (f"native, patch only ({len(patch)} triples)", native_ms),
        ("pySHACL, patch only", reference_ms),
    ]
    large_median = small_median = 0.0
    for size in (args.small, args.large):
        directory = Path(tempfile.mkdtemp()) / "store"
        start = time.perf_counter()
        store = build_store(directory, size, patch)
        built_s = time.perf_counter() - start
        hood = neighbourhood(store, roots)
        report = program.validate(hood, hierarchy, focus)
        assert report.conforms, report.results[:3]
        extract = timed(lambda: neighbourhood(store, roots), args.runs)  # noqa: B023
        check = timed(lambda: program.validate(hood, hierarchy, focus), args.runs)  # noqa: B023
        label = f"{len(store):,} triples (built in {built_s:.1f} s)"
        rows.append((f"extract neighbourhood, {label}", extract))
        rows.append((f"native, neighbourhood ({len(hood)} triples), {label}", check))
        if size == args.large:
            large_median = statistics.median(check)
        else:
            small_median = statistics.median(check)

    print(f"{'measurement':<72} {'p50 ms':>9} {'p95 ms':>9} {'runs':>5}")
    for name, values in rows:
        print(f"{name:<72} {statistics.median(values):>9.2f} {p95(values):>9.2f} {len(values):>5}")
    print(f"ratio native p50 large/small store: {large_median / small_median:.2f}")
    print(f"validation_p50_ms={large_median:.2f}")


if __name__ == "__main__":
    main()
