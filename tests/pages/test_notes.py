"""Notes of the user's own: every ``.md`` and ``.txt`` file in their vault outside
``Memory/`` is read (as it changes, and at start) into a note revision that search finds
with its absolute path and that a memory can cite; kgmem never writes to it."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.config import Settings
from kgmem.memory import Outcome
from kgmem.pages import SyncReport, SyncStatus
from kgmem.store import UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import remember, wired
from tests.pages.test_sync import next_report, watched

SOURCES = UserGraphs("alice").sources
JOURNAL = "Journal/2026-11-02.md"
ENTRY = "# Sunday\n\nSigned up for the Lisbon half marathon in March. Need new running shoes.\n"


@dataclass
class Scene:
    services: Services
    root: Path  # alice's vault
    reports: queue.Queue[SyncReport]

    def report(self, relative: str) -> SyncReport:
        return next_report(self.reports, relative)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
        return path

    def hits(self, query: str, kind: str = "note") -> list[str | None]:
        found = self.services.search.memory_search("alice", query, k=8)
        return [h.path for h in found if h.kind == kind]

    def revisions(self, relative: str) -> list[URIRef]:
        quads = self.services.store.quads(SOURCES, None, KGM.notePath)
        return [q.subject for q in quads if str(q.object) == relative]  # type: ignore[misc]


@pytest.fixture
def scene(settings: Settings) -> Iterator[Scene]:
    with watched(settings, "Acme") as (services, reports, _):
        assert services.vault is not None
        yield Scene(services, services.vault.root("alice"), reports)


def test_a_note_written_in_the_vault_is_stored_and_found_with_its_absolute_path(
    scene: Scene,
) -> None:
    path = scene.write(JOURNAL, ENTRY)
    assert scene.report(JOURNAL).status is SyncStatus.NOTED
    assert len(scene.revisions(JOURNAL)) == 1
    assert scene.hits("Lisbon half marathon") == [str(path.absolute())]
    assert path.read_text("utf-8") == ENTRY  # kgmem never writes to it


def test_an_edited_note_gets_a_new_revision_and_search_reads_the_new_words(scene: Scene) -> None:
    path = scene.write(JOURNAL, ENTRY)
    scene.report(JOURNAL)
    scene.write(JOURNAL, ENTRY.replace("Lisbon", "Porto"))
    assert scene.report(JOURNAL).status is SyncStatus.NOTED
    assert len(scene.revisions(JOURNAL)) == 2
    assert scene.hits("Porto") == [str(path.absolute())]
    assert scene.hits("Lisbon") == []


def test_a_removed_note_is_no_longer_found_but_stays_evidence_and_comes_back(
    scene: Scene,
) -> None:
    path = scene.write(JOURNAL, ENTRY)
    note = scene.report(JOURNAL).note
    assert scene.hits("Lisbon") == [str(path.absolute())]
    path.unlink()
    assert scene.report(JOURNAL).status is SyncStatus.GONE
    assert scene.hits("Lisbon") == []
    assert scene.services.page_reader.by_path("alice", JOURNAL) is None
    assert scene.services.sources.get("alice", [str(note)])  # still there, as evidence
    scene.write(JOURNAL, ENTRY)  # restored from the trash, as it was
    assert scene.report(JOURNAL).status is SyncStatus.NOTED
    assert scene.hits("Lisbon") == [str(path.absolute())]


def test_a_memory_can_cite_a_note_by_its_quote(scene: Scene) -> None:
    scene.write(JOURNAL, ENTRY)
    note = scene.report(JOURNAL).note
    draft = {
        "kind": "semantic",
        "title": "Signed up for the Lisbon half marathon",
        "confidence": 0.9,
        "entities": [{"name": "Lisbon half marathon", "types": ["schema:Event"]}],
        "evidence": [
            {"source": str(note), "quote": "Signed up for the Lisbon half marathon in March"}
        ],
    }
    [item] = scene.services.gate.draft("alice", [draft]).items
    assert item.outcome is Outcome.ACTIVE and item.memory is not None, item
    [evidence] = scene.services.lifecycle.get("alice", item.memory).evidence
    assert evidence.source == note
    paths = scene.services.store.quads(SOURCES, note, KGM.notePath)
    assert [str(q.object) for q in paths] == [JOURNAL]


def test_page_hits_carry_their_files_absolute_path(scene: Scene) -> None:
    assert scene.services.vault is not None
    page = scene.services.vault.memory("alice") / "entities" / "acme.md"
    assert str(page.absolute()) in scene.hits("Acme", kind="page")


@pytest.mark.parametrize(
    ("relative", "content"),
    [
        (".obsidian/workspace.md", b"# layout\n"),
        (".trash/old idea.md", b"Buy a boat\n"),
        ("Journal/.draft.md", b"half written\n"),
        ("Attachments/photo.png", b"\x89PNG\r\n"),
    ],
)
def test_hidden_folders_and_other_files_are_not_read(
    scene: Scene, relative: str, content: bytes
) -> None:
    path = scene.root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    scene.write("Journal/marker.md", "marker note\n")  # read after the one above, if it were
    assert scene.report("Journal/marker.md").status is SyncStatus.NOTED
    assert scene.revisions(relative) == []


def test_a_binary_note_and_a_link_out_of_the_vault_are_refused(
    scene: Scene, tmp_path: Path
) -> None:
    (scene.root / "Journal").mkdir(parents=True, exist_ok=True)
    (scene.root / "Journal" / "scan.md").write_bytes(b"\xff\xfe\x00\x01binary")
    assert "not UTF-8" in scene.report("Journal/scan.md").reason
    secret = tmp_path / "secret.md"
    secret.write_text("the neighbour's wifi password\n")
    (scene.root / "Journal" / "link.md").symlink_to(secret)
    assert "symbolic link" in scene.report("Journal/link.md").reason
    assert scene.revisions("Journal/scan.md") == scene.revisions("Journal/link.md") == []


def test_notes_written_while_nothing_watched_are_read_at_the_next_start(
    settings: Settings,
) -> None:
    services = wired(settings)
    remember(services, 1, "Acme")
    assert services.settle() and services.vault is not None
    root = services.vault.root("alice")
    services.close()
    (root / "Journal").mkdir(parents=True)
    (root / JOURNAL).write_text(ENTRY, "utf-8")
    (root / "Memory" / "stray.txt").write_text("not a note: inside Memory/\n", "utf-8")
    again = wired(settings)
    try:
        again.reconcile_vaults()
        paths = {str(q.object) for q in again.store.quads(SOURCES, None, KGM.notePath)}
        assert paths == {JOURNAL}
        again.reconcile_vaults()  # nothing changed: no second revision
        assert len(list(again.store.quads(SOURCES, None, KGM.notePath))) == 1
    finally:
        again.close()
    (root / JOURNAL).unlink()  # removed while nothing watched
    third = wired(settings)
    try:
        third.reconcile_vaults()
        assert list(third.store.quads(SOURCES, None, KGM.removedAt))
        assert [h for h in third.search.memory_search("alice", "Lisbon") if h.kind == "note"] == []
    finally:
        third.close()
