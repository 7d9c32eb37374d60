"""Bundled files (kgmem's vocabulary, shapes/*.ttl) load once, reload on change, fail early."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.errors import ManifestError, ResourceError
from kgmem.ontology import bundled_files, check_bundled, ensure_bundled
from kgmem.ontology.manifest import default_manifest_path
from kgmem.store import OxigraphStore, QueryRegistry, catalogue_graph, shapes_graph

SHAPE = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix kgm: <https://w3id.org/kgmem/ns#> .
kgm:{name}Shape a sh:NodeShape ; sh:targetClass kgm:Memory ;
  sh:property [ sh:path kgm:title ; sh:minCount 1 ] .
"""


def write_shape(directory: Path, name: str) -> Path:
    path = directory / f"{name}.ttl"
    path.write_text(SHAPE.replace("{name}", name))
    return path


def test_repo_defaults_load_vocabulary_starter_and_core_shapes(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    repo_shapes = Path(__file__).resolve().parents[2] / "shapes"
    report = ensure_bundled(store, queries, bundled_files(repo_shapes))
    assert catalogue_graph("kgmem") in report.loaded
    assert catalogue_graph("starter") in report.loaded
    assert shapes_graph("core") in report.loaded
    assert store.count(catalogue_graph("kgmem")) > 100
    assert store.count(catalogue_graph("starter")) > 100


def test_bundled_catalogue_files_come_from_the_manifest(tmp_path: Path) -> None:
    (tmp_path / "mine.ttl").write_text("<urn:a> <urn:b> <urn:c> .\n")
    (tmp_path / "catalogue.toml").write_text(
        'format_version = 1\n[[ontology]]\nid = "mine"\ntitle = "Mine"\nrelease = "1"\n'
        'bundled = true\n[[ontology.files]]\npath = "mine.ttl"\nformat = "turtle"\n'
        '[[ontology]]\nid = "other"\ntitle = "Other"\nrelease = "1"\n[[ontology.files]]\n'
        'path = "o.nt"\nformat = "ntriples"\nurl = "http://127.0.0.1:9/o.nt"\n'
        'sha256 = "' + "0" * 64 + '"\nbytes = 1\n'
    )
    files = bundled_files(tmp_path / "no-shapes", ontologies_dir=tmp_path)
    assert [(f.path.name, f.graph) for f in files] == [("mine.ttl", catalogue_graph("mine"))]


def test_second_run_changes_nothing(
    store: OxigraphStore, queries: QueryRegistry, tmp_path: Path
) -> None:
    write_shape(tmp_path, "extra")
    files = bundled_files(tmp_path)
    first = ensure_bundled(store, queries, files)
    before = sorted(store.quads())
    second = ensure_bundled(store, queries, files)
    assert len(first.loaded) == 3 and second.loaded == ()  # kgmem, starter, extra
    assert set(second.unchanged) == set(first.loaded)
    assert sorted(store.quads()) == before


def test_changed_file_reloads_and_removed_file_stops_applying(
    store: OxigraphStore, queries: QueryRegistry, tmp_path: Path
) -> None:
    one = write_shape(tmp_path, "one")
    write_shape(tmp_path, "two")
    ensure_bundled(store, queries, bundled_files(tmp_path))
    one.write_text(one.read_text() + "kgm:oneShape sh:deactivated true .\n")
    (tmp_path / "two.ttl").unlink()
    report = ensure_bundled(store, queries, bundled_files(tmp_path))
    assert report.loaded == (shapes_graph("one"),)
    assert report.removed == (shapes_graph("two"),)
    assert store.count(shapes_graph("two")) == 0
    assert any(
        q.predicate == URIRef("http://www.w3.org/ns/shacl#deactivated")
        for q in store.quads(shapes_graph("one"))
    )


def test_broken_shapes_file_is_caught_before_any_write(tmp_path: Path) -> None:
    write_shape(tmp_path, "good")
    (tmp_path / "broken.ttl").write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\nsh:x sh:y .\n"
    )
    with pytest.raises(ResourceError, match=r"broken\.ttl"):
        check_bundled(bundled_files(tmp_path))


def test_missing_vocabulary_is_reported(tmp_path: Path) -> None:
    shutil.copy(default_manifest_path(), tmp_path / "catalogue.toml")
    with pytest.raises(ResourceError, match=r"kgmem\.ttl"):
        check_bundled(bundled_files(tmp_path, ontologies_dir=tmp_path))


def test_missing_manifest_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"catalogue\.toml"):
        bundled_files(tmp_path, ontologies_dir=tmp_path)
