"""The catalogue manifest parses into frozen data and refuses what its header forbids."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgmem.errors import ManifestError, UnknownOntology
from kgmem.ontology.manifest import FileRole, Quirk, load_manifest
from kgmem.store import RdfFormat
from tests.ontology.catalogue_fixtures import manifest_text, standard_ontologies


def test_repo_manifest_loads() -> None:
    manifest = load_manifest()
    assert manifest.ids[:2] == ("kgmem", "starter")
    assert [o.id for o in manifest.ontologies if o.bundled] == ["kgmem", "starter"]
    kbpedia = manifest.entry("kbpedia")
    assert kbpedia.requires == ("kko",)
    assert len(kbpedia.files) == 66
    assert all(Quirk.PREPEND_OWL_RDFS_PREFIXES in f.quirks for f in kbpedia.files)
    schemaorg = manifest.entry("schemaorg")
    assert [f.path for f in schemaorg.primaries] == [
        "schemaorg/schemaorg-current-https.nt",
        "schemaorg/schemaorg-shapes.shacl",
        "schemaorg/schemaorg-subclasses.shacl",
    ]
    assert schemaorg.duplicates_of("schemaorg/schemaorg-current-https.nt")[0].format is (
        RdfFormat.TURTLE
    )
    shapes = [f for f in schemaorg.files if f.role is FileRole.SHAPES]
    assert shapes[0].lenient and Quirk.REWRITE_HTTP_SCHEMA_ORG in shapes[0].quirks
    assert manifest.entry("foaf").files[0].size == 44285


def test_entries_are_frozen() -> None:
    entry = load_manifest().entry("skos")
    with pytest.raises(dataclasses.FrozenInstanceError):
        entry.id = "other"  # type: ignore[misc]


def test_install_order_puts_requirements_first() -> None:
    manifest = load_manifest()
    assert [e.id for e in manifest.install_order(["kbpedia"])] == ["kko", "kbpedia"]
    assert [e.id for e in manifest.install_order(["kbpedia", "kko"])] == ["kko", "kbpedia"]
    everything = [e.id for e in manifest.install_order()]
    assert everything.index("kko") < everything.index("kbpedia")
    assert len(everything) == len(manifest.ids)
    with pytest.raises(UnknownOntology, match="nope"):
        manifest.install_order(["nope"])


GOOD = manifest_text(standard_ontologies())


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("format_version = 1", "format_version = 2", "format_version must be 1"),
        ('id = "alpha"', 'id = "Alpha!"', r"id must match"),
        ('id = "gamma"', 'id = "alpha"', "'alpha' appears twice"),
        ('requires = ["alpha"]', 'requires = ["zeta"]', "requires unknown 'zeta'"),
        ('format = "rdfxml"', 'format = "jsonld"', "format must be one of"),
        ('role = "shapes"', 'role = "rules"', "'rules' is not one of"),
        ('quirks = ["lenient",', 'quirks = ["sloppy",', "'sloppy' is not one of"),
        ('path = "delta/d.rdf"', 'path = "../d.rdf"', "path must be relative"),
        ('duplicate_of = "gamma/g.nt"', 'duplicate_of = "gamma/x.nt"', "not a primary file"),
        ("bundled = false", "bundled = false\nhomepag = 'x'", r"unknown key\(s\) homepag"),
        ('sha256 = "', 'sha256 = "ABC', "sha256 must be 64 lowercase hex"),
        ("bytes = ", "size = ", r"unknown key\(s\) size"),
    ],
)
def test_invalid_manifests_are_refused(tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in GOOD
    path = tmp_path / "catalogue.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ManifestError, match=message) as caught:
        load_manifest(path)
    assert caught.value.path == path


def test_missing_checksum_on_a_mirrored_file(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.toml"
    lines = [line for line in GOOD.splitlines() if not line.startswith("sha256")]
    path.write_text("\n".join(lines))
    with pytest.raises(ManifestError, match="a mirrored file needs sha256"):
        load_manifest(path)


def test_requires_cycle_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.toml"
    text = GOOD.replace('id = "alpha"\ntitle = "Alpha"\nrelease = "1.0"\nbundled = false\n'
                        "requires = []", 'id = "alpha"\ntitle = "Alpha"\nrelease = "1.0"\n'
                        'bundled = false\nrequires = ["beta"]')  # fmt: skip
    assert text != GOOD
    path.write_text(text)
    with pytest.raises(ManifestError, match="cycle: alpha -> beta -> alpha"):
        load_manifest(path)


def test_bundled_file_with_a_checksum_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.toml"
    path.write_text(GOOD.replace("bundled = false", "bundled = true", 1))
    with pytest.raises(ManifestError, match="a bundled file carries no url, sha256, bytes"):
        load_manifest(path)


@pytest.mark.parametrize("content", ["format_version = [", b"\xff\xfe"])
def test_unreadable_manifest(tmp_path: Path, content: str | bytes) -> None:
    path = tmp_path / "catalogue.toml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(ManifestError, match="not valid TOML"):
        load_manifest(path)
    with pytest.raises(ManifestError, match="cannot be read"):
        load_manifest(tmp_path / "absent.toml")
