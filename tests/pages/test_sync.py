"""The vault sync on a real filesystem with real watcher events: a person edits, renames,
deletes and breaks page files in ``Memory/`` while kgmem runs, and each edit becomes the
memory operation it means (or a clear refusal), with nothing stored lost."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from rdflib import URIRef
from watchdog.observers import Observer

from kgmem.api.services import Services
from kgmem.config import Settings
from kgmem.memory import Action, MemoryStatus
from kgmem.memory.listing import MemoryList
from kgmem.pages import SyncReport, SyncStatus, Vault, VaultWatcher, front_matter_ids
from kgmem.store import UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import remember, wired

KG = UserGraphs("alice").kg
ALICE_PAGE = "entities/alice.md"


@dataclass
class Scene:
    services: Services
    vault: Vault
    memory: Path  # alice's Memory/ folder
    reports: queue.Queue[SyncReport]
    acme: URIRef  # "Works at Acme"
    globex: URIRef  # "Works at Globex"

    def path(self, relative: str = ALICE_PAGE) -> Path:
        return self.memory / relative

    def text(self, relative: str = ALICE_PAGE) -> str:
        return self.path(relative).read_text("utf-8")

    def edit(self, old: str, new: str, relative: str = ALICE_PAGE) -> None:
        """Change the file in place, as an editor saving it does."""
        text = self.text(relative)
        assert old in text, text
        self.path(relative).write_text(text.replace(old, new, 1), "utf-8")

    def report(self, relative: str = ALICE_PAGE) -> SyncReport:
        """The sync's report on ``relative`` (kgmem's own writes, echoes, are skipped)."""
        return next_report(self.reports, f"Memory/{relative}")

    def status(self, memory: URIRef) -> MemoryStatus:
        return self.services.lifecycle.get("alice", memory).status

    def titles(self, status: MemoryStatus = MemoryStatus.ACTIVE) -> set[str]:
        listed = MemoryList(self.services.store, self.services.queries)
        return {m.title for m in listed.memories("alice", status=status, limit=1000)}


def next_report(reports: queue.Queue[SyncReport], path: str, timeout: float = 20) -> SyncReport:
    """The watcher's next report on the file at vault path ``path`` that is not an echo."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            got = reports.get(timeout=left)
        except queue.Empty:
            break
        if got.path == path and got.status is not SyncStatus.ECHO:
            return got
    raise AssertionError(f"no report on {path} in {timeout} s")


@contextmanager
def watched(
    settings: Settings, *companies: str
) -> Iterator[tuple[Services, queue.Queue[SyncReport], list[URIRef]]]:
    """Alice's services once she works at ``companies`` (her memories, in order), her vault
    watched: every file the watcher reads is reported on the queue."""
    services = wired(settings)
    try:
        made = [remember(services, turn, company) for turn, company in enumerate(companies, 1)]
        assert services.settle() and services.vault is not None and services.sync is not None
        reports: queue.Queue[SyncReport] = queue.Queue()
        watcher = VaultWatcher(
            services.sync, services.vault, lambda: ["alice"], quiet=0.1, done=reports.put
        )
        watcher.start()
        try:
            yield services, reports, made
        finally:
            watcher.stop()
    finally:
        services.close()


@pytest.fixture
def scene(settings: Settings) -> Iterator[Scene]:
    """Alice works at Acme and Globex; her vault is watched."""
    with watched(settings, "Acme", "Globex") as (services, reports, (acme, globex)):
        assert services.vault is not None
        yield Scene(services, services.vault, services.vault.memory("alice"), reports, acme, globex)


def cite(memory: URIRef) -> str:
    return f"[m:{str(memory).rsplit('/', 1)[-1][:8]}]"


def revision(text: str) -> int | None:
    return front_matter_ids(text)[1]


def test_a_line_added_under_facts_becomes_an_active_memory_grounded_on_the_file(
    scene: Scene,
) -> None:
    was = revision(scene.text())
    scene.edit(
        "## How-tos and preferences\n\n_Nothing recorded yet._",
        "## How-tos and preferences\n\n- Prefers green tea to coffee",
    )
    report = scene.report()
    assert report.status is SyncStatus.APPLIED and len(report.created) == 1
    [made] = report.created
    record = scene.services.lifecycle.get("alice", made)
    assert record.status is MemoryStatus.ACTIVE and record.title == "Prefers green tea to coffee"
    [evidence] = record.evidence
    assert evidence.quote == "Prefers green tea to coffee" and evidence.source == report.note
    paths = list(scene.services.store.quads(UserGraphs("alice").sources, report.note, KGM.notePath))
    assert [str(q.object) for q in paths] == ["Memory/entities/alice.md"]
    # the file now is the page's new revision, citing the new memory
    assert f"Prefers green tea to coffee {cite(made)}" in scene.text()
    assert was is not None and revision(scene.text()) == was + 1


def test_a_changed_value_supersedes_the_memory_it_cited(scene: Scene) -> None:
    old = "[[Memory/entities/globex|Globex]]"
    scene.edit(old, "Initech")
    report = scene.report()
    assert report.status is SyncStatus.APPLIED
    assert report.retired == [(scene.globex, MemoryStatus.SUPERSEDED)]
    assert scene.status(scene.globex) is MemoryStatus.SUPERSEDED
    assert scene.status(scene.acme) is MemoryStatus.ACTIVE  # the other line was not touched
    [made] = report.created
    record = scene.services.lifecycle.get("alice", made)
    assert [str(c.predicate) for c in record.claims] == ["https://schema.org/worksFor"]
    assert scene.globex in record.supersedes
    facts, changed = scene.text().split("## Facts", 1)[1].split("## What changed", 1)
    assert "[[Memory/entities/initech|Initech]]" in facts and "Globex" not in facts
    assert f"**works for**: Globex, superseded 2026-06-01 {cite(scene.globex)}" in changed


def test_a_struck_line_is_outdated_and_one_struck_as_wrong_is_erroneous(scene: Scene) -> None:
    line = f"[[Memory/entities/acme|Acme]] {cite(scene.acme)}"
    scene.edit(line, f"~~[[Memory/entities/acme|Acme]]~~ {cite(scene.acme)}")
    assert scene.report().retired == [(scene.acme, MemoryStatus.OUTDATED)]
    globex = f"[[Memory/entities/globex|Globex]] {cite(scene.globex)}"
    scene.edit(
        globex, f"~~[[Memory/entities/globex|Globex]]~~ never worked there {cite(scene.globex)}"
    )
    assert scene.report().retired == [(scene.globex, MemoryStatus.ERRONEOUS)]
    assert scene.status(scene.globex) is MemoryStatus.ERRONEOUS
    # nothing is said of Alice any more: her page and its file are gone
    assert scene.services.settle() and not scene.path().exists()


def test_a_deleted_line_asks_in_the_review_inbox(scene: Scene) -> None:
    text = scene.text()
    kept = [x for x in text.split("\n") if cite(scene.globex) not in x]
    scene.path().write_text("\n".join(kept), "utf-8")
    report = scene.report()
    assert report.held == [scene.globex] and scene.status(scene.globex) is MemoryStatus.PENDING
    assert "Works at Globex" in scene.titles(MemoryStatus.PENDING)
    [held] = [
        d
        for d in scene.services.gate.decisions.feed("alice")
        if d.target == scene.globex and d.action is Action.HOLD
    ]
    assert "its line was deleted in the vault" in held.reason and held.actor == "person"
    scene.services.lifecycle.approve("alice", scene.globex)  # the person keeps it
    assert scene.services.settle() and cite(scene.globex) in scene.text()


def test_an_edit_against_an_older_revision_is_a_conflict_that_loses_nothing(
    scene: Scene,
) -> None:
    stale = scene.text()
    was = revision(stale)
    assert was is not None
    remember(scene.services, 3, "Umbrella")  # the page moves on
    assert scene.services.settle() and (revision(scene.text()) or 0) > was
    edited = stale.replace(
        "## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-11-02: Started judo"
    ).replace("[[Memory/entities/acme|Acme]]", "Acme Corp")
    scene.path().write_text(edited, "utf-8")  # an editor that had the old copy open saves it
    report = scene.report()
    assert report.status is SyncStatus.CONFLICT
    assert report.revision == was and (report.current or 0) > was
    assert report.created == [] and len(report.pending) == 2  # both wait for the person
    assert report.held == [scene.acme]  # its line was changed: asked, not decided
    assert {"Started judo", "Acme Corp"} <= {
        x.removeprefix("works for: ") for x in scene.titles(MemoryStatus.PENDING)
    } | scene.titles(MemoryStatus.PENDING)
    copies = list((scene.memory / "conflicts").glob("*.md"))
    assert len(copies) == 1 and "Started judo" in copies[0].read_text("utf-8")
    note = scene.services.store.quads(UserGraphs("alice").sources, report.note, KGM.text)
    assert any("Started judo" in str(q.object) for q in note)
    assert "Umbrella" in scene.text()  # the page file is the current revision again
    # a conflict copy is never read as an edit, nor moved by a reconciliation
    assert scene.services.vault is not None
    again = scene.services.vault.reconcile("alice")
    assert copies[0].exists() and not again.removed


def test_a_renamed_page_is_moved_back_and_nothing_changes(scene: Scene) -> None:
    before = scene.titles()
    scene.path().rename(scene.path("entities/me.md"))
    scene.report("entities/me.md")
    deadline = time.monotonic() + 10
    while scene.path("entities/me.md").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not scene.path("entities/me.md").exists() and scene.path().is_file()
    assert scene.titles() == before


def test_a_deleted_page_file_is_written_again(scene: Scene) -> None:
    before = scene.titles()
    scene.path().unlink()
    assert scene.report().status is SyncStatus.GONE
    assert scene.path().is_file() and scene.titles() == before


def test_kgmems_own_writes_are_never_read_as_edits(scene: Scene) -> None:
    before = scene.titles()
    remember(scene.services, 3, "Umbrella")
    assert scene.services.settle()
    time.sleep(0.5)  # the watcher saw the write: it must be an echo
    while not scene.reports.empty():
        got = scene.reports.get()
        assert got.status in (SyncStatus.ECHO, SyncStatus.UNCHANGED), got
        assert got.operations == 0
    assert scene.titles() == before | {"Works at Umbrella"}


def test_the_same_edit_is_carried_out_once(scene: Scene) -> None:
    scene.edit(
        "## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-11-02: Ran a marathon"
    )
    first = scene.report()
    assert len(first.created) == 1
    assert scene.services.sync is not None
    text = scene.text()
    # the very same file saved again (a second editor, a restore from a backup)
    again = scene.services.sync.read("alice", scene.path())
    assert again.operations == 0 and scene.text() == text
    assert sum(t == "Ran a marathon" for t in scene.titles()) == 1


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"\xff\xfe\x00binary\x00", "not UTF-8"),
        (b"---\nid: [unclosed\n---\n\n## Facts\n\n- x\n", "not YAML"),
        (b"---\nid: 1\n", "not closed"),
        (b"# My own note\n\n## Facts\n\n- Bought a bike\n", "no page id"),
        (
            b'---\nid: "0123456789abcdef0123456789abcdef"\nrevision: 1\n---\n\n## Facts\n\n- x\n',
            "none of this user's pages",
        ),
    ],
)
def test_a_bad_file_is_refused_with_a_reason_and_changes_nothing(
    scene: Scene, content: bytes, reason: str
) -> None:
    before = scene.titles()
    scene.path("entities/odd.md").write_bytes(content)
    report = scene.report("entities/odd.md")
    assert report.status is SyncStatus.REFUSED and reason in report.reason
    assert scene.titles() == before and scene.path("entities/odd.md").read_bytes() == content


def test_a_page_id_with_another_pages_entity_is_refused(scene: Scene) -> None:
    text = scene.text("entities/acme.md")
    alice_entity = next(x for x in scene.text().split("\n") if x.startswith("entity: "))
    forged = "\n".join(
        alice_entity if x.startswith("entity: ") else x for x in text.split("\n")
    ).replace("## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-11-02: Was sold")
    scene.path("entities/acme.md").write_text(forged, "utf-8")
    report = scene.report("entities/acme.md")
    assert report.status is SyncStatus.REFUSED and "different pages" in report.reason
    assert "Was sold" not in scene.titles()


def test_a_huge_file_and_a_link_out_of_the_vault_are_refused(scene: Scene, tmp_path: Path) -> None:
    before = scene.titles()
    outside = tmp_path / "secret.md"
    outside.write_text(scene.text().replace("_Nothing recorded yet._", "- leaked line", 1))
    scene.path("entities/link.md").symlink_to(outside)
    assert "symbolic link" in scene.report("entities/link.md").reason
    big = scene.path("entities/big.md")
    big.write_bytes(b"---\n" + b"x" * (4 * 1024 * 1024 + 10))
    assert "larger than" in scene.report("entities/big.md").reason
    assert scene.titles() == before


def test_edits_made_while_nothing_watched_are_read_at_the_next_start(
    settings: Settings,
) -> None:
    services = wired(settings)
    remember(services, 1, "Acme")
    assert services.settle() and services.vault is not None
    page = services.vault.memory("alice") / ALICE_PAGE
    services.close()
    text = page.read_text("utf-8")
    page.write_text(
        text.replace(
            "## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-10-01: Got a dog"
        ),
        "utf-8",
    )
    again = wired(settings)
    try:
        again.reconcile_vaults()
        listed = MemoryList(again.store, again.queries).memories("alice", limit=100)
        assert "Got a dog" in {m.title for m in listed}
        assert "Got a dog" in page.read_text("utf-8") and "[m:" in page.read_text("utf-8")
    finally:
        again.close()


def test_the_servers_watcher_reads_every_users_vault_default_or_their_own(
    settings: Settings, tmp_path: Path
) -> None:
    """Default vaults are watched together, a vault of one's own (an Obsidian folder named
    in settings) on its own; an edit in either is read, each as its own user's."""
    own = tmp_path / "Obsidian" / "Bob"
    services = wired(replace(settings, vaults=f"bob={own}"))
    try:
        remember(services, 1, "Acme")
        remember(services, 1, "Globex", uid="bob")
        assert services.settle() and services.watch_vaults() and services.watcher is not None
        deadline = time.monotonic() + 10
        while services.watcher.watched() != ["", "bob"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert services.watcher.watched() == ["", "bob"]
        for uid, folder, line in (
            ("alice", services.settings.home / "vault" / "alice", "Learns the cello"),
            ("bob", own, "Learns the banjo"),
        ):
            page = folder / "Memory" / "entities" / f"{uid}.md"
            text = page.read_text("utf-8")
            page.write_text(
                text.replace(
                    "## How-tos and preferences\n\n_Nothing recorded yet._",
                    f"## How-tos and preferences\n\n- {line}",
                ),
                "utf-8",
            )
            listed = MemoryList(services.store, services.queries)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                if line in {m.title for m in listed.memories(uid, limit=100)}:
                    break
                time.sleep(0.05)
            assert line in {m.title for m in listed.memories(uid, limit=100)}, uid
            other = "bob" if uid == "alice" else "alice"
            assert line not in {m.title for m in listed.memories(other, limit=100)}
    finally:
        services.close()


def test_a_page_change_never_overwrites_an_edit_not_read_yet(settings: Settings) -> None:
    """A person saves a page while an agent's write changes the same page: the file keeps
    the person's edit until the sync has read it (then a conflict: nothing lost)."""
    services = wired(settings)
    try:
        remember(services, 1, "Acme")
        assert services.settle() and services.vault is not None and services.sync is not None
        page = services.vault.memory("alice") / ALICE_PAGE
        mine = page.read_text("utf-8").replace(
            "## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-10-01: Adopted a cat"
        )
        page.write_text(mine, "utf-8")  # saved; no watcher has read it yet
        remember(services, 2, "Globex")  # the page moves on meanwhile
        assert services.settle()
        assert page.read_text("utf-8") == mine  # the edit is still there to be read
        report = services.sync.read("alice", page)
        assert report.status is SyncStatus.CONFLICT and len(report.pending) == 1
        text = page.read_text("utf-8")
        assert "Globex" in text and "Adopted a cat" not in text  # pending: in the inbox
        listed = MemoryList(services.store, services.queries)
        assert "Adopted a cat" in {
            m.title for m in listed.memories("alice", status=MemoryStatus.PENDING, limit=100)
        }
    finally:
        services.close()


def test_without_inotify_the_vault_is_polled_and_edits_are_still_read(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel that refuses file-system events (a container without inotify, its instances
    used up) leaves the watcher polling: an edit is still read."""

    class NoInotify(Observer):  # type: ignore[misc,valid-type]
        def start(self) -> None:
            raise OSError(24, "inotify instance limit reached")

    monkeypatch.setattr("kgmem.pages.watch.Observer", NoInotify)
    with watched(settings, "Acme") as (services, reports, _):
        assert services.vault is not None
        page = services.vault.memory("alice") / ALICE_PAGE
        time.sleep(1.2)  # the poller's first snapshot
        page.write_text(
            page.read_text("utf-8").replace(
                "## History\n\n_Nothing recorded yet._", "## History\n\n- 2026-09-01: Ran 10k"
            ),
            "utf-8",
        )
        report = next_report(reports, f"Memory/{ALICE_PAGE}")
        assert report.status is SyncStatus.APPLIED and len(report.created) == 1
