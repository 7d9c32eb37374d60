"""The starter ontology module and the catalogue manifest.

Self-contained on purpose (no conftest fixtures): the starter must load with no mirror and no
network, so most tests read only the repository. One test, marked ``shared``, checks the starter
and the manifest against the mirrored official releases in ``../shared/ontologies``.
"""

from __future__ import annotations

import hashlib
import itertools
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS, SKOS, XSD

REPO_ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY_DIR = REPO_ROOT / "ontologies"
STARTER = ONTOLOGY_DIR / "starter.ttl"
MANIFEST = ONTOLOGY_DIR / "catalogue.toml"
SHARED_ONTOLOGIES = REPO_ROOT.parent / "shared" / "ontologies"

STARTER_IRI = URIRef("https://w3id.org/kgmem/starter")
SCHEMA = "https://schema.org/"
FOAF = "http://xmlns.com/foaf/0.1/"
DCTERMS = "http://purl.org/dc/terms/"
SKOS_NS = "http://www.w3.org/2004/02/skos/core#"
KKO = "http://kbpedia.org/ontologies/kko#"
RC = "http://kbpedia.org/kko/rc/"
KGM = "https://w3id.org/kgmem/ns#"

# Which catalogue ontology must define an IRI, by namespace.
NAMESPACE_OWNER = {
    SCHEMA: "schemaorg",
    FOAF: "foaf",
    DCTERMS: "dcterms",
    SKOS_NS: "skos",
    KKO: "kko",
    RC: "kbpedia",
}

PERSON = URIRef(SCHEMA + "Person")
ORGANIZATION = URIRef(SCHEMA + "Organization")
PLACE = URIRef(SCHEMA + "Place")
EVENT = URIRef(SCHEMA + "Event")
CREATIVE_WORK = URIRef(SCHEMA + "CreativeWork")
PHYSICAL_OBJECT = URIRef(RC + "PhysicalObject")
TOP_CATEGORIES = (PERSON, ORGANIZATION, PLACE, EVENT, CREATIVE_WORK, PHYSICAL_OBJECT)
PLANET = URIRef(RC + "Planet")
CHEMICAL_ELEMENT = URIRef(RC + "ChemicalElement")

# Everyday classes the starter must declare: what the concept is -> the IRI it reuses.
REQUIRED_CLASSES = {
    "person": PERSON,
    "organization": ORGANIZATION,
    "place": PLACE,
    "event": EVENT,
    "project": URIRef(SCHEMA + "Project"),
    "service": URIRef(SCHEMA + "Service"),
    "product": URIRef(SCHEMA + "Product"),
    "creative work": CREATIVE_WORK,
    "document": URIRef(FOAF + "Document"),
    "topic": URIRef(SKOS_NS + "Concept"),
    "procedure": URIRef(SCHEMA + "HowTo"),
    "account": URIRef(FOAF + "OnlineAccount"),
    "animal": URIRef(RC + "Animal"),
    "pet": URIRef(RC + "DomesticPet"),
    "food": URIRef(RC + "Food"),
    "physical object": PHYSICAL_OBJECT,
    "city": URIRef(SCHEMA + "City"),
    "country": URIRef(SCHEMA + "Country"),
    "company": URIRef(SCHEMA + "Corporation"),
    "school": URIRef(SCHEMA + "EducationalOrganization"),
    "meeting": URIRef(RC + "Meeting-SocialGathering"),
    "trip": URIRef(SCHEMA + "Trip"),
    "book": URIRef(SCHEMA + "Book"),
    "movie": URIRef(SCHEMA + "Movie"),
    "software application": URIRef(SCHEMA + "SoftwareApplication"),
    "website": URIRef(SCHEMA + "WebSite"),
    "restaurant": URIRef(SCHEMA + "Restaurant"),
    "medical condition": URIRef(SCHEMA + "MedicalCondition"),
    "allergy": URIRef(RC + "Allergy"),
    "hobby": URIRef(RC + "Hobby"),
    "skill": URIRef(RC + "Skill"),
    "language": URIRef(SCHEMA + "Language"),
    "vehicle": URIRef(SCHEMA + "Vehicle"),
    "planet": PLANET,
    "chemical element": CHEMICAL_ELEMENT,
}

REQUIRED_SCHEMA_PROPERTIES = (
    *("name", "alternateName", "description", "url", "email", "telephone", "address"),
    *("birthDate", "jobTitle", "nationality", "homeLocation", "alumniOf", "worksFor", "memberOf"),
    *("knows", "spouse", "sibling", "parent", "children"),
    *("location", "owns", "startDate", "endDate", "author"),
)
REQUIRED_KGM_PROPERTIES = ("likes", "dislikes", "allergicTo", "hobby")

MIRROR_FILE_KEYS = ("path", "url", "sha256", "bytes", "format", "role", "quirks")
FORMATS = {"turtle", "ntriples", "rdfxml", "n3"}
ROLES = {"vocabulary", "shapes"}
QUIRKS = {"prepend-owl-rdfs-prefixes", "lenient", "rewrite-http-schema-org"}
OWL_RDFS_PREFIXES = (
    b"@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
    b"@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
)
OX_FORMATS = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "n3": ox.RdfFormat.N3,
}

Pair = frozenset[str]


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


@cache
def starter() -> Graph:
    return Graph().parse(STARTER, format="turtle")


@cache
def manifest() -> dict[str, Any]:
    with MANIFEST.open("rb") as fh:
        return tomllib.load(fh)


def ontologies() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = manifest()["ontology"]
    return entries


def mirror_files() -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for onto in ontologies():
        if not onto["bundled"]:
            for entry in onto["files"]:
                yield onto, entry


def declared(graph: Graph, kind: URIRef) -> set[URIRef]:
    return {s for s in graph.subjects(RDF.type, kind) if isinstance(s, URIRef)}


def classes() -> set[URIRef]:
    return declared(starter(), OWL.Class)


def properties() -> set[URIRef]:
    g = starter()
    return declared(g, OWL.ObjectProperty) | declared(g, OWL.DatatypeProperty)


def named_superclasses(graph: Graph) -> dict[str, set[str]]:
    """Direct named superclasses; owl:equivalentClass counts as subclass both ways."""
    parents: dict[str, set[str]] = defaultdict(set)
    for sub, sup in graph.subject_objects(RDFS.subClassOf):
        if isinstance(sub, URIRef) and isinstance(sup, URIRef):
            parents[str(sub)].add(str(sup))
    for a, b in graph.subject_objects(OWL.equivalentClass):
        if isinstance(a, URIRef) and isinstance(b, URIRef):
            parents[str(a)].add(str(b))
            parents[str(b)].add(str(a))
    return parents


def starter_disjoint_pairs(graph: Graph) -> set[Pair]:
    pairs: set[Pair] = set()
    for node in graph.subjects(RDF.type, OWL.AllDisjointClasses):
        head = graph.value(node, OWL.members)
        assert head is not None, "owl:AllDisjointClasses without owl:members"
        members = [str(m) for m in Collection(graph, head)]
        pairs |= {frozenset(p) for p in itertools.combinations(members, 2)}
    for a, b in graph.subject_objects(OWL.disjointWith):
        if isinstance(a, URIRef) and isinstance(b, URIRef):
            pairs.add(frozenset((str(a), str(b))))
    return pairs


def closure(start: str, edges: dict[str, set[str]]) -> set[str]:
    """`start` and everything reachable from it along `edges` (cycle-safe)."""
    seen = {start}
    stack = [start]
    while stack:
        for nxt in edges.get(stack.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def invert(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    inverted: dict[str, set[str]] = defaultdict(set)
    for node, targets in edges.items():
        for target in targets:
            inverted[target].add(node)
    return inverted


def literal_values(graph: Graph, subject: URIRef, predicate: URIRef) -> list[str]:
    return [str(o) for o in graph.objects(subject, predicate) if isinstance(o, Literal)]


def is_datatype(graph: Graph, node: object) -> bool:
    if isinstance(node, URIRef):
        return str(node).startswith(str(XSD)) or node == RDFS.Literal
    return isinstance(node, BNode) and (node, RDF.type, RDFS.Datatype) in graph


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# --------------------------------------------------------------------------------------------
# the starter module
# --------------------------------------------------------------------------------------------


def test_starter_parses_with_rdflib_and_pyoxigraph() -> None:
    assert len(starter()) > 500
    store = ox.Store()
    store.load(path=str(STARTER), format=ox.RdfFormat.TURTLE)
    assert len(store) == len(starter())


def test_ontology_header() -> None:
    g = starter()
    assert (STARTER_IRI, RDF.type, OWL.Ontology) in g
    assert literal_values(g, STARTER_IRI, OWL.versionInfo) == ["0.1.0"]
    assert literal_values(g, STARTER_IRI, URIRef(DCTERMS + "title"))
    licenses = set(g.objects(STARTER_IRI, URIRef(DCTERMS + "license")))
    assert URIRef("https://creativecommons.org/licenses/by/4.0/") in licenses
    assert any("CC BY 4.0" in r for r in literal_values(g, STARTER_IRI, URIRef(DCTERMS + "rights")))


def test_every_class_has_label_comment_and_reaches_the_root() -> None:
    g = starter()
    parents = named_superclasses(g)
    thing = SCHEMA + "Thing"
    assert len(classes()) >= len(REQUIRED_CLASSES)
    for cls in classes():
        assert literal_values(g, cls, RDFS.label), f"{cls} has no rdfs:label"
        assert literal_values(g, cls, RDFS.comment), f"{cls} has no rdfs:comment"
        assert len(literal_values(g, cls, RDFS.label)) == 1, f"{cls} has several labels"
        assert thing in closure(str(cls), parents), f"{cls} is not under schema:Thing"
        if str(cls) != thing:
            assert any(isinstance(o, URIRef) for o in g.objects(cls, RDFS.subClassOf)), cls


def test_class_labels_and_synonyms_are_unambiguous() -> None:
    """Label matching (the no-model classification fallback) needs each name to pick one class."""
    g = starter()
    owner: dict[str, URIRef] = {}
    for cls in sorted(classes()):
        names = literal_values(g, cls, RDFS.label) + literal_values(g, cls, SKOS.altLabel)
        for name in names:
            key = name.casefold()
            assert owner.setdefault(key, cls) == cls, f"{name!r}: {owner[key]} and {cls}"


def test_every_property_is_typed_labelled_and_has_domain_and_range() -> None:
    g = starter()
    assert len(properties()) >= len(REQUIRED_SCHEMA_PROPERTIES) + len(REQUIRED_KGM_PROPERTIES)
    for prop in properties():
        object_prop = (prop, RDF.type, OWL.ObjectProperty) in g
        datatype_prop = (prop, RDF.type, OWL.DatatypeProperty) in g
        assert object_prop != datatype_prop, f"{prop} must be exactly one of Object/Datatype"
        assert literal_values(g, prop, RDFS.label), f"{prop} has no rdfs:label"
        assert literal_values(g, prop, RDFS.comment), f"{prop} has no rdfs:comment"
        domains = list(g.objects(prop, RDFS.domain))
        ranges = list(g.objects(prop, RDFS.range))
        assert len(domains) == 1, f"{prop} needs exactly one rdfs:domain"
        assert len(ranges) == 1, f"{prop} needs exactly one rdfs:range"
        if datatype_prop:
            assert is_datatype(g, ranges[0]), f"{prop} is a datatype property without a datatype"
        else:
            assert not is_datatype(g, ranges[0]), f"{prop} is an object property with a datatype"
    for prop in declared(g, OWL.SymmetricProperty) | declared(g, OWL.FunctionalProperty):
        assert prop in properties(), f"{prop} has a characteristic but no property type"


def test_required_classes_are_present() -> None:
    g = starter()
    missing = {name: iri for name, iri in REQUIRED_CLASSES.items() if iri not in classes()}
    assert not missing
    for name, iri in REQUIRED_CLASSES.items():
        names = {n.casefold() for n in literal_values(g, iri, RDFS.label)}
        names |= {n.casefold() for n in literal_values(g, iri, SKOS.altLabel)}
        assert name in names, f"{iri} is not labelled {name!r}"


def test_required_properties_are_present() -> None:
    have = properties()
    assert not [p for p in REQUIRED_SCHEMA_PROPERTIES if URIRef(SCHEMA + p) not in have]
    assert not [p for p in REQUIRED_KGM_PROPERTIES if URIRef(KGM + p) not in have]
    # Every property the starter declares reuses a standard namespace or kgm:.
    allowed = (*NAMESPACE_OWNER, KGM)
    assert all(str(p).startswith(allowed) for p in have)


def test_functional_and_symmetric_choices() -> None:
    g = starter()
    functional = declared(g, OWL.FunctionalProperty)
    symmetric = declared(g, OWL.SymmetricProperty)
    assert URIRef(SCHEMA + "birthDate") in functional
    # spouse is single-valued only at a point in time; OWL functionality would merge ex-spouses.
    assert URIRef(SCHEMA + "spouse") not in functional
    assert URIRef(SCHEMA + "spouse") in symmetric
    for multi in ("parent", "children", "worksFor", "nationality", "birthPlace", "knows"):
        assert URIRef(SCHEMA + multi) not in functional, multi
    assert (URIRef(SCHEMA + "parent"), OWL.inverseOf, URIRef(SCHEMA + "children")) in g


def test_top_categories_are_pairwise_disjoint_except_organization_and_place() -> None:
    pairs = starter_disjoint_pairs(starter())
    for a, b in itertools.combinations(TOP_CATEGORIES, 2):
        pair = frozenset((str(a), str(b)))
        if {a, b} == {ORGANIZATION, PLACE}:
            # Schema.org's LocalBusiness and EducationalOrganization are both; so are the
            # starter's restaurant and school. Declaring them disjoint would contradict it.
            assert pair not in pairs
        else:
            assert pair in pairs, f"{a} and {b} are not declared disjoint"


def test_mercury_senses_are_disjoint() -> None:
    pairs = starter_disjoint_pairs(starter())
    senses = (PLANET, CHEMICAL_ELEMENT, ORGANIZATION, PERSON)
    for a, b in itertools.combinations(senses, 2):
        assert frozenset((str(a), str(b))) in pairs, f"{a} and {b} are not declared disjoint"


def test_no_class_has_two_disjoint_ancestors() -> None:
    """No class is disjoint with one of its own ancestors, nor sits under two disjoint classes."""
    g = starter()
    parents = named_superclasses(g)
    pairs = starter_disjoint_pairs(g)
    assert pairs
    for pair in pairs:
        a, b = sorted(pair)
        assert a != b
        assert b not in closure(a, parents), f"{a} is declared disjoint with its ancestor {b}"
        assert a not in closure(b, parents), f"{b} is declared disjoint with its ancestor {a}"
    for cls in classes():
        ancestors = closure(str(cls), parents)
        clashes = [sorted(p) for p in pairs if p <= ancestors]
        assert not clashes, f"{cls} is under disjoint classes {clashes}"


# --------------------------------------------------------------------------------------------
# the catalogue manifest
# --------------------------------------------------------------------------------------------


def test_manifest_structure() -> None:
    data = manifest()
    assert data["format_version"] == 1
    ids = [o["id"] for o in ontologies()]
    assert len(ids) == len(set(ids)), "ontology ids must be unique"
    expected = {"kgmem", "starter", "kko", "kbpedia", "schemaorg", "foaf", "dcterms", "skos"}
    assert set(ids) == expected
    for onto in ontologies():
        for key in ("title", "release", "license", "license_url", "homepage"):
            assert isinstance(onto[key], str) and onto[key], (onto["id"], key)
        assert isinstance(onto["bundled"], bool)
        assert set(onto["requires"]) <= set(ids)
        assert onto["files"], onto["id"]
        for entry in onto["files"]:
            assert entry["format"] in FORMATS
            assert entry["role"] in ROLES
            assert set(entry["quirks"]) <= QUIRKS
    paths = [e["path"] for _, e in mirror_files()]
    assert len(paths) == len(set(paths)), "mirror paths must be unique"


def test_manifest_bundled_files_ship_in_the_repo() -> None:
    bundled = {o["id"]: o for o in ontologies() if o["bundled"]}
    assert set(bundled) == {"kgmem", "starter"}
    for onto in bundled.values():
        for entry in onto["files"]:
            assert (MANIFEST.parent / entry["path"]).is_file(), entry["path"]
            assert "sha256" not in entry, "bundled files change with the code: no pinned digest"
    assert [e["path"] for e in bundled["starter"]["files"]] == [STARTER.name]


def test_manifest_mirror_entries_are_complete() -> None:
    entries = list(mirror_files())
    assert len(entries) == 1 + 66 + 4 + 3
    typologies = [e for o, e in entries if o["id"] == "kbpedia"]
    assert len(typologies) == 66
    for onto, entry in entries:
        for key in MIRROR_FILE_KEYS:
            assert key in entry, (onto["id"], entry.get("path"), key)
        assert len(entry["sha256"]) == 64
        assert int(entry["sha256"], 16) >= 0
        assert entry["url"].startswith(("https://", "http://"))
        assert not Path(entry["path"]).is_absolute()
        assert ".." not in Path(entry["path"]).parts
    for entry in typologies:
        assert entry["quirks"] == ["prepend-owl-rdfs-prefixes"]
    schema = [e for o, e in entries if o["id"] == "schemaorg"]
    schema_quirks = {Path(e["path"]).name: e["quirks"] for e in schema}
    assert schema_quirks["schemaorg-shapes.shacl"] == ["lenient", "rewrite-http-schema-org"]
    assert schema_quirks["schemaorg-subclasses.shacl"] == ["rewrite-http-schema-org"]
    for onto, entry in entries:
        if "duplicate_of" in entry:
            assert entry["duplicate_of"] in {e["path"] for e in onto["files"]}


# --------------------------------------------------------------------------------------------
# agreement with the official releases (needs ../shared/ontologies)
# --------------------------------------------------------------------------------------------


def require_shared() -> Path:
    # Tests marked `shared` only run when ../shared exists (see tests/conftest.py).
    assert SHARED_ONTOLOGIES.is_dir(), SHARED_ONTOLOGIES
    return SHARED_ONTOLOGIES


def read_release_file(mirror: Path, entry: dict[str, Any]) -> bytes:
    data = (mirror / str(entry["path"])).read_bytes()
    if "prepend-owl-rdfs-prefixes" in entry["quirks"]:
        data = OWL_RDFS_PREFIXES + data
    if "rewrite-http-schema-org" in entry["quirks"]:
        data = data.replace(b"<http://schema.org/", b"<https://schema.org/")
    return data


def load_vocabularies(mirror: Path) -> ox.Store:
    """Every vocabulary file, one named graph per ontology id, quirks applied in memory."""
    store = ox.Store()
    for onto, entry in mirror_files():
        if entry["role"] != "vocabulary" or "duplicate_of" in entry:
            continue
        store.bulk_load(
            read_release_file(mirror, entry),
            format=OX_FORMATS[entry["format"]],
            to_graph=ox.NamedNode(f"urn:kgmem:catalogue:{onto['id']}"),
            lenient="lenient" in entry["quirks"],
        )
    return store


def iri_pairs(store: ox.Store, predicate: str) -> Iterable[tuple[str, str]]:
    for quad in store.quads_for_pattern(None, ox.NamedNode(predicate), None):
        if isinstance(quad.subject, ox.NamedNode) and isinstance(quad.object, ox.NamedNode):
            yield quad.subject.value, quad.object.value


def release_disjoint_pairs(store: ox.Store) -> set[Pair]:
    """owl:disjointWith in the releases, with KKO's anonymous owl:unionOf targets expanded."""
    first, rest = ox.NamedNode(str(RDF.first)), ox.NamedNode(str(RDF.rest))

    def members(node: Any) -> list[str]:
        out: list[str] = []
        while not (isinstance(node, ox.NamedNode) and node.value == str(RDF.nil)):
            member = next(store.quads_for_pattern(node, first, None)).object
            assert isinstance(member, ox.NamedNode), "KKO unions list named classes only"
            out.append(member.value)
            node = next(store.quads_for_pattern(node, rest, None)).object
        return out

    pairs: set[Pair] = set()
    union_of = ox.NamedNode(str(OWL.unionOf))
    for quad in store.quads_for_pattern(None, ox.NamedNode(str(OWL.disjointWith)), None):
        if not isinstance(quad.subject, ox.NamedNode):
            continue
        if isinstance(quad.object, ox.NamedNode):
            pairs.add(frozenset((quad.subject.value, quad.object.value)))
            continue
        if not isinstance(quad.object, ox.BlankNode):
            continue
        for union in store.quads_for_pattern(quad.object, union_of, None):
            pairs |= {frozenset((quad.subject.value, m)) for m in members(union.object)}
    return {p for p in pairs if len(p) == 2}


@pytest.mark.shared
def test_starter_and_manifest_agree_with_the_official_releases() -> None:
    mirror = require_shared()
    problems: list[str] = []

    # 1. The manifest pins the mirror's exact bytes.
    listed = {entry["path"] for _, entry in mirror_files()}
    on_disk = {
        str(p.relative_to(mirror)) for p in mirror.rglob("*") if p.is_file() and p.suffix != ".md"
    }
    problems += [f"mirror file not in the manifest: {p}" for p in sorted(on_disk - listed)]
    for _, entry in mirror_files():
        path = mirror / entry["path"]
        if not path.is_file():
            problems.append(f"manifest file missing from the mirror: {entry['path']}")
        elif path.stat().st_size != entry["bytes"] or sha256_of(path) != entry["sha256"]:
            problems.append(f"size or sha256 mismatch: {entry['path']}")
    assert not problems, "\n".join(problems)

    # 2. Every file parses with its quirks, to the listed number of triples.
    for _, entry in mirror_files():
        one = ox.Store()
        one.bulk_load(
            read_release_file(mirror, entry),
            format=OX_FORMATS[entry["format"]],
            lenient="lenient" in entry["quirks"],
        )
        if "triples" in entry and len(one) != entry["triples"]:
            count, listed_count = len(one), entry["triples"]
            problems.append(f"{entry['path']}: {count} triples, manifest says {listed_count}")

    # 3. Every standard IRI the starter uses as a class or property exists in its release.
    store = load_vocabularies(mirror)
    g = starter()
    used: set[str] = {str(c) for c in classes()} | {str(p) for p in properties()}
    used |= {str(o) for o in g.objects(None, RDFS.subClassOf) if isinstance(o, URIRef)}
    used |= {str(o) for o in g.objects(None, OWL.equivalentClass) if isinstance(o, URIRef)}
    used |= {str(o) for o in g.objects(None, RDFS.domain) if isinstance(o, URIRef)}
    used |= {str(o) for o in g.objects(None, RDFS.range) if isinstance(o, URIRef)}
    for iri in sorted(used):
        owner = next((o for ns, o in NAMESPACE_OWNER.items() if iri.startswith(ns)), None)
        if owner is None:
            continue
        graph = ox.NamedNode(f"urn:kgmem:catalogue:{owner}")
        if next(store.quads_for_pattern(ox.NamedNode(iri), None, None, graph), None) is None:
            problems.append(f"{iri} is not defined in {owner}")

    # 4. Coherence with the releases: join the starter's hierarchy to the releases' and check
    #    (a) no class lies under two classes the starter declares disjoint, and
    #    (b) the starter's links put no class under two classes the releases (KKO, FOAF,
    #        Schema.org) declare disjoint, unless the releases already do so on their own.
    release_parents: dict[str, set[str]] = defaultdict(set)
    for sub, sup in iri_pairs(store, str(RDFS.subClassOf)):
        release_parents[sub].add(sup)
    for a, b in iri_pairs(store, str(OWL.equivalentClass)):
        release_parents[a].add(b)
        release_parents[b].add(a)
    joined: dict[str, set[str]] = defaultdict(set)
    for edges in (release_parents, named_superclasses(g)):
        for node, sups in edges.items():
            joined[node] |= sups
    children_before, children_after = invert(release_parents), invert(joined)

    @cache
    def below(cls: str, after: bool) -> frozenset[str]:
        return frozenset(closure(cls, children_after if after else children_before))

    for pair in sorted(starter_disjoint_pairs(g), key=sorted):
        a, b = sorted(pair)
        shared = below(a, True) & below(b, True)
        if shared:
            problems.append(f"starter says {a} and {b} are disjoint, yet {sorted(shared)[:5]}")
    kko_pairs = release_disjoint_pairs(store)
    assert len(kko_pairs) > 600, "KKO's disjointness axioms did not load"
    for pair in sorted(kko_pairs, key=sorted):
        a, b = sorted(pair)
        new = (below(a, True) & below(b, True)) - (below(a, False) & below(b, False))
        if new:
            problems.append(f"releases say {a} and {b} are disjoint; the starter joins {new}")

    assert not problems, "\n".join(problems)
