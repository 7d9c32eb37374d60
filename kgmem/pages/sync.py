"""The vault sync: an edit a person makes to a ``Memory/`` page becomes memory operations.

:meth:`VaultSync.read` reads one page file, compares it with the stored revision its front
matter names (:mod:`kgmem.pages.edits`), and carries each edit out, as the person who made
it (no model is asked):

- an added line is a new memory, grounded on the file as a note (its vault path, the line
  as the quote, the user's authority), about the page's entity; a fact line
  (``**works for**: Initech``) states the claim when the page already uses that label, else
  the line is kept as it was written;
- a changed line is a new memory that supersedes the memories the line cited;
- a struck-through line retires them: outdated, or erroneous when the words after the
  strike say so (``~~Works at Acme~~ wrong``);
- a deleted line asks: its memories go back to the review inbox (approve keeps them, reject
  archives them).

An edit made against an older revision than the page's current one is a *conflict*: nothing
is lost and nothing is decided for the person: the file's text is kept (as a note in the
store and as a copy under ``Memory/conflicts/``), its added and changed lines wait in the
review inbox as pending memories, and the memories its other edits touched are held there.

Every file read is stored as a note revision, and the page records the digest of each edit
it has read: a file read twice (a restart, a second event) is carried out once. When done,
the page file is the page's current revision again (which now shows the edit). kgmem's own
writes never count as edits (:meth:`Vault.wrote`), and kgmem never overwrites an edit the
sync has not read (:meth:`Vault.write`).

Any other ``.md`` or ``.txt`` file in the vault (outside ``Memory/`` and hidden folders) is a
note of the user's own: :class:`~kgmem.pages.notes.NoteReader` stores each new version as a numbered
note revision (searchable with its path, citable as evidence); kgmem never writes to it.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.errors import KgmemError
from kgmem.memory import (
    Actor,
    Lifecycle,
    MemoryKind,
    MemoryStatus,
    NoteIn,
    Outcome,
    SourceStore,
    WriteGate,
    WriteMode,
    read_memory,
)
from kgmem.ontology import OntologyService
from kgmem.pages.edits import (
    EditKind,
    FrontMatterError,
    LineEdit,
    PageLine,
    ReadPage,
    dated,
    fact_parts,
    page_edits,
    read_page,
)
from kgmem.pages.notes import NoteReader
from kgmem.pages.reports import SyncReport, SyncStatus
from kgmem.pages.reports import shown as _shown
from kgmem.pages.revisions import MEMORY_DIR
from kgmem.pages.vault import PageFile, Vault
from kgmem.store import Changeset, Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF

__all__ = ["SyncReport", "SyncStatus", "VaultSync"]  # the reports: kgmem.pages.reports

log = logging.getLogger("kgmem.pages.sync")

CONFLICTS_DIR = "conflicts"
_KINDS = {
    "Facts": MemoryKind.SEMANTIC,
    "How-tos and preferences": MemoryKind.PROCEDURAL,
    "History": MemoryKind.EPISODIC,
}


class VaultSync:
    """Reads edited page files back as memory operations (see the module)."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        vault: Vault,
        sources: SourceStore,
        gate: WriteGate,
        lifecycle: Lifecycle,
        ontology: OntologyService,
        clock: Clock,
        settle: Callable[[str], object],
    ) -> None:
        """``settle(uid)``: bring the user's pages and files level with their commits (the
        change feed's drain), so the file shows the edit's outcome when :meth:`read` ends."""
        self._store, self._queries, self._vault = store, queries, vault
        self._sources, self._gate, self._lifecycle = sources, gate, lifecycle
        self._ontology, self._clock, self._settle = ontology, clock, settle
        self._notes = NoteReader(store, queries, vault, sources, clock)
        self._reading = threading.Lock()  # one file at a time: an edit is carried out once

    # -- reading one file ----------------------------------------------------------------

    def read(self, uid: str, path: Path) -> SyncReport:
        """Read the page file at ``path`` (in ``uid``'s ``Memory/``) and carry out its edits."""
        with self._reading:
            return self._read(uid, path)

    def read_any(self, uid: str, path: Path) -> SyncReport:
        """Read a file of ``uid``'s vault: a page under ``Memory/``, else a note of theirs."""
        memory = self._vault.memory(uid)
        return self.read(uid, path) if path.is_relative_to(memory) else self.read_note(uid, path)

    def read_note(self, uid: str, path: Path) -> SyncReport:
        """Store a new revision of the user's own note at ``path`` (see :mod:`.notes`)."""
        return self._notes.read(uid, path)

    def read_notes(self, uid: str) -> list[SyncReport]:
        """Every note of the user's own, as at start (see :mod:`.notes`)."""
        return self._notes.read_all(uid)

    def _read(self, uid: str, path: Path) -> SyncReport:
        root = self._vault.root(uid)
        shown = _shown(path, root)
        try:
            relative = self._relative(uid, path)
        except ValueError as exc:
            return self._refuse(uid, shown, str(exc))
        if relative.split("/", 1)[0] == CONFLICTS_DIR:
            return SyncReport(uid, shown, SyncStatus.UNCHANGED, "a conflict copy: kept as it is")
        try:
            text, digest = self._vault.read(path)
        except FileNotFoundError:  # a page's file is written again: its memories stand
            report = SyncReport(uid, shown, SyncStatus.GONE)
            gone = self._vault.page_at(uid, relative)
            return report if gone is None else self._level(uid, gone, relative, report)
        except ValueError as exc:
            return self._refuse(uid, shown, str(exc))
        if self._vault.wrote(path) == digest:
            return SyncReport(uid, shown, SyncStatus.ECHO)
        try:
            edited = read_page(text)
        except FrontMatterError as exc:
            return self._refuse(uid, shown, str(exc))
        page = self._page_of(uid, edited, shown)
        if isinstance(page, SyncReport):
            return page
        report = SyncReport(uid, shown, SyncStatus.APPLIED, revision=edited.revision)
        report.current = page.revision
        base = self._revision_text(uid, page, edited.revision)
        if base is None:
            return self._refuse(uid, shown, f"revision {edited.revision} of the page is not stored")
        if "\nredacted: true\n" in base.split("\n---\n", 1)[0] + "\n":
            return self._refuse(uid, shown, "made against a revision emptied by a forget")
        if text == base:
            report.status = SyncStatus.UNCHANGED
            return self._level(uid, page, relative, report)
        marker = Literal("sha256:" + digest)
        if any(
            True for _ in self._store.quads(UserGraphs(uid).kg, page.page, KGM.editRead, marker)
        ):
            report.status = SyncStatus.SEEN
            return self._level(uid, page, relative, report)
        edits = page_edits(read_page(base), edited)
        if not edits:
            report.status = SyncStatus.UNCHANGED
            report.reason = "no line a person can change was changed"
            self._mark(uid, page.page, marker)
            return self._level(uid, page, relative, report)
        conflict = edited.revision is not None and edited.revision < page.revision
        report.status = SyncStatus.CONFLICT if conflict else SyncStatus.APPLIED
        at = f"{MEMORY_DIR}/{relative}"
        note = self._sources.ingest_note(uid, NoteIn(path=at, text=text))
        report.note = note.iri
        context = _Context(uid, self._entity(uid, page.page), _name(edited), note.iri, at)
        for edit in edits:
            try:
                self._carry_out(context, edit, conflict, page.revision, report)
            except KgmemError as exc:  # a memory changed meanwhile: said, the rest goes on
                line = (edit.new or edit.old or PageLine("", "", "")).quote
                report.refused.append((line, str(exc)))
        self._mark(uid, page.page, marker)
        if conflict:
            self._keep_copy(uid, relative, edited.revision, text, digest)
        log.info(
            "vault of %s: %s read (%s): %d operations, %d refused",
            uid,
            shown,
            report.status.value,
            report.operations,
            len(report.refused),
        )
        return self._level(uid, page, relative, report)

    # -- the operations ------------------------------------------------------------------

    def _carry_out(
        self, ctx: _Context, edit: LineEdit, conflict: bool, current: int, report: SyncReport
    ) -> None:
        uid = ctx.uid
        if edit.kind is EditKind.ADDED and edit.new is not None:
            self._add(ctx, edit.new, conflict, report)
            return
        cited = self._cited(uid, ctx.entity, edit.citations)
        live = [m for m in cited if self._status(uid, m) is MemoryStatus.ACTIVE]
        if conflict:
            why = f"edited in the vault against an older revision (the page is at {current})"
            if edit.kind is EditKind.CHANGED and edit.new is not None:
                self._add(ctx, edit.new, conflict, report)
            for memory in live:
                self._hold(uid, memory, why, report)
            return
        if edit.kind is EditKind.CHANGED and edit.new is not None:
            made = self._add(ctx, edit.new, conflict, report)
            for memory in live:
                if made is None:
                    why = f"its line was changed in the vault ({ctx.path}); the new one was refused"
                    self._hold(uid, memory, why, report)
                elif self._status(uid, memory) is MemoryStatus.ACTIVE:  # else the gate did
                    reason = f"changed in the vault ({ctx.path})"
                    self._lifecycle.retire(uid, memory, MemoryStatus.SUPERSEDED, reason, by=made)
                    report.retired.append((memory, MemoryStatus.SUPERSEDED))
            return
        for memory in live:
            if edit.kind is EditKind.STRUCK:
                status = MemoryStatus.ERRONEOUS if edit.erroneous else MemoryStatus.OUTDATED
                reason = f"struck through in the vault ({ctx.path})"
                self._lifecycle.retire(uid, memory, status, reason)
                report.retired.append((memory, status))
            else:
                why = (
                    f"its line was deleted in the vault ({ctx.path}): approve keeps it, "
                    "reject archives it"
                )
                self._hold(uid, memory, why, report)

    def _hold(self, uid: str, memory: URIRef, reason: str, report: SyncReport) -> None:
        self._lifecycle.hold(uid, memory, reason)
        report.held.append(memory)

    def _add(
        self, ctx: _Context, line: PageLine, conflict: bool, report: SyncReport
    ) -> URIRef | None:
        """A new memory from ``line``: with its claim when one can be stated, else as
        written. Pending on a conflict. The memory, or None when the gate refused it."""
        draft = _draft(ctx, line)
        claim = self._claim(ctx, line)
        mode = WriteMode.REVIEW if conflict else None
        actor = Actor.AGENT if conflict else Actor.PERSON
        tries = [{**draft, "claims": [claim]}, draft] if claim is not None else [draft]
        reasons: list[str] = []
        for payload in tries:
            result = self._gate.draft(ctx.uid, [payload], actor=actor, mode=mode).items[0]
            if result.outcome in (Outcome.ACTIVE, Outcome.PENDING, Outcome.MERGED) and (
                result.memory is not None
            ):
                pending = result.outcome is Outcome.PENDING
                (report.pending if pending else report.created).append(result.memory)
                return result.memory
            reasons += list(result.reasons)
        report.refused.append((line.quote, "; ".join(reasons) or "refused by the write gate"))
        return None

    def _claim(self, ctx: _Context, line: PageLine) -> dict[str, Any] | None:
        """The claim a fact line states, when a claim about the entity already uses its label
        for a property: ``{"subject", "predicate", "object"|"value", "negated"}``."""
        parts = fact_parts(line) if line.section == "Facts" else None
        if parts is None:
            return None
        label, value = parts
        if ctx.entity is None:
            return None
        negated = label.casefold().startswith("not ")
        wanted = label.casefold().removeprefix("not ").strip()
        vocabulary = self._ontology.effective(ctx.uid).vocabulary
        rows = self._store.select(
            self._queries["pages/entity_predicates"],
            {"graph": UserGraphs(ctx.uid).kg, "entity": ctx.entity},
        )
        for row in rows:
            predicate = URIRef(row["predicate"])
            if vocabulary.label(predicate).casefold() != wanted:
                continue
            literal = isinstance(flag := row.get("literal"), Literal) and flag.toPython() is True
            return {
                "subject": ctx.name,
                "predicate": str(predicate),
                "value" if literal else "object": value,
                "negated": negated,
            }
        return None

    # -- reading the store ---------------------------------------------------------------

    def _relative(self, uid: str, path: Path) -> str:
        memory = self._vault.memory(uid)
        try:
            relative = path.relative_to(memory).as_posix()
        except ValueError:
            raise ValueError(f"{path} is not in the Memory folder") from None
        self._vault.resolve(uid, relative)  # refuses .., links and the like
        return relative

    def _page_of(self, uid: str, edited: ReadPage, shown: str) -> PageFile | SyncReport:
        if edited.id is None:
            return self._refuse(
                uid, shown, "no page id in its front matter: notes of your own go outside Memory/"
            )
        page = self._vault.page_by_id(uid, edited.id)
        if page is None:
            return self._refuse(uid, shown, f"page id {edited.id} is none of this user's pages")
        kg = UserGraphs(uid).kg
        if any(True for _ in self._store.quads(kg, page.page, RDF.type, KGM.Playbook)):
            return self._refuse(
                uid,
                shown,
                "a playbook is written from its procedure: change the how-to on the page of "
                "what it is about (its line and its indented steps)",
            )
        entity = self._entity(uid, page.page)
        if edited.entity is not None and entity is not None and edited.entity != str(entity):
            return self._refuse(uid, shown, "its page id and its entity name different pages")
        if edited.revision is None or edited.revision < 1:
            return self._refuse(uid, shown, "no revision number in its front matter")
        if edited.revision > page.revision:
            return self._refuse(uid, shown, f"revision {edited.revision} was never written")
        return page

    def _revision_text(self, uid: str, page: PageFile, number: int | None) -> str | None:
        if number is None:
            return None
        if number == page.revision:
            return page.markdown
        node = URIRef(f"{page.page}#r{number}")
        for quad in self._store.quads(UserGraphs(uid).kg, node, KGM.markdown):
            return str(quad.object)
        return None

    def _entity(self, uid: str, page: URIRef) -> URIRef | None:
        for quad in self._store.quads(UserGraphs(uid).kg, page, KGM.pageOf):
            if isinstance(quad.object, URIRef):
                return quad.object
        return None

    def _cited(self, uid: str, entity: URIRef | None, citations: Sequence[str]) -> list[URIRef]:
        """The memories behind ``citations`` (``m:`` and an id prefix unique on the page):
        among the memories about ``entity`` or with a claim about it, which are the ones
        its page can show (so the cost is the page's, not the whole memory's)."""
        if entity is None or not citations:
            return []
        kg, base = UserGraphs(uid).kg, UserGraphs(uid).node_base + "memory/"
        candidates = {q.subject for q in self._store.quads(kg, None, KGM.about, entity)}
        for claim in self._store.quads(kg, None, KGM.subject, entity):
            candidates |= {q.subject for q in self._store.quads(kg, None, KGM.claim, claim.subject)}
        found: list[URIRef] = []
        for citation in citations:
            prefix = base + citation.removeprefix("m:")
            matching = [m for m in candidates if isinstance(m, URIRef) and m.startswith(prefix)]
            if len(matching) == 1:  # else no memory, or more than one: it names none
                found.append(matching[0])
        return list(dict.fromkeys(found))

    def _status(self, uid: str, memory: URIRef) -> MemoryStatus | None:
        record = read_memory(self._store, memory, [UserGraphs(uid).kg])
        return None if record is None else record.status

    # -- afterwards ----------------------------------------------------------------------

    def _mark(self, uid: str, page: URIRef, marker: Literal) -> None:
        self._store.commit(Changeset.of([Quad(page, KGM.editRead, marker, UserGraphs(uid).kg)]))

    def _keep_copy(
        self, uid: str, relative: str, revision: int | None, text: str, digest: str
    ) -> None:
        """The edited file as it was, under ``Memory/conflicts/``, its page id renamed so
        reconciliation leaves it be."""
        stem = Path(relative).stem
        name = f"{CONFLICTS_DIR}/{stem} (edited at r{revision}, {digest[:8]}).md"
        kept = re.sub(r"^id:", "conflict-of:", text, count=1, flags=re.M)
        self._vault.keep(uid, name, kept)

    def _level(self, uid: str, page: PageFile, relative: str, report: SyncReport) -> SyncReport:
        """Make the page's file its current revision (which shows what the edit did); a
        copy read at another path (renamed, moved) is removed: what it said is stored."""
        try:
            self._settle(uid)
            current = self._vault.page_by_id(uid, page.id)
            if current is not None:
                self._vault.write(uid, current, read=True)  # its edit was just read
                report.current = current.revision
                if relative != current.path:
                    self._vault.remove(uid, relative)
                    report.moved_back = True
        except (OSError, ValueError) as exc:
            log.warning("vault of %s: %s not written back: %s", uid, report.path, exc)
        return report

    def _refuse(self, uid: str, shown: str, reason: str) -> SyncReport:
        log.warning("vault of %s: %s not read: %s", uid, shown, reason)
        return SyncReport(uid, shown, SyncStatus.REFUSED, reason)


@dataclass(frozen=True)
class _Context:
    """The page an edit was made to: its user, entity and name, the note that stores the
    edited file, and that file's vault path."""

    uid: str
    entity: URIRef | None
    name: str
    note: URIRef
    path: str


def _name(edited: ReadPage) -> str:
    """The page's entity name, as its front matter (else its heading) says."""
    title = edited.front.get("title")
    return title if isinstance(title, str) and title.strip() else edited.heading


def _draft(ctx: _Context, line: PageLine) -> dict[str, Any]:
    """The memory a line states, as written, grounded on the file with the line as quote."""
    kind = _KINDS.get(line.section, MemoryKind.SEMANTIC)
    title, occurred = line.text, None
    if kind is MemoryKind.EPISODIC and (when := dated(line)) is not None:
        occurred, title = when[0] + "T00:00:00Z", when[1]
    draft: dict[str, Any] = {
        "kind": kind.value,
        "title": title[:200],
        "confidence": 0.9,
        "entities": [{"name": ctx.name}] if ctx.name else [],
        "evidence": [
            {"source": str(ctx.note), "quote": quote} for quote in (line.quote, *line.step_quotes)
        ],
    }
    if occurred is not None:
        draft["occurred_at"] = occurred
    if kind is MemoryKind.PROCEDURAL and line.steps:
        draft["steps"] = list(line.steps)
    return draft
