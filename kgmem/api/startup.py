"""What start-up opens before the services are wired (see :mod:`kgmem.api.services`): the
store, the users' SPARQL runner, the embedding model, and the levelling of the graph
projection with the store (steps 2-4 there); and what the server reads once they answer:
the digests of users who have none (:func:`settle_digests`)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from kgmem.config import Settings
from kgmem.index import (
    ChangeFeed,
    Digests,
    Embedder,
    EmbedderUnavailable,
    KuzuProjection,
    OpenReport,
    ReconcileReport,
    StaticEmbedder,
    StoreReader,
)
from kgmem.store import OxigraphStore, QueryRegistry, TripleStore, UserQueries
from kgmem.store.isolated import QueryProcesses

__all__ = [
    "IndexStartup",
    "index_dir",
    "level",
    "load_embedder",
    "open_store",
    "settle_digests",
    "user_queries",
]

log = logging.getLogger("kgmem.api")


def index_dir(settings: Settings) -> Path:
    """Where the graph projection lives (``kgmem index`` uses the same directory)."""
    return settings.home / "index" / "kuzu"


@dataclass(frozen=True)
class IndexStartup:
    """What start-up found: how the projection opened, how many outbox entries the previous
    process left (and were drained), and each user's comparison with the store."""

    opened: OpenReport
    drained: int
    reconciled: tuple[ReconcileReport, ...]
    pending: tuple[str, ...] = ()  # to compare and repair after start-up (Services.repair)

    @property
    def repaired(self) -> tuple[str, ...]:
        """Users whose projection differed from the store and was rebuilt."""
        return tuple(r.uid for r in self.reconciled if r.repaired)


def level(projection: KuzuProjection, feed: ChangeFeed, repair: bool = True) -> IndexStartup:
    """Steps 2-4 of start-up: attach the feed; drain the outbox a previous process left (a
    drain that empties a user's outbox levels the projection with the user's stamp); then
    compare with the store, and repair in place, only the users whose stamp in the
    projection is not the store's (``repair=False``: left pending). An intact store is
    trusted without reading it."""
    feed.attach()
    drains = feed.drain_all()
    for failed in (d for d in drains if not d.ok):
        log.warning("outbox of %s not drained at start-up: %s failed", failed.uid, failed.failed)
    behind = projection.unlevel()
    if not repair:
        if projection.opened.recovered:
            log.warning("graph projection: %s; rebuilt", projection.opened.reason)
        return IndexStartup(projection.opened, sum(d.drained for d in drains), (), tuple(behind))
    reconciled = tuple(projection.reconcile(uid) for uid in behind)
    repaired = [r.uid for r in reconciled if r.repaired]
    if repaired or projection.opened.recovered:
        log.warning(
            "graph projection: %s; rebuilt users %s",
            projection.opened.reason or "drift found",
            ", ".join(repaired or projection.opened.rebuilt),
        )
    return IndexStartup(projection.opened, sum(d.drained for d in drains), reconciled)


def settle_digests(
    digests: Digests,
    store: TripleStore,
    queries: QueryRegistry,
    stop: threading.Event | None = None,
) -> int:
    """Read whole the digests of every user who has none, or whose digests no projection
    caught up from (:mod:`kgmem.index.digests`: what makes the next repair after a drift
    cheap); the server runs it after its warm-up. ``stop``: set, no further user is begun.
    How many users were read."""
    read = 0
    for uid in sorted(StoreReader(store, queries).users()):
        if stop is not None and stop.is_set():
            break
        try:
            read += digests.settle(uid)
        except Exception:  # the next start tries again; a drift meanwhile reads all
            log.exception("reading the digests of %s failed", uid)
    return read


def load_embedder(settings: Settings) -> Embedder | None:
    """The embedding model search uses: the configured one (unusable: the error says why),
    else the default directory's when it holds one and the extra is installed, else none."""
    path = settings.embedding_dir
    if settings.embedding_model:
        return StaticEmbedder(path)
    if not (path / "model.safetensors").is_file():
        return None
    try:
        return StaticEmbedder(path)
    except EmbedderUnavailable as exc:
        log.warning("%s: search runs without vectors", exc)
        return None


def user_queries(settings: Settings, store: TripleStore) -> UserQueries:
    """The runner of users' SPARQL: in worker processes on a store on disk (see
    :mod:`kgmem.store.isolated`), on threads on an in-memory one."""
    slots, processes = settings.sparql_slots, None
    if isinstance(store, OxigraphStore) and store.path is not None:
        processes = QueryProcesses(
            store,
            store.path.with_name(store.path.name + ".query-snapshots"),
            memory_bytes=settings.sparql_memory_megabytes * 1024 * 1024 // slots,
        )
    return UserQueries(
        store,
        limit=settings.sparql_result_limit,
        timeout=settings.sparql_timeout_seconds,
        slots=slots,
        processes=processes,
    )


def open_store(settings: Settings, in_memory: bool) -> TripleStore:
    if in_memory:
        return OxigraphStore()
    settings.store_dir.parent.mkdir(parents=True, exist_ok=True)
    return OxigraphStore(settings.store_dir)
