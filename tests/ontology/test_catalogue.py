"""The catalogue service on real stores: install, idempotence, failures, add, remove, list."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import (
    ChecksumMismatch,
    OntologyFileMissing,
    OntologyIdError,
    OntologyParseError,
    ProtectedOntology,
    UnknownOntology,
)
from kgmem.ontology.bundled import bundled_files, ensure_bundled
from kgmem.ontology.catalogue import Catalogue
from kgmem.ontology.manifest import load_manifest
from kgmem.ontology.outcomes import CatalogueInfo, InstallProgress, InstallStatus
from kgmem.ontology.records import CatalogueOrigin
from kgmem.store import (
    Changeset,
    Dataset,
    OxigraphStore,
    Quad,
    QueryRegistry,
    RdfFormat,
    SelectResult,
    catalogue_graph,
)
from kgmem.vocab import RDF, RDFS
from tests.conftest import REPO, SHARED
from tests.ontology.catalogue_fixtures import (
    ALPHA_TTL,
    FixtureOntology,
    http_server,
    standard_ontologies,
    write_manifest,
    write_mirror,
)

SDO_HTTP = "http://schema.org/"
SDO_HTTPS = "https://schema.org/"


def setup(
    tmp_path: Path,
    store: OxigraphStore,
    queries: QueryRegistry,
    ontologies: list[FixtureOntology] | None = None,
    url_base: str = "http://127.0.0.1:9",
) -> tuple[Catalogue, Path]:
    ontologies = ontologies or standard_ontologies()
    mirror = write_mirror(tmp_path / "mirror", ontologies)
    manifest = load_manifest(write_manifest(tmp_path / "catalogue.toml", ontologies, url_base))
    return Catalogue(store, queries, manifest), mirror


def quads(store: OxigraphStore) -> list[Quad]:
    return sorted(store.quads())


def infos(catalogue: Catalogue) -> dict[str, CatalogueInfo]:
    return {i.ontology_id: i for i in catalogue.list()}


def test_install_from_a_mirror(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    events: list[InstallProgress] = []
    report = catalogue.install(mirror=mirror, progress=events.append, download=False)

    assert [o.ontology_id for o in report.outcomes] == ["alpha", "beta", "gamma", "delta"]
    assert report.loaded == ("alpha", "beta", "gamma", "delta")
    assert {o.origin for o in report.outcomes} == {CatalogueOrigin.MIRROR}
    assert events[-1].done == events[-1].total == 6 + 4  # 6 primary files, 4 loads
    assert [e.step for e in events].count("load") == 4
    listing = {i.ontology_id: i for i in catalogue.list()}
    assert set(listing) == {"alpha", "beta", "gamma", "delta"}
    alpha = listing["alpha"]
    assert (alpha.classes, alpha.properties, alpha.triples) == (2, 2, 8 + 3)
    assert alpha.release == "1.0" and alpha.title == "Alpha"
    assert [f.path for f in alpha.files] == ["alpha/alpha-shapes.shacl", "alpha/alpha.ttl"]
    # Two files sharing a triple, each with its own `_:x`: 3 + 4 - 1 distinct triples.
    assert listing["beta"].triples == 6 and listing["beta"].classes == 2
    assert listing["delta"].properties == 1 and listing["delta"].triples == 2
    assert catalogue_graph("alpha") in store.graphs()


def test_shapes_files_go_to_a_reference_graph_never_to_validation(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, download=False)
    shapes = catalogue_graph("alpha.shapes")
    subjects = {str(q.subject) for q in store.quads(shapes)}
    # rewrite-http-schema-org and lenient (an IRI with a second '#') both applied.
    assert subjects == {SDO_HTTPS + "PersonShape", SDO_HTTPS + "validation#Bad#Iri"}
    assert not any(str(q.object).startswith(SDO_HTTP) for q in store.quads(shapes))
    assert not [g for g in store.graphs() if g.startswith("urn:kgmem:shapes:")]
    assert store.count(catalogue_graph("alpha")) > 0
    assert not list(store.quads(catalogue_graph("alpha"), URIRef(SDO_HTTPS + "PersonShape")))


def test_prepend_prefixes_quirk_makes_typologies_parse(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    ontologies = standard_ontologies()
    beta = ontologies[1]
    beta.files[0].quirks = ()
    catalogue, mirror = setup(tmp_path, store, queries, ontologies)
    with pytest.raises(OntologyParseError, match=r"beta/one\.ttl: not valid turtle"):
        catalogue.install(mirror=mirror, only=["beta"], download=False)
    assert quads(store) == []  # alpha, prepared first, was not written either


def test_lenient_quirk_is_needed_for_the_broken_iri(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    ontologies = standard_ontologies()
    ontologies[0].files[1].quirks = ("rewrite-http-schema-org",)
    catalogue, mirror = setup(tmp_path, store, queries, ontologies)
    with pytest.raises(OntologyParseError, match="alpha-shapes"):
        catalogue.install(mirror=mirror, download=False)


def test_reinstall_changes_nothing(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, download=False)
    before, version = quads(store), catalogue.version()
    events: list[InstallProgress] = []
    again = catalogue.install(mirror=mirror, progress=events.append, download=False)
    assert again.unchanged == ("alpha", "beta", "gamma", "delta") and again.loaded == ()
    assert events == []
    assert [o.triples for o in again.outcomes] == [11, 6, 1, 2]
    assert quads(store) == before
    assert catalogue.version() == version


def test_checksum_mismatch_leaves_the_catalogue_unchanged(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    before, version = quads(store), catalogue.version()
    tampered = mirror / "delta" / "d.rdf"
    tampered.write_bytes(tampered.read_bytes().replace(b"<rdfs:label>p<", b"<rdfs:label>q<"))
    expected = hashlib.sha256(
        tampered.read_bytes().replace(b"<rdfs:label>q<", b"<rdfs:label>p<")
    ).hexdigest()
    actual = hashlib.sha256(tampered.read_bytes()).hexdigest()

    with pytest.raises(ChecksumMismatch) as caught:
        catalogue.install(mirror=mirror, download=False)

    assert caught.value.path == str(tampered)
    assert (caught.value.expected_sha256, caught.value.actual_sha256) == (expected, actual)
    assert expected in str(caught.value) and actual in str(caught.value)
    # alpha and beta come before delta in the plan: still nothing was written.
    assert quads(store) == before and catalogue.version() == version


def test_missing_file_names_file_and_sources(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    (mirror / "beta" / "two.ttl").unlink()
    with pytest.raises(OntologyFileMissing) as offline:
        catalogue.install(mirror=mirror, download=False)
    assert offline.value.path == "beta/two.ttl"
    assert str(mirror) in str(offline.value) and "downloads are off" in str(offline.value)
    # With downloads on, the url (a closed loopback port here) is tried and named.
    with pytest.raises(OntologyFileMissing, match=r"download from http://127\.0\.0\.1:9/beta"):
        catalogue.install(mirror=mirror)
    assert quads(store) == []


def test_wrong_triple_count_is_refused(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    ontologies = standard_ontologies()
    ontologies[3].files[0].triples = 3
    catalogue, mirror = setup(tmp_path, store, queries, ontologies)
    with pytest.raises(OntologyParseError, match="parsed 2 triples, the manifest lists 3"):
        catalogue.install(mirror=mirror, download=False)
    assert quads(store) == []


def test_duplicate_is_used_only_when_the_primary_is_missing(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    assert [f.path for f in infos(catalogue)["gamma"].files] == ["gamma/g.nt"]
    catalogue.remove("gamma")
    primary = (mirror / "gamma" / "g.nt").read_bytes()
    (mirror / "gamma" / "g.nt").unlink()
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    assert [f.path for f in infos(catalogue)["gamma"].files] == ["gamma/g.ttl"]
    # The stand-in satisfies the manifest: restoring the primary changes nothing.
    (mirror / "gamma" / "g.nt").write_bytes(primary)
    assert catalogue.install(mirror=mirror, only=["gamma"]).unchanged == ("gamma",)


def test_changed_release_reloads_and_drops_old_triples(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, only=["alpha"], download=False)
    version = catalogue.version()
    ontologies = standard_ontologies()
    ontologies[0].release = "2.0"
    ontologies[0].files = ontologies[0].files[:1]
    ontologies[0].files[0].text = ALPHA_TTL.replace('rdfs:label "thing" ', 'rdfs:label "item" ')
    write_mirror(mirror, ontologies)
    manifest = load_manifest(write_manifest(tmp_path / "v2.toml", ontologies))
    report = catalogue.install(manifest, mirror=mirror, only=["alpha"], download=False)
    assert report.loaded == ("alpha",)
    labels = {str(q.object) for q in store.quads(catalogue_graph("alpha"), predicate=RDFS.label)}
    assert "item" in labels and "thing" not in labels
    assert catalogue_graph("alpha.shapes") not in store.graphs()
    assert infos(catalogue)["alpha"].release == "2.0"
    assert catalogue.version() != version


def test_download_from_a_local_http_server(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    web = write_mirror(tmp_path / "web", standard_ontologies())
    with http_server(web) as base:
        catalogue, _ = setup(tmp_path, store, queries, url_base=base)
        report = catalogue.install(mirror=None, only=["alpha", "delta"])
        assert report.loaded == ("alpha", "delta")
        assert {o.origin for o in report.outcomes} == {CatalogueOrigin.URL}
        listing = infos(catalogue)
        assert listing["delta"].triples == 2
        assert {f.origin for f in listing["alpha"].files} == {CatalogueOrigin.URL}
        # A mirror lacking a file: that file alone is downloaded.
        partial_mirror = write_mirror(tmp_path / "partial", standard_ontologies())
        (partial_mirror / "beta" / "two.ttl").unlink()
        beta = catalogue.install(mirror=partial_mirror, only=["beta"]).outcomes[-1]
        assert beta.origin is CatalogueOrigin.URL
        origins = {f.path: f.origin for f in infos(catalogue)["beta"].files}
        assert origins == {
            "beta/one.ttl": CatalogueOrigin.MIRROR,
            "beta/two.ttl": CatalogueOrigin.URL,
        }
        before = quads(store)
        (web / "gamma" / "g.nt").unlink()
        (web / "gamma" / "g.ttl").write_text("# not the listed bytes\n")
        with pytest.raises(ChecksumMismatch, match=r"gamma/g\.ttl \(from http://127"):
            catalogue.install(only=["gamma"])
        (web / "gamma" / "g.ttl").unlink()
        with pytest.raises(OntologyFileMissing, match="HTTP 404"):
            catalogue.install(only=["gamma"])
        assert quads(store) == before


SAMPLES = {
    "ttl": "@prefix ex: <http://example.org/x#> .\n"
    "@prefix owl: <http://www.w3.org/2002/07/owl#> .\nex:A a owl:Class .\nex:B a owl:Class .\n",
    "nt": "<http://example.org/x#A> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
    "<http://www.w3.org/2002/07/owl#Class> .\n",
    "rdf": '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
    ' xmlns:owl="http://www.w3.org/2002/07/owl#">\n'
    '<owl:Class rdf:about="http://example.org/x#A"/>\n</rdf:RDF>\n',
    "n3": "@prefix ex: <http://example.org/x#> .\n"
    "ex:A a <http://www.w3.org/2002/07/owl#Class> ; ex:p [ ex:q 1 ] .\n",
}
EXPECTED = {"ttl": (2, 2), "nt": (1, 1), "rdf": (1, 1), "n3": (3, 1)}


@pytest.mark.parametrize("suffix", sorted(SAMPLES))
def test_add_each_format(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry, suffix: str
) -> None:
    catalogue, _ = setup(tmp_path, store, queries)
    path = tmp_path / f"mine.{suffix}"
    path.write_text(SAMPLES[suffix])
    outcome = catalogue.add(path, "mine", title="Mine")
    info = infos(catalogue)["mine"]
    assert outcome.status is InstallStatus.LOADED
    assert (info.triples, info.classes) == EXPECTED[suffix]
    assert info.origin is CatalogueOrigin.ADDED and info.title == "Mine"
    assert info.files[0].path == path.name


def test_add_with_explicit_format_and_replace(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, _ = setup(tmp_path, store, queries)
    odd = tmp_path / "vocab.data"
    odd.write_text(SAMPLES["ttl"])
    with pytest.raises(OntologyParseError, match="give the format"):
        catalogue.add(odd, "mine")
    catalogue.add(odd, "mine", RdfFormat.TURTLE)
    version = catalogue.version()
    other = tmp_path / "other.nt"
    other.write_text(SAMPLES["nt"])
    with pytest.raises(OntologyIdError, match="an ontology with this id is installed"):
        catalogue.add(other, "mine")
    catalogue.add(other, "mine", replace=True)
    assert infos(catalogue)["mine"].triples == 1
    assert catalogue.version() != version


def test_add_refuses_bad_files_and_ids(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    good = tmp_path / "good.ttl"
    good.write_text(SAMPLES["ttl"])
    catalogue.add(good, "mine")
    before = quads(store)
    broken = tmp_path / "broken.ttl"
    broken.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b .\n")
    with pytest.raises(OntologyParseError, match=r"broken\.ttl: not valid turtle"):
        catalogue.add(broken, "mine", replace=True)
    with pytest.raises(OntologyParseError, match="holds no triples"):
        (tmp_path / "empty.ttl").write_text("# nothing\n")
        catalogue.add(tmp_path / "empty.ttl", "other")
    with pytest.raises(OntologyFileMissing, match="cannot be read"):
        catalogue.add(tmp_path / "absent.ttl", "other")
    with pytest.raises(OntologyIdError, match="the manifest uses this id"):
        catalogue.add(good, "alpha")
    with pytest.raises(OntologyIdError, match="an ontology with this id is installed"):
        catalogue.add(good, "mine")
    with pytest.raises(OntologyIdError, match="must match"):
        catalogue.add(good, "Bad.Id")
    assert quads(store) == before


def test_install_keeps_an_added_file_that_took_a_manifest_id(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    mine = tmp_path / "mine.nt"
    mine.write_text(SAMPLES["nt"])
    catalogue.add(mine, "delta", replace=True)
    report = catalogue.install(mirror=mirror, download=False)
    assert report.ids(InstallStatus.KEPT_ADDED) == ("delta",)
    assert infos(catalogue)["delta"].origin is CatalogueOrigin.ADDED
    explicit = catalogue.install(mirror=mirror, only=["delta"], download=False)
    assert explicit.loaded == ("delta",)
    assert infos(catalogue)["delta"].origin is CatalogueOrigin.MIRROR


def test_remove(tmp_path: Path, store: OxigraphStore, queries: QueryRegistry) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    catalogue.install(mirror=mirror, only=["alpha", "gamma"], download=False)
    version = catalogue.version()
    dropped = catalogue.remove("alpha")
    assert dropped == (catalogue_graph("alpha"), catalogue_graph("alpha.shapes"))
    assert not [g for g in store.graphs() if "alpha" in g]
    assert set(infos(catalogue)) == {"gamma"}
    assert catalogue.version() != version
    with pytest.raises(UnknownOntology, match="'alpha'"):
        catalogue.remove("alpha")
    with pytest.raises(UnknownOntology):
        catalogue.remove("no:such")
    with pytest.raises(ProtectedOntology, match="kgmem's own vocabulary"):
        catalogue.remove("kgmem")


def test_bundled_ontologies_are_listed_and_protected(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    catalogue = Catalogue(store, queries, load_manifest())
    listing = {i.ontology_id: i for i in catalogue.list()}
    assert set(listing) == {"kgmem", "starter"}
    assert listing["kgmem"].origin is CatalogueOrigin.BUNDLED
    assert listing["kgmem"].classes > 20 and listing["starter"].classes > 20
    assert listing["starter"].files[0].path == "starter.ttl"
    assert listing["starter"].release == "0.1.0"
    report = catalogue.install(only=["kgmem", "starter"], download=False)
    assert report.ids(InstallStatus.BUNDLED) == ("kgmem", "starter")
    with pytest.raises(ProtectedOntology, match="bundled"):
        catalogue.remove("starter")
    with pytest.raises(ProtectedOntology):
        catalogue.add(REPO / "ontologies" / "starter.ttl", "starter", replace=True)


def test_unfinished_install_is_listed_and_reloaded(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    graph = catalogue_graph("delta")
    store.commit(Changeset.of([Quad(URIRef("urn:x"), RDF.type, RDFS.Class, graph)]))
    version = catalogue.version()
    assert infos(catalogue)["delta"].origin is CatalogueOrigin.INCOMPLETE
    assert catalogue.install(mirror=mirror, only=["delta"], download=False).loaded == ("delta",)
    assert not list(store.quads(graph, URIRef("urn:x")))
    assert catalogue.version() != version


def test_version_tracks_every_change(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    seen = {catalogue.version()}
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    seen.add(catalogue.version())
    catalogue.install(mirror=mirror, only=["gamma"], download=False)
    assert catalogue.version() in seen
    catalogue.install(mirror=mirror, only=["delta"], download=False)
    seen.add(catalogue.version())
    catalogue.remove("delta")
    assert catalogue.version() in seen  # back to gamma alone
    assert len(seen) == 3


def _count(store: OxigraphStore, text: str) -> int:
    result = store.query_text(text, dataset=Dataset())
    assert isinstance(result, SelectResult)
    value = result.rows[0]["n"]
    assert isinstance(value, Literal)
    return int(value)


@pytest.mark.shared
def test_full_mirror_install(tmp_path: Path, queries: QueryRegistry) -> None:
    store = OxigraphStore(tmp_path / "store")
    try:
        ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
        catalogue = Catalogue(store, queries, load_manifest())
        report = catalogue.install(mirror=SHARED / "ontologies", download=False)
        assert set(report.loaded) == {"kko", "kbpedia", "schemaorg", "foaf", "dcterms", "skos"}
        rc = _count(
            store,
            "SELECT (COUNT(DISTINCT ?c) AS ?n) WHERE { GRAPH <urn:kgmem:catalogue:kbpedia> "
            '{ ?c a owl:Class FILTER(STRSTARTS(STR(?c), "http://kbpedia.org/kko/rc/")) } }',
        )
        assert rc >= 57557
        sdo = _count(
            store,
            "SELECT (COUNT(DISTINCT ?c) AS ?n) WHERE { GRAPH <urn:kgmem:catalogue:schemaorg> "
            '{ ?c a rdfs:Class FILTER(STRSTARTS(STR(?c), "https://schema.org/")) } }',
        )
        assert 900 <= sdo <= 1000
        listing = {i.ontology_id: i for i in catalogue.list()}
        for ontology_id, term in (
            ("foaf", "http://xmlns.com/foaf/0.1/Person"),
            ("dcterms", "http://purl.org/dc/terms/Agent"),
            ("skos", "http://www.w3.org/2004/02/skos/core#Concept"),
        ):
            assert listing[ontology_id].classes > 0
            assert list(store.quads(catalogue_graph(ontology_id), URIRef(term)))
        assert listing["kbpedia"].classes >= 57557
        shapes = catalogue_graph("schemaorg.shapes")
        assert store.count(shapes) > 16000
        assert not any(str(q.object).startswith(SDO_HTTP) for q in store.quads(shapes))
        before = store.count()
        again = catalogue.install(mirror=SHARED / "ontologies", download=False)
        assert set(again.unchanged) == set(report.loaded) and again.loaded == ()
        assert store.count() == before
    finally:
        store.close()
