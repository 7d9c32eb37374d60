"""Random memories validated against shapes/core.ttl: native == pySHACL on every example."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD
from rdflib.term import Node

from kgmem.vocab import KGM
from tests.ontology.shacl_support import core_shapes, keys, kgmem_ontology, native_and_reference

EX = "http://example.org/random#"
TEXT = "I work at Acme since March."

kinds = st.sampled_from([None, KGM.semantic, KGM.episodic, KGM.procedural, KGM.bogus])
statuses = st.sampled_from([None, KGM.proposed, KGM.active, KGM.pending, KGM.unknownStatus])
titles = st.sampled_from([None, "", "Alice works at Acme", "x" * 201])
confidences = st.one_of(
    st.none(),
    st.floats(min_value=-0.5, max_value=1.5, allow_nan=False).map(
        lambda f: Literal(f, datatype=XSD.double)
    ),
    st.just(Literal("0.5", datatype=XSD.decimal)),
)
spans = st.sampled_from([None, (0, 14), (0, 13), (5, 2), (-1, 4), (0, 99)])
quotes = st.sampled_from([None, "I work at Acme", "I run at Acme"])


@st.composite
def evidence(draw: st.DrawFn, g: Graph, memory: URIRef, n: int) -> None:
    ev: Node = BNode() if draw(st.booleans()) else URIRef(f"{EX}ev{n}")
    source = URIRef(f"{EX}msg{n}")
    g.add((memory, KGM.evidence, ev))
    if draw(st.booleans()):
        g.add((ev, RDF.type, KGM.Evidence))
    g.add((ev, KGM.source, source))
    g.add((ev, KGM.sourceType, draw(st.sampled_from([KGM.userMessage, KGM.toolResult]))))
    if draw(st.booleans()):
        g.add((ev, KGM.supportKind, KGM.explicit))
    g.add((ev, KGM.authority, KGM.userAuthority))
    quote, span = draw(quotes), draw(spans)
    if quote is not None:
        g.add((ev, KGM.quote, Literal(quote)))
    if span is not None:
        g.add((ev, KGM.spanStart, Literal(span[0])))
        g.add((ev, KGM.spanEnd, Literal(span[1])))
    g.add((source, RDF.type, draw(st.sampled_from([KGM.Message, KGM.Entity]))))
    g.add((source, KGM.chat, Literal("chat-1")))
    g.add((source, KGM.turn, Literal(draw(st.sampled_from([0, 3, -1])))))
    g.add((source, KGM.role, Literal(draw(st.sampled_from(["user", "tool", "robot"])))))
    if draw(st.booleans()):
        g.add((source, KGM.toolName, Literal("search")))
    g.add((source, KGM.text, Literal(TEXT)))
    g.add((source, KGM.timestamp, Literal("2025-03-01T10:00:00Z", datatype=XSD.dateTime)))


@st.composite
def memories(draw: st.DrawFn) -> Graph:
    g = Graph()
    for i in range(draw(st.integers(min_value=1, max_value=3))):
        m = URIRef(f"{EX}m{i}")
        g.add((m, RDF.type, KGM.Memory))
        for pred, value in ((KGM.kind, draw(kinds)), (KGM.status, draw(statuses))):
            if value is not None:
                g.add((m, pred, value))
        title, confidence = draw(titles), draw(confidences)
        if title is not None:
            g.add((m, KGM.title, Literal(title)))
        if confidence is not None:
            g.add((m, KGM.confidence, confidence))
        for t in range(draw(st.sampled_from([0, 2, 21]))):
            g.add((m, KGM.tag, Literal(f"t{t}")))
        if draw(st.booleans()):
            g.add((m, KGM.excerpt, Literal(draw(st.sampled_from(["one line", "two\nlines"])))))
        if draw(st.booleans()):
            g.add((m, KGM.occurredAt, Literal("2025-03-01T10:00:00Z", datatype=XSD.dateTime)))
        for n in range(draw(st.integers(min_value=0, max_value=2))):
            draw(evidence(g, m, i * 10 + n))
    return g


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(memories())
def test_random_memories_native_equals_pyshacl(data: Graph) -> None:
    native, reference = native_and_reference(core_shapes(), data, kgmem_ontology())

    assert keys(native) == keys(reference)
    assert native.conforms is reference.conforms
