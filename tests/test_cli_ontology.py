"""``kgmem ontology ...`` run as a real process against a fixture mirror."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ontology.catalogue_fixtures import standard_ontologies, write_manifest, write_mirror
from tests.test_cli import holding, kgmem


def mirror_and_manifest(tmp_path: Path) -> tuple[Path, Path]:
    ontologies = standard_ontologies()
    mirror = write_mirror(tmp_path / "mirror", ontologies)
    return mirror, write_manifest(tmp_path / "catalogue.toml", ontologies)


def one_line_error(result: object) -> str:
    stderr = str(getattr(result, "stderr", ""))
    assert getattr(result, "returncode", 0) == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kgmem: error: "), stderr
    return lines[0]


def test_help_lists_the_subcommands(home: Path) -> None:
    out = kgmem(home, "ontology", "--help").stdout
    for command in ("install", "add", "remove", "list"):
        assert command in out


def test_install_then_reinstall_then_list(home: Path, tmp_path: Path) -> None:
    mirror, manifest = mirror_and_manifest(tmp_path)
    args = ("ontology", "install", "--mirror", str(mirror), "--manifest", str(manifest))
    first = kgmem(home, *args, "--no-download")
    assert first.returncode == 0, first.stderr
    rows = {line.split()[0]: line.split() for line in first.stdout.splitlines()[1:-1]}
    assert {k: v[1] for k, v in rows.items()} == dict.fromkeys(
        ("alpha", "beta", "gamma", "delta"), "loaded"
    )
    assert rows["beta"][4] == "6"
    assert first.stdout.splitlines()[-1].startswith("loaded 4, unchanged 0")
    second = kgmem(home, *args, "--only", "beta", "--no-download")
    assert second.returncode == 0
    assert "loaded 0, unchanged 2" in second.stdout  # beta and the alpha it requires

    listing = json.loads(kgmem(home, "ontology", "list", "--json").stdout)
    by_id = {i["ontology_id"]: i for i in listing}
    assert set(by_id) == {"alpha", "beta", "gamma", "delta", "kgmem", "starter"}
    assert by_id["alpha"]["classes"] == 2 and by_id["alpha"]["origin"] == "mirror"
    assert by_id["alpha"]["files"][0]["graph"] == "urn:kgmem:catalogue:alpha.shapes"
    assert by_id["kgmem"]["origin"] == "bundled"
    table = kgmem(home, "ontology", "list").stdout
    assert "Alpha" in table and "bundled" in table


def test_install_errors_are_one_line(home: Path, tmp_path: Path) -> None:
    mirror, manifest = mirror_and_manifest(tmp_path)
    (mirror / "delta" / "d.rdf").write_text("tampered")
    base = ("ontology", "install", "--mirror", str(mirror), "--manifest", str(manifest))
    line = one_line_error(kgmem(home, *base, "--no-download"))
    assert "d.rdf" in line and "does not match" in line
    (mirror / "delta" / "d.rdf").unlink()
    line = one_line_error(kgmem(home, *base, "--no-download"))
    assert "delta/d.rdf" in line and "downloads are off" in line
    line = one_line_error(kgmem(home, *base, "--only", "nope"))
    assert "no ontology 'nope'" in line
    assert json.loads(kgmem(home, "ontology", "list", "--json").stdout)[0]["ontology_id"] in {
        "kgmem",
        "starter",
    }


def test_add_remove_and_their_errors(home: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.ttl"
    mine.write_text("@prefix owl: <http://www.w3.org/2002/07/owl#> .\n<urn:x:A> a owl:Class .\n")
    added = kgmem(home, "ontology", "add", str(mine), "--id", "mine", "--title", "Mine")
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "added mine: 1 triples from mine.ttl"
    line = one_line_error(kgmem(home, "ontology", "add", str(mine), "--id", "mine"))
    assert "pass replace" in line
    replaced = kgmem(home, "ontology", "add", str(mine), "--id", "mine", "--replace")
    assert replaced.returncode == 0
    odd = tmp_path / "mine.data"
    odd.write_text("<urn:x:A> <urn:x:p> <urn:x:B> .\n")
    assert "give the format" in one_line_error(
        kgmem(home, "ontology", "add", str(odd), "--id", "o")
    )
    nt = kgmem(home, "ontology", "add", str(odd), "--id", "o", "--format", "ntriples")
    assert nt.returncode == 0
    broken = tmp_path / "broken.ttl"
    broken.write_text("<urn:a> <urn:b> .\n")
    assert "not valid turtle" in one_line_error(
        kgmem(home, "ontology", "add", str(broken), "--id", "b")
    )
    listing = {
        i["ontology_id"]: i for i in json.loads(kgmem(home, "ontology", "list", "--json").stdout)
    }
    assert listing["mine"]["origin"] == "added" and listing["mine"]["title"] == "mine"  # replaced
    assert "b" not in listing

    removed = kgmem(home, "ontology", "remove", "mine")
    assert removed.returncode == 0 and "urn:kgmem:catalogue:mine" in removed.stdout
    assert "no ontology 'mine'" in one_line_error(kgmem(home, "ontology", "remove", "mine"))
    assert "own vocabulary" in one_line_error(kgmem(home, "ontology", "remove", "kgmem"))


def test_commands_refuse_a_held_store(home: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.nt"
    mine.write_text("<urn:x:A> <urn:x:p> <urn:x:B> .\n")
    assert kgmem(home, "ontology", "add", str(mine), "--id", "mine").returncode == 0
    with holding(home / "store"):
        for args in (("list",), ("remove", "mine"), ("install", "--only", "skos")):
            line = one_line_error(kgmem(home, "ontology", *args))
            assert "held by a running kgmem server" in line


def test_list_without_a_store(home: Path) -> None:
    assert "no store" in one_line_error(kgmem(home, "ontology", "list"))
    assert not (home / "store").exists()
