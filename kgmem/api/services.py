"""The services one kgmem process builds once and passes down.

Start-up (:func:`build_services`) also brings the projections level with the store, in every
process that opens it (the server, and the command line when no server runs), so a write
from either reaches them and a forget from either purges them:

1. the Kùzu projection opens (a damaged database is moved aside and rebuilt from the store);
2. the change feed attaches to the store: from here on every commit carries its outbox entry;
3. the outbox a stopped or crashed process left is drained;
4. every user whose stamp in the projection is not the store's (:mod:`kgmem.index.feed_outbox`:
   every write moves it, in the same atomic commit) is compared with the store (counts and
   checksums per table) and repaired in place; the others are level with the store and are
   not read at all, so an intact store starts in seconds at any size. The server leaves
   this to :meth:`Services.repair`, run in the background once it answers (a user's
   repair takes minutes at 100k memories; searches rank without the graph meanwhile). A
   change made behind kgmem's back (another program writing the store's files) moves no
   stamp: ``kgmem index check`` compares every user;
5. the feed drains in the background from then on.

The lexical index is held in memory per user and saved on disk (:mod:`kgmem.index.lexical`):
the server loads it (:meth:`Services.warm`) in the background once it takes requests, a user
whose saved index is level with the store first; a search of a user not loaded yet loads it
(a rebuild, for a user whose saved index cannot be used: only that user's searches wait).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from kgmem.api.startup import (
    IndexStartup,
    index_dir,
    level,
    load_embedder,
    open_store,
    user_queries,
)
from kgmem.clock import Clock, SystemClock
from kgmem.config import Settings
from kgmem.index import (
    ChangeFeed,
    Digests,
    FeedTarget,
    KuzuProjection,
    LexicalIndex,
    ReconcileReport,
    StoreReader,
)
from kgmem.memory import (
    Lifecycle,
    ResetReport,
    ShortMemoryPolicy,
    ShortNotes,
    SourceStore,
    WriteGate,
    reset_user,
)
from kgmem.ontology import (
    LoadReport,
    OntologyService,
    ShapesFiles,
    ValidationService,
    bundled_files,
    check_bundled,
    ensure_bundled,
)
from kgmem.pages import (
    PageFollower,
    PageReader,
    Vault,
    VaultReport,
    VaultSync,
    VaultWatcher,
)
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.lm import ModelSet
from kgmem.pipeline.ports import PassPorts
from kgmem.retrieval import ContextLimits, MemoryRetrieval, MemorySearch, PromptContext
from kgmem.store import QueryRegistry, TripleStore, UserQueries

__all__ = [
    "RESET_STEPS",
    "IndexStartup",  # with index_dir and load_embedder, from kgmem.api.startup
    "Services",
    "build_services",
    "index_dir",
    "load_embedder",
]

log = logging.getLogger("kgmem.api")


#: What a reset does, in order (what its job shows as its step).
RESET_STEPS = (
    "dropping what was derived (memories, entities, pages, decisions, passes)",
    "the projections letting go",
    "the search index, pages and ontology caches",
    "clearing the vault's Memory/ folder",
)


@dataclass
class Services:
    settings: Settings
    store: TripleStore
    queries: QueryRegistry
    clock: Clock
    bundled: LoadReport
    ontology: OntologyService
    validation: ValidationService
    shapes: ShapesFiles
    sources: SourceStore
    notes: ShortNotes  # the short notes: listed, consolidated or not, forgotten
    gate: WriteGate
    lifecycle: Lifecycle
    models: ModelSet
    consolidation: Consolidation
    projection: KuzuProjection
    digests: Digests  # what changed after a drift (see kgmem.index.digests)
    lexical: LexicalIndex
    feed: ChangeFeed
    search: MemorySearch
    retrieval: MemoryRetrieval
    context: PromptContext
    index: IndexStartup
    sparql: UserQueries  # users' own SPARQL queries (closed with the services)
    pages: PageFollower
    vault: Vault | None  # None: settings.vault is off, or the in-memory mode
    page_reader: PageReader  # a page or note by path or by what it is of
    sync: VaultSync | None  # reads edits made in the vault (None with no vault)
    watcher: VaultWatcher | None  # hands the sync each edited file (started by the server)
    started_at: datetime = field(default_factory=lambda: SystemClock().now())
    warmed: threading.Event = field(default_factory=threading.Event)  # set once warm() ends
    repairs: list[ReconcileReport] = field(default_factory=list)  # what repair() found
    owns_store: bool = True
    scratch: Path | None = None  # the in-memory mode's projection directory, removed on close

    def warm(self, stop: threading.Event | None = None) -> int:
        """Hold every user's search index in memory now rather than at the first search
        (up to ``search_resident_documents``), and repair what start-up left to repair: the
        saved indexes level with the store are loaded first (seconds), then the graph
        projection of every user start-up found behind is compared and repaired
        (:meth:`repair`), then any other user's search index is rebuilt from the store and
        saved. A search of a user not done yet opens that user itself. ``stop``: set, no
        further user is begun. How many users."""
        users = sorted(StoreReader(self.store, self.queries).users())
        intact = {uid for uid in users if self.lexical.intact(uid)}
        for uid in [*sorted(intact), None, *(u for u in users if u not in intact)]:
            if stop is not None and stop.is_set():
                break
            if uid is None:
                self.repair(stop)
                self.reconcile_vaults(stop)
                continue
            try:
                self.lexical.open(uid)
            except Exception:  # that user's first search tries again; the others go on
                log.exception("opening the search index of %s failed", uid)
        return len(users)

    def repair(self, stop: threading.Event | None = None) -> list[ReconcileReport]:
        """Compare with the store, and repair in place, the graph projection of the users
        start-up found behind (``index.pending``), one by one; what was found."""
        found = []
        for uid in self.index.pending:
            if stop is not None and stop.is_set():
                break
            try:
                found.append(self.projection.reconcile(uid))
            except Exception:  # the next start compares that user again
                log.exception("repairing the graph projection of %s failed", uid)
        repaired = [r.uid for r in found if r.repaired]
        if repaired:
            log.warning("graph projection: drift found; rebuilt users %s", ", ".join(repaired))
        self.repairs.extend(found)
        return found

    def reconcile_vaults(self, stop: threading.Event | None = None) -> list[VaultReport]:
        """Bring every user's vault level with their stored pages (a report each), then
        read back the pages edited while nothing watched them, and store a new revision of
        each note of the user's own that changed."""
        if self.vault is None or self.sync is None:
            return []
        found = []
        for uid in sorted(StoreReader(self.store, self.queries).users()):
            if stop is not None and stop.is_set():
                break
            try:
                report = self.vault.reconcile(uid)
                found.append(report)
                for edited in report.edited:
                    self.sync.read(uid, report.root / edited)
                self.sync.read_notes(uid)
            except Exception:  # that user's next start tries again; the others go on
                log.exception("reconciling the vault of %s failed", uid)
        return found

    def watch_vaults(self) -> bool:
        """Start reading edits made in the vaults as they are made (the server does)."""
        if self.watcher is None:
            return False
        self.watcher.start()
        return True

    def repairing(self) -> dict[str, list[str]]:
        """What start-up left to repair and is not repaired yet, by projection: the users
        whose graph projection waits for :meth:`repair`, and those searched in a stale
        search index while it is rebuilt."""
        done = {r.uid for r in self.repairs}
        return {
            "graph": [u for u in self.index.pending if u not in done],
            "search": self.lexical.renewing(),
        }

    def settle(self, rounds: int = 5) -> bool:
        """Bring every projection (graph, search, and with the vault on the pages and their
        files) level with every commit made so far, in this thread; whether the outbox is
        empty (a target that keeps failing leaves its entries for the retry)."""
        for _ in range(rounds):
            if not self.feed.waiting():
                return True
            self.feed.drain_all()
        return not self.feed.waiting()

    def reset_user(self, uid: str, progress: Callable[[str], None] | None = None) -> ResetReport:
        """Drop what was derived for ``uid`` and keep what was handed over
        (:func:`kgmem.memory.reset_user`), and every cache of theirs: the projections are
        purged by the commit itself, the search index (rebuilt from the kept sources at the
        next search), what pages showed, the effective ontology and the vault's ``Memory/``
        folder here. ``progress(step)`` hears each of :data:`RESET_STEPS` as it begins."""
        say = progress or (lambda step: None)
        say(RESET_STEPS[0])
        report = reset_user(self.store, uid)
        say(RESET_STEPS[1])
        self.feed.drain(uid)
        say(RESET_STEPS[2])
        self.lexical.drop(uid)
        self.pages.cache.forget(uid)
        self.ontology.invalidate(uid)
        say(RESET_STEPS[3])
        if self.vault is not None:
            self.vault.clear(uid)
        return report

    def close(self) -> None:
        """Drain the feed (unless it was stopped) and save the search index (what is not
        drained waits for the next start), stop the feed, close the projection, then the
        store if these services opened it."""
        if self.watcher is not None:
            self.watcher.stop()  # no edit is read on a closing store
        try:
            draining = self.feed.running  # a stopped feed stays stopped: nothing drains
            self.feed.stop()
            if draining:
                self.feed.drain_all()
            self.lexical.flush()
        except Exception:  # the next start compares what it cannot trust
            log.exception("saving the search index at close failed")
        self.feed.detach()
        self.sparql.close()
        self.projection.close()
        self.digests.close()
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.owns_store:
            self.store.close()


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    in_memory: bool = False,
    store: TripleStore | None = None,
    repair: bool = True,
) -> Services:
    """Parse every query and shape file, then open the store: nothing is written to disk
    unless all the inputs are sound. Then open the projections and bring them level with
    the store (see the module docstring).

    ``store``, when given, is an already-open store the caller owns (the CLI opens one with
    :func:`kgmem.cli.common.local_store`); it is not closed if start-up fails, nor by
    :meth:`Services.close`. ``in_memory`` keeps the store in memory and the projection in a
    temporary directory. ``repair=False`` leaves the users whose graph projection is
    behind to :meth:`Services.repair` (the server repairs them in the background, serving
    meanwhile); they are in ``index.pending``. It also lets a search index saved before
    writes no one can replay answer while it is rebuilt in the background (see
    :class:`LexicalIndex`).
    """
    queries = QueryRegistry.load()
    files = bundled_files(settings.shapes_dir, local_shapes=settings.local_shapes_dir)
    check_bundled(files)
    owned = store is None
    if store is None:
        store = open_store(settings, in_memory)
    scratch = Path(tempfile.mkdtemp(prefix="kgmem-index-")) if in_memory else None
    projection: KuzuProjection | None = None
    digests: Digests | None = None
    feed: ChangeFeed | None = None
    try:
        report = ensure_bundled(store, queries, files)
        digests = Digests(store, queries, None if scratch is not None else settings.digests_path)
        projection = KuzuProjection(
            index_dir(settings) if scratch is None else scratch / "kuzu",
            store,
            queries,
            digests,
            settings.graph_buffer_megabytes,
        )
        lexical = LexicalIndex(
            store,
            queries,
            embedder=load_embedder(settings),
            directory=None if scratch is not None else settings.search_dir,
            resident=settings.search_resident_documents,
            save_every=settings.search_save_seconds,
            background=not repair,
            digests=digests,
        )
        clock = clock or SystemClock()
        kept = None if scratch is not None else settings.catalogue_index_path
        ontology = OntologyService(store, queries, kept)
        validation = ValidationService(store, queries, ontology)
        pages = PageFollower(store, queries, ontology, validation, clock)
        following = settings.vault == "on" and not in_memory
        vault = Vault(store, queries, settings.vault_dir) if following else None
        # every commit brings the search index level before it returns (a search then
        # never does a write's work); the graph projection, and with the vault on the
        # pages and their files, follow in the background (the pages' commits reach the
        # vault)
        targets: list[FeedTarget] = [projection, lexical, digests]
        targets += [pages, vault] if vault is not None else []
        feed = ChangeFeed(store, queries, targets, eager=[lexical])
        startup = level(projection, feed, repair)
    except BaseException:
        if feed is not None:
            feed.detach()
        if projection is not None:
            projection.close()
        if digests is not None:
            digests.close()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if owned:
            store.close()
        raise
    sources = SourceStore(store, queries, clock, policy=ShortMemoryPolicy.from_settings(settings))
    gate = WriteGate(store, queries, settings, clock, sources, ontology, validation)
    lifecycle = Lifecycle(store, queries, clock, validation, ontology=ontology)
    models = ModelSet.from_settings(settings)
    ports = PassPorts(ontology, validation, sources, gate, models)
    consolidation = Consolidation(store, queries, clock, settings, ports)
    search = MemorySearch(
        store,
        queries,
        lexical,
        clock,
        lifecycle,
        expand=True,
        files=None if vault is None else vault.locate,
    )
    retrieval = MemoryRetrieval(store, queries, search, lifecycle, lexical, clock)
    context = PromptContext(
        store,
        queries,
        clock,
        ContextLimits.from_settings(settings),
        files=None if vault is None else vault.file_path,
    )
    sync = watcher = None
    if vault is not None:
        sync = VaultSync(
            store, queries, vault, sources, gate, lifecycle, ontology, clock, feed.drain
        )
        users = StoreReader(store, queries).users
        shared = settings.home / "vault"
        watcher = VaultWatcher(sync, vault, lambda: sorted(users()), shared=shared)
    feed.start()
    return Services(
        settings=settings,
        store=store,
        queries=queries,
        clock=clock,
        bundled=report,
        ontology=ontology,
        validation=validation,
        shapes=ShapesFiles(
            store, queries, validation, settings.shapes_dir, settings.local_shapes_dir
        ),
        sources=sources,
        notes=ShortNotes(store, queries, lifecycle.decisions, clock),
        gate=gate,
        lifecycle=lifecycle,
        models=models,
        consolidation=consolidation,
        projection=projection,
        digests=digests,
        lexical=lexical,
        feed=feed,
        search=search,
        retrieval=retrieval,
        context=context,
        index=startup,
        started_at=clock.now(),
        owns_store=owned,
        scratch=scratch,
        sparql=user_queries(settings, store),
        pages=pages,
        vault=vault,
        page_reader=PageReader(store, queries, vault),
        sync=sync,
        watcher=watcher,
    )
