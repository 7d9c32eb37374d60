"""Pages follow every committed change, and each change reaches the vault: real on-disk
Oxigraph and Kùzu, the real gate, the change feed, and real files in ``tmp_path``."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.config import Settings
from kgmem.memory import MemoryStatus
from kgmem.memory.entities import self_entity
from kgmem.memory.source_inputs import MessageIn, NoteIn
from kgmem.pages import front_matter_ids, page_iri, stored_page
from kgmem.pages.edits import page_edits, read_page
from kgmem.store import Changeset, Quad, UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import remember, settled, wired

ALICE = self_entity("alice")
KG = UserGraphs("alice").kg
_LINK = re.compile(r"\[\[([^\]|]+)\|")


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The vault on: pages follow every change and reach their files."""
    return replace(settings, vault="on")


@pytest.fixture
def services(settings: Settings) -> Services:
    wired_services = wired(settings)
    yield wired_services
    wired_services.close()


def memory_dir(services: Services) -> Path:
    assert services.vault is not None
    return services.vault.memory("alice")


def files(services: Services) -> dict[str, str]:
    root = memory_dir(services)
    return {str(p.relative_to(root)): p.read_text("utf-8") for p in sorted(root.rglob("*.md"))}


def page_text(services: Services, entity: URIRef) -> str:
    stored = stored_page(services.store, services.queries, KG, entity)
    assert stored is not None and stored.markdown is not None
    return stored.markdown


def entity_named(services: Services, name: str) -> URIRef:
    for quad in services.store.quads(KG, None, KGM.name):
        if str(quad.object) == name:
            return URIRef(quad.subject)
    raise AssertionError(f"no entity named {name}")


def test_a_draft_writes_the_pages_of_its_entities_and_their_files(services: Services) -> None:
    memory = remember(services, 1, "Acme")
    services.feed.drain("alice")
    found = files(services)
    assert sorted(found) == ["entities/acme.md", "entities/alice.md"]
    alice = found["entities/alice.md"]
    assert alice == page_text(services, ALICE)  # the stored Markdown, byte for byte
    assert front_matter_ids(alice) == (str(page_iri("alice", ALICE)).rsplit("/", 1)[-1], 1)
    assert "[[Memory/entities/acme|Acme]]" in alice
    assert f"[m:{str(memory).rsplit('/', 1)[-1][:8]}]" in alice
    for target in _LINK.findall(alice):  # every wikilink names a file of the vault
        assert (memory_dir(services).parent / f"{target}.md").is_file(), target


def test_a_later_draft_about_the_same_entity_writes_a_new_revision(services: Services) -> None:
    remember(services, 1, "Acme")
    services.feed.drain("alice")
    remember(services, 2, "Globex")
    services.feed.drain("alice")
    alice = files(services)["entities/alice.md"]
    assert front_matter_ids(alice)[1] == 2
    assert "[[Memory/entities/globex|Globex]]" in alice and "entities/globex.md" in files(services)
    stored = stored_page(services.store, services.queries, KG, ALICE)
    assert stored is not None and stored.latest == 2  # the first revision is kept


def test_pages_follow_in_the_background_with_no_drain_asked(services: Services) -> None:
    remember(services, 1, "Acme")
    settled(services)
    assert "entities/alice.md" in files(services)
    assert files(services)["entities/alice.md"] == page_text(services, ALICE)


def test_archiving_and_forgetting_take_a_memory_off_its_pages(services: Services) -> None:
    job = remember(services, 1, "Acme")
    other = remember(services, 2, "Globex")
    services.feed.drain("alice")
    cited = f"[m:{str(job).rsplit('/', 1)[-1][:8]}]"
    assert cited in files(services)["entities/alice.md"]
    services.lifecycle.archive("alice", job)
    services.feed.drain("alice")
    assert cited not in files(services)["entities/alice.md"]
    gone = f"[m:{str(other).rsplit('/', 1)[-1][:8]}]"
    assert gone in files(services)["entities/globex.md"]
    remember(services, 3, "Initech")  # something is still said of alice
    services.feed.drain("alice")
    assert gone in files(services)["entities/alice.md"]
    services.lifecycle.forget("alice", other)  # a forget drains at once, in this thread
    on_disk = files(services)
    assert gone not in on_disk["entities/alice.md"] and "Initech" in on_disk["entities/alice.md"]
    assert "entities/globex.md" not in on_disk  # nothing else is said of Globex: no page
    # no revision kept in the history still shows the forgotten memory's words
    history = [str(q.object) for q in services.store.quads(KG, None, KGM.markdown)]
    assert len(history) >= 4 and not any(gone in t or "Globex" in t for t in history)
    assert sum("redacted: true" in t for t in history) >= 2


def test_the_pages_own_commits_leave_every_projection_level(settings: Settings) -> None:
    services = wired(settings)
    try:
        remember(services, 1, "Acme")
        services.feed.drain("alice")
        assert services.feed.pending("alice") == 0
        assert services.projection.unlevel() == []  # its stamp covers the page commits
    finally:
        services.close()
    again = wired(settings)  # a restart compares no user: nothing is behind
    try:
        assert again.index.reconciled == () and again.index.drained == 0
    finally:
        again.close()


def test_an_entity_that_is_gone_loses_its_page_and_file(services: Services) -> None:
    remember(services, 1, "Acme")
    services.feed.drain("alice")
    acme = entity_named(services, "Acme")
    assert "entities/acme.md" in files(services)
    # merged into another entity (as a consolidation pass does): Acme has no page of its own
    services.store.commit(Changeset.of([Quad(acme, KGM.mergedInto, ALICE, KG)]))
    services.feed.drain("alice")
    assert stored_page(services.store, services.queries, KG, acme) is None
    assert "entities/acme.md" not in files(services)
    assert not list(services.store.quads(KG, page_iri("alice", acme)))


def test_a_crash_between_the_page_and_its_file_is_repaired_at_start(settings: Settings) -> None:
    root = settings.vault_dir("alice")
    root.mkdir(parents=True)
    (root / "Memory").write_text("not a folder", "utf-8")  # every file write fails
    services = wired(settings)
    try:
        remember(services, 1, "Acme")
        services.feed.drain("alice")
        assert stored_page(services.store, services.queries, KG, ALICE) is not None
        assert services.feed.pending("alice") > 0  # the vault failed: its entries are kept
    finally:
        services.feed.stop()  # a crash: nothing more is drained
        services.close()
    (root / "Memory").unlink()
    again = wired(settings)  # start-up drains what was left, and reconciles
    try:
        [report] = again.reconcile_vaults()
        assert report.pages == 2 and report.intact == 2
        assert (root / "Memory/entities/alice.md").read_text("utf-8") == page_text(again, ALICE)
    finally:
        again.close()


def test_a_vault_named_in_settings_is_used_for_that_user_only(
    settings: Settings, tmp_path: Path
) -> None:
    obsidian = tmp_path / "Obsidian" / "Alice's notes"
    (obsidian / "Daily").mkdir(parents=True)
    own = obsidian / "Daily" / "2026-06-01.md"
    own.write_text("# Monday\n\nLunch with Bob.\n", "utf-8")
    services = wired(replace(settings, vaults=f"alice={obsidian}; bob = {tmp_path / 'b'}"))
    try:
        remember(services, 1, "Acme")
        message = MessageIn(chat="c9", turn=1, role="user", text="I work at Initech.")
        services.sources.ingest_message("carol", message)
        services.feed.drain("alice")
        assert (obsidian / "Memory" / "entities" / "alice.md").is_file()
        assert own.read_text("utf-8") == "# Monday\n\nLunch with Bob.\n"  # never written
        assert services.settings.vault_dir("carol") == settings.home / "vault" / "carol"
        assert services.settings.vault_dir("bob") == tmp_path / "b"
    finally:
        services.close()


def test_a_page_shows_evidence_footnotes_kinds_and_what_changed(services: Services) -> None:
    """Each cited memory's quote is a footnote naming where it was said (a note is linked),
    the summary says what the types are kinds of, and a superseded value is kept, dated,
    under What changed."""
    old = remember(services, 1, "Acme")
    note = services.sources.ingest_note(
        "alice", NoteIn(path="Journal/move.md", text="New job: I work at Globex now.")
    )
    draft = {
        "kind": "semantic",
        "title": "Works at Globex",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Globex"}],
        "entities": [{"name": "Globex", "types": ["schema:Organization"]}],
        "evidence": [{"source": str(note.iri), "quote": "I work at Globex now"}],
    }
    [item] = services.gate.draft("alice", [draft], account_name="Alice").items
    assert item.memory is not None and old in item.superseded  # the note's word is the user's
    services.feed.drain("alice")
    text = files(services)["entities/alice.md"]
    short = str(item.memory).rsplit("/", 1)[-1][:8]
    number = re.search(rf"\[m:{short}\]\[\^(\d+)\]", text)
    assert number is not None, text
    footnote = f'[^{number.group(1)}]: "I work at Globex now" ([[Journal/move|Journal/move.md]])'
    assert footnote in text
    assert "(person; a kind of agent)" in text
    facts, changed = text.split("## Facts", 1)[1].split("## What changed", 1)
    assert "Acme" not in facts and "**works for**: Acme, superseded" in changed
    assert "Globex" in facts


def test_footnotes_and_what_changed_are_not_read_as_a_persons_edits(services: Services) -> None:
    """Deleting kgmem's evidence footnotes or the What changed section asks nothing."""
    old = remember(services, 1, "Acme")
    new = remember(services, 2, "Globex")
    services.lifecycle.retire("alice", old, MemoryStatus.SUPERSEDED, "moved", by=new)
    services.feed.drain("alice")
    text = files(services)["entities/alice.md"]
    assert "[^1]: " in text and "## What changed" in text
    base = read_page(text)
    trimmed = "\n".join(
        x for x in text.split("\n") if not x.startswith("[^") and "superseded" not in x
    )
    assert page_edits(base, read_page(trimmed)) == []


def test_a_page_keeps_its_newest_revisions_and_numbers_on(
    services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hub page is rewritten all day: only the newest KEPT_REVISIONS stay stored, and the
    numbers go on from the current one (a file names the revision it was written from)."""
    monkeypatch.setattr("kgmem.pages.revisions.KEPT_REVISIONS", 3)
    for turn, company in enumerate(("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark")):
        remember(services, turn, company)
        services.feed.drain("alice")
    page = page_iri("alice", ALICE)
    numbers = sorted(
        int(str(q.object))
        for q in services.store.quads(KG, None, KGM.revision)
        if str(q.subject).startswith(str(page) + "#r")
    )
    current = front_matter_ids(files(services)["entities/alice.md"])[1]
    assert current is not None and current >= 6 and numbers == [current - 2, current - 1, current]
