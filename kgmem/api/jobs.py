"""Scheduled work inside the server process (APScheduler 3.x, one background thread).

Jobs only call services; each is safe to run at any time and to run late. Every
``sweep_interval_seconds``: the consolidation sweep (passes for idle chats and queued
drafts, bounded concurrency), the expiry of episodes whose time to live has passed, and
periodic consolidation (repeated episodes into routines, references into facts; most runs
find nothing new and write nothing).

Periodic consolidation reads a user again only when their memory changed since it last did
(their stamp moved): 3-9 s for a user of 10k memories, so a server that forgot at every
start spent its first minutes re-reading every user while it answered searches (at a
million memories over 100 users, ~8 minutes of a core). What it last saw is kept on disk
(``Settings.periodic_path``), with a digest of the rules' code: a change to them reads
every user again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from apscheduler.schedulers.background import BackgroundScheduler
from rdflib import URIRef

from kgmem.api.services import Services
from kgmem.errors import KgmemError
from kgmem.pipeline import periodic as periodic_rules
from kgmem.store import GraphKind, users_with

__all__ = ["Jobs", "users_of"]

log = logging.getLogger("kgmem.jobs")


def _rules() -> str:
    """A digest of the code that decides what periodic consolidation finds."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(Path(str(periodic_rules.__file__)).parent.glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


_RULES = _rules()


def _read_seen(path: Path | None) -> dict[str, int | None]:
    """The stamps kept at ``path``; none when there is no file, or it is unreadable, or
    kept by other rules (every user is then read once, as at a first start)."""
    if path is None:
        return {}
    try:
        kept = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is unreadable (%s): periodic consolidation reads every user", path, exc)
        return {}
    if not isinstance(kept, dict) or kept.get("rules") != _RULES:
        return {}
    seen = kept.get("seen")
    if not isinstance(seen, dict):
        return {}
    return {
        uid: stamp
        for uid, stamp in seen.items()
        if stamp is None or (isinstance(stamp, int) and not isinstance(stamp, bool))
    }


def _write_seen(path: Path, seen: dict[str, int | None]) -> None:
    """Write ``seen`` whole under a temporary name, then rename: a crash leaves the old
    file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(json.dumps({"rules": _RULES, "seen": seen}, sort_keys=True))
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def users_of(services: Services) -> list[str]:
    """Every user with a knowledge graph in the store."""
    return users_with(services.store.graphs(), GraphKind.KG)


@dataclass
class Jobs:
    services: Services
    scheduler: BackgroundScheduler | None = None
    #: each user's stamp when periodic consolidation last read their memory: what it finds
    #: depends on nothing else (no clock), so an unchanged user is not read again; kept in
    #: ``Settings.periodic_path`` (not with the in-memory store)
    periodic_seen: dict[str, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        on_disk = self.services.scratch is None
        self._seen_path = self.services.settings.periodic_path if on_disk else None
        self.periodic_seen = {**_read_seen(self._seen_path), **self.periodic_seen}

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
            self._keep_seen()
        return changed

    def _keep_seen(self) -> None:
        if self._seen_path is None:
            return
        try:
            _write_seen(self._seen_path, self.periodic_seen)
        except OSError:  # the next start reads those users again: slower, not wrong
            log.exception("keeping what periodic consolidation saw failed")

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
