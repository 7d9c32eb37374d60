"""The vault's reconciliation on a real filesystem: what people and tools do to a folder of
Markdown (delete, move, rename, copy, edit, restore an old copy, link, drop in big or binary
files), and what kgmem must do about each, with the report saying so."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.config import Settings
from kgmem.memory.entities import self_entity
from kgmem.pages import Vault, front_matter_ids, stored_page
from kgmem.store import UserGraphs
from kgmem.vocab import KGM
from tests.conftest import REPO
from tests.index.wired import remember, wired

KG = UserGraphs("alice").kg
ALICE = self_entity("alice")


@dataclass
class Scene:
    services: Services
    vault: Vault
    root: Path  # the vault
    memory: Path  # its Memory/ folder

    def text(self, relative: str) -> str:
        return (self.memory / relative).read_text("utf-8")

    def stored(self) -> dict[str, str]:
        return {p.path: p.markdown for p in self.vault.pages("alice")}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The vault on: pages follow every change and reach their files."""
    return replace(settings, vault="on")


@pytest.fixture
def scene(settings: Settings) -> Iterator[Scene]:
    """Alice's vault after two drafts: pages of Alice (revision 2), Acme and Globex."""
    services = wired(settings)
    remember(services, 1, "Acme")
    services.feed.drain("alice")
    remember(services, 2, "Globex")
    services.feed.drain("alice")
    assert services.vault is not None
    root = services.vault.root("alice")
    yield Scene(services, services.vault, root, root / "Memory")
    services.close()


def test_an_intact_vault_is_left_as_it_is(scene: Scene) -> None:
    before = {p: p.stat().st_mtime_ns for p in scene.memory.rglob("*.md")}
    report = scene.vault.reconcile("alice")
    assert report.pages == 3 and report.intact == 3 and report.changed == 0
    assert {p: p.stat().st_mtime_ns for p in scene.memory.rglob("*.md")} == before


def test_a_deleted_page_is_written_again(scene: Scene) -> None:
    (scene.memory / "entities/acme.md").unlink()
    report = scene.vault.reconcile("alice")
    assert report.written == ["Memory/entities/acme.md"]
    assert scene.text("entities/acme.md") == scene.stored()["entities/acme.md"]


def test_a_deleted_memory_folder_is_written_again(scene: Scene) -> None:
    for path in sorted(scene.memory.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    scene.memory.rmdir()
    report = scene.vault.reconcile("alice")
    assert len(report.written) == 3
    for relative, markdown in scene.stored().items():
        assert scene.text(relative) == markdown


def test_a_page_moved_and_renamed_is_moved_back_by_its_id(scene: Scene) -> None:
    (scene.memory / "People").mkdir()
    moved = scene.memory / "People" / "Alice (me).md"
    (scene.memory / "entities/alice.md").rename(moved)
    report = scene.vault.reconcile("alice")
    assert report.moved == [("Memory/People/Alice (me).md", "Memory/entities/alice.md")]
    assert not moved.exists()
    assert scene.text("entities/alice.md") == scene.stored()["entities/alice.md"]


def test_a_moved_page_that_was_also_edited_comes_back_with_the_edit(scene: Scene) -> None:
    moved = scene.memory / "alice.md"
    edited = scene.text("entities/alice.md") + "\n- Plays the cello\n"
    moved.write_text(edited, "utf-8")
    (scene.memory / "entities/alice.md").unlink()
    report = scene.vault.reconcile("alice")
    assert report.moved == [("Memory/alice.md", "Memory/entities/alice.md")]
    assert report.edited == ["Memory/entities/alice.md"]
    assert scene.text("entities/alice.md") == edited  # nothing a person wrote is lost


def test_a_stale_copy_of_an_older_revision_is_replaced(scene: Scene) -> None:
    page = stored_page(scene.services.store, scene.services.queries, KG, ALICE)
    assert page is not None and page.latest == 2
    first = URIRef(f"{page.page}#r1")
    [old] = [str(q.object) for q in scene.services.store.quads(KG, first, KGM.markdown)]
    (scene.memory / "entities/alice.md").write_text(old, "utf-8")  # restored from a backup
    report = scene.vault.reconcile("alice")
    assert report.replaced == ["Memory/entities/alice.md"] and report.edited == []
    assert front_matter_ids(scene.text("entities/alice.md"))[1] == 2


def test_an_old_copy_someone_edited_is_kept_for_the_sync(scene: Scene) -> None:
    page = stored_page(scene.services.store, scene.services.queries, KG, ALICE)
    assert page is not None
    first = URIRef(f"{page.page}#r1")
    [old] = [str(q.object) for q in scene.services.store.quads(KG, first, KGM.markdown)]
    edited = old.replace("# Alice", "# Alice\n\nLives in Lisbon.")
    (scene.memory / "entities/alice.md").write_text(edited, "utf-8")
    report = scene.vault.reconcile("alice")
    assert report.edited == ["Memory/entities/alice.md"] and report.replaced == []
    assert scene.text("entities/alice.md") == edited  # a conflict is never overwritten


def test_stale_duplicates_are_removed_and_the_page_kept(scene: Scene) -> None:
    copy = scene.memory / "entities/acme copy.md"
    copy.write_text(scene.text("entities/acme.md"), "utf-8")
    (scene.memory / "Archive").mkdir()
    (scene.memory / "Archive/acme.md").write_text(scene.text("entities/acme.md"), "utf-8")
    report = scene.vault.reconcile("alice")
    assert sorted(report.removed) == ["Memory/Archive/acme.md", "Memory/entities/acme copy.md"]
    assert report.intact == 3
    assert scene.text("entities/acme.md") == scene.stored()["entities/acme.md"]


def test_the_file_of_a_page_that_is_gone_is_removed(scene: Scene) -> None:
    gone = scene.memory / "entities/initech.md"
    gone.write_text('---\nid: "' + "ab" * 16 + '"\nrevision: 3\n---\n\n# Initech\n', "utf-8")
    report = scene.vault.reconcile("alice")
    assert report.removed == ["Memory/entities/initech.md"] and not gone.exists()


def test_what_the_user_keeps_is_never_touched(scene: Scene) -> None:
    daily = scene.root / "Daily" / "2026-06-01.md"
    daily.parent.mkdir()
    daily.write_text("# Monday\n\nLunch with Bob at Acme.\n", "utf-8")
    mine = scene.memory / "My own list.md"  # inside Memory/, but with no page id
    mine.write_text("---\ntags: [todo]\n---\n- call Bob\n", "utf-8")
    broken = scene.memory / "broken.md"
    broken.write_text("---\nid: [unclosed\nrevision: x\n---\nhello\n", "utf-8")
    other_user = scene.memory / "bobs.md"  # a page id no page of Alice has: Bob's vault?
    other_user.write_text("# no front matter\n", "utf-8")
    texts = {p: p.read_bytes() for p in (daily, mine, broken, other_user)}
    report = scene.vault.reconcile("alice")
    assert report.changed == 0
    assert {p: p.read_bytes() for p in texts} == texts


def test_bad_files_are_refused_with_a_reason_and_nothing_is_lost(
    scene: Scene, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text('---\nid: "' + "cd" * 16 + '"\n---\nnot the vault\n', "utf-8")
    (scene.memory / "link.md").symlink_to(secret)
    (scene.memory / "huge.md").write_bytes(b"# big\n" + b"x" * (5 * 1024 * 1024))
    (scene.memory / "binary.md").write_bytes(b"\xff\xfe\x00\x01PNG\x89")
    report = scene.vault.reconcile("alice")
    reasons = dict(report.refused)
    assert "symbolic link" in reasons["Memory/link.md"]
    assert "larger than" in reasons["Memory/huge.md"]
    assert "not UTF-8" in reasons["Memory/binary.md"]
    assert secret.read_text("utf-8").endswith("not the vault\n")  # never followed or removed
    assert (scene.memory / "huge.md").stat().st_size > 5 * 1024 * 1024
    assert report.intact == 3


def test_a_memory_folder_that_links_out_of_the_vault_is_not_followed(
    scene: Scene, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for path in sorted(scene.memory.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    scene.memory.rmdir()
    scene.memory.symlink_to(elsewhere, target_is_directory=True)
    report = scene.vault.reconcile("alice")
    assert report.written == [] and list(elsewhere.iterdir()) == []
    assert any("symbolic link" in why for _, why in report.refused)


@pytest.mark.parametrize("path", ["../escape.md", "/etc/passwd", "a/../../x.md", "", "a\\b.md"])
def test_a_path_that_leaves_the_memory_folder_is_refused(scene: Scene, path: str) -> None:
    with pytest.raises(ValueError):
        scene.vault.resolve("alice", path)


def test_a_symlinked_subfolder_is_refused(scene: Scene, tmp_path: Path) -> None:
    (scene.memory / "out").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ValueError, match="symbolic link"):
        scene.vault.resolve("alice", "out/page.md")


def test_a_dry_run_changes_nothing(scene: Scene) -> None:
    (scene.memory / "entities/acme.md").unlink()
    report = scene.vault.reconcile("alice", dry_run=True)
    assert report.written == ["Memory/entities/acme.md"]
    assert not (scene.memory / "entities/acme.md").exists()


def test_the_command_line_reports_and_reconciles(settings: Settings) -> None:
    services = wired(settings)
    try:
        remember(services, 1, "Acme")
        services.feed.drain("alice")
    finally:
        services.close()
    memory = settings.vault_dir("alice") / "Memory"
    (memory / "entities/acme.md").unlink()
    env = {**os.environ, "KGMEM_HOME": str(settings.home), "KGMEM_VAULT": "on"}

    def kgmem(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "kgmem.cli", "vault", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)

    where = kgmem("path", "--user", "alice")
    assert where.returncode == 0 and where.stdout.strip() == str(settings.vault_dir("alice"))
    status = kgmem("status", "--user", "alice")
    assert status.returncode == 0, status.stderr
    assert "would write    Memory/entities/acme.md" in status.stdout
    assert not (memory / "entities/acme.md").exists()
    done = kgmem("reconcile")
    assert done.returncode == 0 and "1 written" in done.stdout
    assert (memory / "entities/acme.md").is_file()


def test_render_writes_every_page_of_a_store_written_with_the_vault_off(
    settings: Settings,
) -> None:
    """Memory written before pages were on has no pages; ``kgmem vault render`` writes them
    all (and their files), and refuses with a reason while the vault is off."""
    services = wired(replace(settings, vault="off"))
    try:
        remember(services, 1, "Acme")
        remember(services, 2, "Globex")
        services.settle()
        assert not list(services.store.quads(KG, None, KGM.path))  # no page yet
    finally:
        services.close()
    command = [sys.executable, "-m", "kgmem.cli", "vault", "render", "--user", "alice"]
    base = {**os.environ, "KGMEM_HOME": str(settings.home)}
    off = subprocess.run(
        command, capture_output=True, text=True, env={**base, "KGMEM_VAULT": "off"}, cwd=REPO
    )
    assert off.returncode == 2 and "the vault is off" in off.stderr
    done = subprocess.run(
        command, capture_output=True, text=True, env={**base, "KGMEM_VAULT": "on"}, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert "alice: 3 entities, 3 pages written" in done.stdout
    memory = settings.vault_dir("alice") / "Memory" / "entities"
    assert {p.name for p in memory.glob("*.md")} == {"alice.md", "acme.md", "globex.md"}
