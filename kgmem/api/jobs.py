"""Scheduled work inside the server process (APScheduler 3.x, one background thread).

Jobs only call services; each is safe to run at any time and to run late. Every
``sweep_interval_seconds``: the consolidation sweep (passes for idle chats and queued
drafts, bounded concurrency), the expiry of episodes whose time to live has passed, and
periodic consolidation (repeated episodes into routines, references into facts; most runs
find nothing new and write nothing).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from apscheduler.schedulers.background import BackgroundScheduler
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.errors import KgmemError
from kgmem.store import GraphKind, users_with

__all__ = ["Jobs", "users_of"]

log = logging.getLogger("kgmem.jobs")


def users_of(services: Services) -> list[str]:
    """Every user with a knowledge graph in the store."""
    return users_with(services.store.graphs(), GraphKind.KG)


@dataclass
class Jobs:
    services: Services
    scheduler: BackgroundScheduler | None = None
    #: each user's stamp when periodic consolidation last read their memory: what it finds
    #: depends on nothing else (no clock), so an unchanged user is not read again
    periodic_seen: dict[str, int | None] = field(default_factory=dict)

    def expire(self) -> dict[str, list[URIRef]]:
        """Expire every user's due episodes; one user's failure does not stop the others."""
        expired: dict[str, list[URIRef]] = {}
        for uid in users_of(self.services):
            try:
                done = self.services.lifecycle.expire_due(uid)
            except KgmemError:
                log.exception("expiry failed for user %s", uid)
                continue
            if done:
                expired[uid] = done
        return expired

    def sweep(self) -> int:
        """One consolidation sweep; returns how many passes ran."""
        try:
            return len(self.services.consolidation.sweep())
        except KgmemError:
            log.exception("consolidation sweep failed")
            return 0

    def periodic(self) -> int:
        """Periodic consolidation for every user whose memory changed since it last ran
        for them (at a million memories, reading every user's episodes took over the
        minute between runs); returns how many memories it created or updated. One
        user's failure does not stop the others."""
        changed = 0
        for uid in users_of(self.services):
            stamp = self.services.feed.stamp(uid)  # before: a commit meanwhile is seen next
            if uid in self.periodic_seen and self.periodic_seen[uid] == stamp:
                continue
            try:
                changed += self.services.consolidation.periodic(uid).changed
            except KgmemError:
                log.exception("periodic consolidation failed for user %s", uid)
                continue
            self.periodic_seen[uid] = stamp
        return changed

    def start(self) -> None:
        interval = self.services.settings.sweep_interval_seconds
        self.scheduler = BackgroundScheduler(daemon=True)
        self.scheduler.add_job(
            self.expire, "interval", seconds=interval, id="expire", max_instances=1, coalesce=True
        )
        self.scheduler.add_job(
            self.sweep, "interval", seconds=interval, id="sweep", max_instances=1, coalesce=True
        )
        self.scheduler.add_job(
            self.periodic,
            "interval",
            seconds=interval,
            id="periodic",
            max_instances=1,
            coalesce=True,
        )
        self.scheduler.start()

    def stop(self) -> None:
        if self.scheduler is not None and self.scheduler.running:
            self.scheduler.shutdown(wait=True)
        self.scheduler = None
