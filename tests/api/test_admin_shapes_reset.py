"""Shapes and reset over the admin API, against a real uvicorn: an admin's shapes file changes
what the gate accepts at once and survives a restart; a reset drops one user's memory (store,
graph projection, lexical index) and nothing of anyone else's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgmem.api.auth import key_file
from kgmem.api.services import build_services
from kgmem.config import Settings, load_settings
from kgmem.memory import Actor, read_memory
from kgmem.ontology.bundled import local_shapes_graph
from kgmem.store import OxigraphStore, UserGraphs
from kgmem.vocab import KGM
from tests.api.support import ApiServer, api_server
from tests.api.test_rest import allergy, drafted, grounded, said, search_ids
from tests.test_cli import kgmem

NO_SHOUTING = b"""@prefix kgm: <https://w3id.org/kgmem/ns#> .
@prefix sh: <http://www.w3.org/ns/shacl#> .
<https://example.org/house#QuietTitles> a sh:NodeShape ;
    sh:targetClass kgm:Memory ;
    sh:property [ sh:path kgm:title ; sh:pattern "^[^!]*$" ;
                  sh:message "A title does not shout." ] .
"""

RECURSIVE = b"""@prefix sh: <http://www.w3.org/ns/shacl#> .
<https://e.org/S> a sh:NodeShape ; sh:targetClass <https://e.org/C> ; sh:node <https://e.org/S> .
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "admin-home") as running:
        yield running


def admin(server: ApiServer) -> httpx.Client:
    settings = server.app.state.services.settings
    token = key_file(settings).read_text().strip()
    return httpx.Client(
        base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=60
    )


def shouted(client: httpx.Client, chat: str) -> dict[str, Any]:
    said(client, chat, "I am allergic to kiwi")
    draft = grounded("Allergic to kiwi!", chat, 0, "I am allergic to kiwi", "kiwi")
    [item] = drafted(client, draft)
    return item


def test_an_admins_shapes_file_applies_to_the_next_write_until_removed(
    server: ApiServer,
) -> None:
    with admin(server) as root, server.client("sam") as sam:
        listed = root.get("/api/admin/shapes").json()["shapes"]
        assert [(s["name"], s["origin"]) for s in listed] == [("core", "bundled")]
        assert listed[0]["shapes"] > 5 and listed[0]["triples"] > 100
        put = root.put("/api/admin/shapes/house", content=NO_SHOUTING)
        assert put.status_code == 201, put.text
        assert put.json()["origin"] == "local" and put.json()["shapes"] == 2
        refused = shouted(sam, "s1")
        assert refused["outcome"] == "refused", refused
        assert "does not shout" in str(refused), refused
        assert sam.get("/api/memories").json()["memories"] == []
        gone = root.delete("/api/admin/shapes/house")
        assert gone.status_code == 200 and gone.json()["name"] == "house"
        assert shouted(sam, "s2")["outcome"] == "active"
        names = [s["name"] for s in root.get("/api/admin/shapes").json()["shapes"]]
        assert names == ["core"]


def test_bad_shapes_and_callers_are_refused_and_change_nothing(server: ApiServer) -> None:
    with admin(server) as root, server.client("pat") as pat:
        before = server.snapshot()
        assert pat.get("/api/admin/shapes").status_code == 403
        assert pat.put("/api/admin/shapes/mine", content=NO_SHOUTING).status_code == 403
        for name, body, status in (
            ("broken", b"<x", 422),  # not Turtle
            ("empty", b"<https://e.org/a> <https://e.org/b> 1 .", 422),  # no shape in it
            ("recursive", RECURSIVE, 422),  # SHACL 1.0 gives it no meaning
            ("core", NO_SHOUTING, 409),  # the bundled file's name
            ("bad:name", NO_SHOUTING, 422),
        ):
            answer = root.put(f"/api/admin/shapes/{name}", content=body)
            assert answer.status_code == status, (name, answer.text)
            assert answer.json()["error"]["message"], name
        assert root.delete("/api/admin/shapes/core").status_code == 409
        assert root.delete("/api/admin/shapes/nothing").status_code == 404
        assert server.snapshot() == before
        home = server.app.state.services.settings.local_shapes_dir
        assert not home.exists() or list(home.iterdir()) == []


def test_an_admins_shapes_survive_a_restart_and_a_removed_file_stops_applying(
    tmp_path: Path,
) -> None:
    settings = load_settings(env={"KGMEM_HOME": str(tmp_path)})
    services = build_services(settings)
    try:
        services.shapes.put("house", NO_SHOUTING)
    finally:
        services.close()
    graph = local_shapes_graph("house")
    services = build_services(settings)
    try:
        assert graph in services.store.graphs()
        assert services.bundled.unchanged.count(graph) == 1
        shapes = {str(s) for s in services.validation.program().shapes}
        assert "https://example.org/house#QuietTitles" in shapes
    finally:
        services.close()
    (settings.local_shapes_dir / "house.ttl").unlink()
    services = build_services(settings)
    try:
        assert graph not in services.store.graphs()
        assert graph in services.bundled.removed
    finally:
        services.close()


def test_a_reset_drops_one_users_memory_everywhere_and_keeps_the_account(
    server: ApiServer,
) -> None:
    services = server.app.state.services
    with admin(server) as root, server.client("ann") as ann, server.client("ben") as ben:
        mine = allergy(ann, "a1", "sesame")
        theirs = allergy(ben, "b1", "sesame")
        assert search_ids(ann, "sesame") == [mine] and search_ids(ben, "sesame") == [theirs]
        assert services.lexical.size("ann") > 0
        assert services.settle()
        vault = services.vault
        assert {p.name for p in vault.memory("ann").rglob("*.md")} >= {"sesame.md"}
        (vault.root("ann") / "Daily.md").write_text("my own note\n")  # not kgmem's to drop
        url = "/api/admin/users/ann/reset"
        assert ann.post(url, json={"confirm": "ann"}).status_code == 403
        wrong = root.post(url, json={"confirm": "ben"})
        assert wrong.status_code == 422 and wrong.json()["error"]["field"] == "confirm"
        assert root.post(url, json={}).json()["error"]["field"] == "confirm"
        unknown = root.post("/api/admin/users/zed/reset", json={"confirm": "zed"})
        assert unknown.status_code == 404
        assert search_ids(ann, "sesame") == [mine]  # refused resets changed nothing
        done = root.post(url, json={"confirm": "ann"})
        assert done.status_code == 202, done.text
        assert "cannot be undone" in done.json()["warning"]
        job = done.json()["job"]
        assert job["user"] == "ann" and job["requested_by"] == "me"  # the admin's user
        server.app.state.resets.wait(job["id"])
        job = root.get(f"/api/admin/jobs/{job['id']}").json()
        assert job["status"] == "done" and job["steps_done"] == job["steps_total"] == 4
        report = job["report"]
        assert report["triples"] > 0 and report["sources_waiting"] == 1  # her one chat turn
        assert "urn:kgmem:user:ann:kg" in report["graphs"]
        assert "urn:kgmem:user:ann:sources" not in report["graphs"]
        assert all(":user:ann:" in g for g in report["graphs"])
        assert root.get("/api/admin/jobs/" + "0" * 16).status_code == 404
        assert ann.get(f"/api/admin/jobs/{job['id']}").status_code == 403
        assert ann.get("/api/me").status_code == 200  # the key still works
        assert search_ids(ann, "sesame") == []
        assert ann.get(f"/api/memories/{mine.rsplit('/', 1)[1]}").status_code == 404
        assert ann.get("/api/memories").json()["memories"] == []
        waiting = ann.get("/api/consolidation").json()
        assert waiting["waiting_sources"] == 1 and waiting["passes"] == []  # to be done again
        rows = services.projection.rows("ann")
        assert [r.id for r in rows.sources] == [str(s) for s in stored_sources(services, "ann")]
        assert not rows.memories and not rows.entities and not rows.evidence
        assert services.lexical.size("ann") == 0
        assert not vault.memory("ann").exists()  # the pages' files went with the pages
        assert (vault.root("ann") / "Daily.md").read_text() == "my own note\n"
        assert {p.name for p in vault.memory("ben").rglob("*.md")} >= {"sesame.md"}
        assert search_ids(ben, "sesame") == [theirs]
        again = allergy(ann, "a2", "walnuts")  # a new chat starts afresh beside the kept one
        assert search_ids(ann, "walnuts") == [again]


def stored_sources(services: Any, uid: str) -> list[Any]:
    graph = UserGraphs(uid).sources
    return sorted({q.subject for q in services.store.quads(graph, predicate=KGM.timestamp)})


def test_the_reset_command_says_what_would_go_then_does_it(tmp_path: Path) -> None:
    settings: Settings = load_settings(env={"KGMEM_HOME": str(tmp_path)})
    services = build_services(settings)
    try:
        note = services.sources.remember("dee", "I only eat rye bread").iri
        draft = {
            "kind": "semantic",
            "title": "Dee eats rye bread",
            "evidence": [{"source": str(note), "quote": "I only eat rye bread"}],
        }
        [item] = services.gate.draft("dee", [draft], actor=Actor.PERSON).items
        assert item.memory is not None
    finally:
        services.close()
    dry = kgmem(tmp_path, "users", "reset", "dee")
    assert dry.returncode == 0 and "would drop 2 graphs" in dry.stdout, dry.stderr
    assert "cannot be undone: `kgmem backup` first" in dry.stdout
    backup = kgmem(tmp_path, "backup")
    assert backup.returncode == 0 and "backup of" in backup.stdout, backup.stderr
    done = kgmem(tmp_path, "users", "reset", "dee", "--yes")
    assert done.returncode == 0 and "reset (2 graphs" in done.stdout, done.stderr
    assert "1 sources wait for consolidation again" in done.stdout
    assert "clearing the vault's Memory/ folder" in done.stdout  # its steps, as they go
    services = build_services(settings)
    try:
        left = sorted(g for g in services.store.graphs() if ":user:dee:" in g)
        assert [g.rsplit(":", 1)[1] for g in left if "outbox" not in g] == ["sources"]
        assert services.notes.listing("dee")[1] == 1
        assert read_memory(services.store, item.memory, [UserGraphs("dee").kg]) is None
    finally:
        services.close()
    [kept] = (tmp_path / "backups").iterdir()  # the backup still has the memory
    copy = OxigraphStore(kept)
    try:
        assert read_memory(copy, item.memory, [UserGraphs("dee").kg]) is not None
    finally:
        copy.close()
