"""Ontology layer costs: effective-ontology closure over the full catalogue, and validating a
25-memory patch through the validation service on stores of 10k and 1M triples.

    .venv/bin/python benchmarks/ontology_validation.py [--mirror ../shared/ontologies]

Without --mirror only the repo's own ontologies (kgmem + starter) are loaded. Prints tables,
then `effective_closure_ms=` and last `validation_p50_ms=<median at the largest store>`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.service import OntologyService
from kgmem.ontology.validation import ValidationService
from kgmem.store import (
    Changeset,
    OxigraphStore,
    Quad,
    QueryRegistry,
    RdfFormat,
    UserGraphs,
    catalogue_graph,
)
from kgmem.vocab import KGM, RDF, SDO

REPO = Path(__file__).resolve().parents[1]
USER = UserGraphs("bench")
PREFIXES = (
    b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
    b"@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
)


def load_mirror(store: OxigraphStore, mirror: Path) -> None:
    """The release files, quirks applied (what `kgmem ontology install` does)."""
    kb = mirror / "kbpedia"
    store.load((kb / "kko.n3").read_bytes(), RdfFormat.TURTLE, catalogue_graph("kko"), bulk=True)
    typologies = b"".join(
        PREFIXES + p.read_bytes() + b"\n" for p in sorted((kb / "typologies").glob("*.n3"))
    )
    store.load(typologies, RdfFormat.TURTLE, catalogue_graph("kbpedia"), bulk=True)
    store.load(
        (mirror / "schemaorg" / "schemaorg-current-https.nt").read_bytes(),
        RdfFormat.NTRIPLES,
        catalogue_graph("schemaorg"),
        bulk=True,
    )
    for name, path, fmt in (
        ("foaf", "foaf/foaf.rdf", RdfFormat.RDFXML),
        ("dcterms", "dcterms/dublin_core_terms.ttl", RdfFormat.TURTLE),
        ("skos", "skos/skos.rdf", RdfFormat.RDFXML),
    ):
        store.load((mirror / path).read_bytes(), fmt, catalogue_graph(name), bulk=True)


def prepare(directory: Path, mirror: Path | None) -> tuple[OxigraphStore, QueryRegistry]:
    store, queries = OxigraphStore(directory), QueryRegistry.load()
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    store.load(
        (REPO / "ontologies" / "starter.ttl").read_bytes(),
        RdfFormat.TURTLE,
        catalogue_graph("starter"),
    )
    if mirror is not None:
        load_mirror(store, mirror)
    return store, queries


def memory(i: int, prefix: str = "m") -> list[Quad]:
    """One grounded semantic memory with its claim, evidence, source and two entities."""
    m, g, s = URIRef(f"urn:bench:{prefix}{i}"), USER.kg, USER.sources
    ev, claim, msg = URIRef(f"{m}-ev"), URIRef(f"{m}-claim"), URIRef(f"urn:bench:msg{i}")
    person, org = URIRef(f"urn:bench:person{i}"), URIRef(f"urn:bench:org{i % 50}")
    text = f"I work at Acme {i} since March."
    return [
        Quad(m, RDF.type, KGM.Memory, g),
        Quad(m, KGM.kind, KGM.semantic, g),
        Quad(m, KGM.status, KGM.active, g),
        Quad(m, KGM.title, Literal(f"Works at {i}"), g),
        Quad(m, KGM.confidence, Literal(0.9), g),
        Quad(m, KGM.about, person, g),
        Quad(m, KGM.claim, claim, g),
        Quad(m, KGM.evidence, ev, g),
        Quad(claim, KGM.subject, person, g),
        Quad(claim, KGM.predicate, SDO.worksFor, g),
        Quad(claim, KGM.object, org, g),
        Quad(ev, RDF.type, KGM.Evidence, g),
        Quad(ev, KGM.source, msg, g),
        Quad(ev, KGM.sourceType, KGM.userMessage, g),
        Quad(ev, KGM.quote, Literal(text[:14]), g),
        Quad(ev, KGM.spanStart, Literal(0), g),
        Quad(ev, KGM.spanEnd, Literal(14), g),
        Quad(ev, KGM.supportKind, KGM.explicit, g),
        Quad(ev, KGM.authority, KGM.userAuthority, g),
        Quad(msg, RDF.type, KGM.Message, s),
        Quad(msg, KGM.chat, Literal("c1"), s),
        Quad(msg, KGM.turn, Literal(i), s),
        Quad(msg, KGM.role, Literal("user"), s),
        Quad(msg, KGM.text, Literal(text), s),
        Quad(msg, KGM.timestamp, Literal("2026-01-01T00:00:00Z", datatype=XSD.dateTime), s),
        Quad(person, RDF.type, KGM.Entity, g),
        Quad(person, RDF.type, SDO.Person, g),
        Quad(person, KGM.name, Literal(f"Person {i}"), g),
        Quad(person, SDO.worksFor, org, g),
    ]


def fill(store: OxigraphStore, triples: int) -> None:
    """Bulk-add synthetic memories until the store holds about ``triples`` triples."""
    per, i = len(memory(0)), 0
    while store.count() < triples:
        batch = [q for j in range(i, i + 2000) for q in memory(j, "old")]
        raw = [
            ox.Quad(
                ox.NamedNode(str(q.subject)),
                ox.NamedNode(str(q.predicate)),
                _ox(q.object),
                ox.NamedNode(str(q.graph)),
            )
            for q in batch
        ]
        store._ox.bulk_extend(raw)  # benchmark set-up only: not transactional
        i += 2000
    del per


def _ox(term: object) -> ox.NamedNode | ox.Literal:
    if isinstance(term, URIRef):
        return ox.NamedNode(str(term))
    assert isinstance(term, Literal)
    dt = ox.NamedNode(str(term.datatype)) if term.datatype else None
    return ox.Literal(str(term), datatype=dt)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def closure_table(ontology: OntologyService) -> float:
    t0 = time.perf_counter()
    vocab = ontology.vocabulary()
    load_s = time.perf_counter() - t0
    rng = random.Random(7)
    classes, properties = sorted(vocab.classes), sorted(vocab.properties)
    terms = rng.sample(classes, min(160, len(classes))) + rng.sample(
        properties, min(40, len(properties))
    )
    cold = timed(lambda: EffectiveOntology.build("u", vocab, terms), 1)[0]
    warm = statistics.median(timed(lambda: EffectiveOntology.build("u", vocab, terms), 20))
    search = statistics.median(timed(lambda: ontology.search("chemical element"), 20))
    print(f"catalogue classes {len(vocab.classes)}, properties {len(vocab.properties)}")
    print(f"{'step':<44} {'ms':>10}")
    print(f"{'load catalogue view (once per version)':<44} {load_s * 1000:>10.1f}")
    print(f"{'closure of 200 used terms, cold':<44} {cold:>10.2f}")
    print(f"{'closure of 200 used terms, warm':<44} {warm:>10.2f}")
    print(f"{'term search (after a one-off index build)':<44} {search:>10.2f}")
    return cold


def validation_row(store: OxigraphStore, queries: QueryRegistry, size: int) -> float:
    fill(store, size)
    ontology = OntologyService(store, queries)
    service = ValidationService(store, queries, ontology)
    counter = iter(range(10**6, 10**7, 25))

    def one() -> None:
        base = next(counter)
        patch = Changeset.of(q for i in range(base, base + 25) for q in memory(i))
        report = service.validate("bench", patch)
        assert report.conforms, report.violations[:3]

    one()  # warm: shapes compiled, effective ontology built
    samples = timed(one, 30)
    p50 = statistics.median(samples)
    p95 = statistics.quantiles(samples, n=20)[18]
    print(f"{store.count():>12,} {p50:>10.2f} {p95:>10.2f}")
    return p50


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirror", type=Path, default=None)
    parser.add_argument("--sizes", default="10000,1000000")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp())
    store, queries = prepare(root / "closure", args.mirror)
    closure_ms = closure_table(OntologyService(store, queries))
    store.close()
    print(f"\n{'store triples':>12} {'p50 ms':>10} {'p95 ms':>10}   (validate a 25-memory patch)")
    medians = []
    for size in (int(s) for s in args.sizes.split(",")):
        store, queries = prepare(root / f"v{size}", None)
        medians.append(validation_row(store, queries, size))
        store.close()
    print(f"ratio largest/smallest: {medians[-1] / medians[0]:.2f}")
    print(f"effective_closure_ms={closure_ms:.2f}")
    print(f"validation_p50_ms={medians[-1]:.2f}")


if __name__ == "__main__":
    main()
