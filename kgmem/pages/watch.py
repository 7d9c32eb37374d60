"""The vault watcher: every user's ``Memory/`` folder, watched while the server runs.

The file system reports each change (watchdog: inotify on Linux); a page file that has had
no event for ``quiet`` seconds (an editor saving in bursts, a rename in two events) is
handed to the sync (:class:`~kgmem.pages.sync.VaultSync`), one file at a time, in one
background thread. Every ``rescan`` seconds the watcher also watches the vaults of users
that appeared since, and watches again a ``Memory/`` folder that was removed and made anew.
Start-up reads what changed while nothing watched (:meth:`VaultSync.read_edited`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from kgmem.pages.sync import SyncReport, VaultSync
from kgmem.pages.vault import Vault

__all__ = ["VaultWatcher"]

log = logging.getLogger("kgmem.pages.watch")


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: VaultWatcher, uid: str) -> None:
        self._watcher, self._uid = watcher, uid

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = Path(raw if isinstance(raw, str) else raw.decode())
            if raw and path.suffix == ".md" and not path.name.startswith("."):
                self._watcher.touched(self._uid, path)


class VaultWatcher:
    """Hands each page file a person changed to the sync once it has settled."""

    def __init__(
        self,
        sync: VaultSync,
        vault: Vault,
        users: Callable[[], Iterable[str]],
        *,
        quiet: float = 0.25,
        rescan: float = 2.0,
        done: Callable[[SyncReport], object] | None = None,
    ) -> None:
        """``users()``: the users whose vaults to watch (read again every ``rescan`` s);
        ``done``: told of every file read (tests and the benchmark wait on it)."""
        self._sync, self._vault, self._users = sync, vault, users
        self._quiet, self._rescan, self._done = quiet, rescan, done
        self._due: dict[tuple[str, Path], float] = {}
        self._wake = threading.Condition()
        self._watches: dict[str, tuple[ObservedWatch, int]] = {}  # uid -> watch, folder inode
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping = False
        self._observer = Observer()
        self._observer.daemon = True
        self._observer.start()
        self._follow_users()
        self._thread = threading.Thread(target=self._run, name="kgmem-vault-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join()
            self._observer = None
        self._watches.clear()

    @property
    def running(self) -> bool:
        return self._thread is not None

    def watched(self) -> list[str]:
        return sorted(self._watches)

    def touched(self, uid: str, path: Path) -> None:
        """A file changed: read it once it has been quiet for ``quiet`` seconds."""
        with self._wake:
            self._due[(uid, path)] = time.monotonic() + self._quiet
            self._wake.notify_all()

    # -- watching ------------------------------------------------------------------------

    def _follow_users(self) -> None:
        """Watch every user's ``Memory/`` folder not watched yet (or made anew)."""
        observer = self._observer
        if observer is None:
            return
        try:
            users = list(self._users())
        except Exception:  # the store is busy or closing: the next rescan tries again
            log.exception("listing the users to watch failed")
            return
        for uid in users:
            try:
                memory = self._vault.memory(uid)
                if memory.is_symlink():
                    continue  # never followed (the vault's reconciliation says so)
                memory.mkdir(parents=True, exist_ok=True)
                inode = memory.stat().st_ino
                held = self._watches.get(uid)
                if held is not None and held[1] == inode:
                    continue
                if held is not None:
                    observer.unschedule(held[0])
                watch = observer.schedule(_Handler(self, uid), str(memory), recursive=True)
                self._watches[uid] = (watch, inode)
            except (OSError, ValueError) as exc:  # that user's vault; the others go on
                log.warning("vault of %s is not watched: %s", uid, exc)

    # -- the reading thread --------------------------------------------------------------

    def _next(self) -> tuple[str, Path] | None:
        """The next file due, waiting for it (rescanning the users meanwhile); None once
        stopping."""
        rescan_at = time.monotonic() + self._rescan
        with self._wake:
            while not self._stopping:
                now = time.monotonic()
                if now >= rescan_at:
                    return ("", Path())
                due = [(at, key) for key, at in self._due.items() if at <= now]
                if due:
                    _, key = min(due)
                    del self._due[key]
                    return key
                soonest = min([rescan_at, *self._due.values()])
                self._wake.wait(max(0.0, soonest - now))
        return None

    def _run(self) -> None:
        while (item := self._next()) is not None:
            uid, path = item
            if not uid:
                self._follow_users()
                continue
            try:
                report = self._sync.read(uid, path)
            except Exception:  # one file never stops the others
                log.exception("vault of %s: reading %s failed", uid, path)
                continue
            if self._done is not None:
                self._done(report)
