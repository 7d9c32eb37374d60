"""The vault watcher: every user's vault, watched while the server runs.

The file system reports each change (watchdog: inotify on Linux); a file that has had no
event for ``quiet`` seconds (an editor saving in bursts, a rename in two events) is handed
to the sync (:class:`~kgmem.pages.sync.VaultSync`), one file at a time, in one background
thread: a page under ``Memory/`` is read for edits, any other ``.md`` or ``.txt`` file is a
note of the user's own, stored as its new revision. Every ``rescan`` seconds the watcher
also watches the vaults of users that appeared since, and watches again a vault folder that
was removed and made anew. What changed while nothing watched is read at start
(:meth:`kgmem.api.services.Services.reconcile_vaults`).
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
from watchdog.observers.polling import PollingObserver

from kgmem.pages.sync import SyncReport, VaultSync
from kgmem.pages.vault import NOTE_SUFFIXES, Vault

__all__ = ["VaultWatcher"]

log = logging.getLogger("kgmem.pages.watch")


class _Handler(FileSystemEventHandler):
    """The events of one user's vault (``uid``), or of the folder holding every default
    vault (``uid`` None: the user is the first part of the path). Hidden files and folders
    (``.obsidian``, ``.trash``, an editor's temporary files) are not looked at."""

    def __init__(self, watcher: VaultWatcher, uid: str | None, base: Path) -> None:
        self._watcher, self._uid, self._base = watcher, uid, base

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = Path(raw if isinstance(raw, str) else raw.decode())
            if not raw or path.suffix.lower() not in NOTE_SUFFIXES:
                continue
            try:
                parts = path.relative_to(self._base).parts
            except ValueError:
                continue
            if any(part.startswith(".") for part in parts):
                continue
            uid = self._uid
            if uid is None:  # <base>/<user>/...
                if len(parts) < 2:
                    continue
                uid = parts[0]
            self._watcher.touched(uid, path)


class VaultWatcher:
    """Hands each page file a person changed to the sync once it has settled."""

    def __init__(
        self,
        sync: VaultSync,
        vault: Vault,
        users: Callable[[], Iterable[str]],
        *,
        shared: Path | None = None,
        quiet: float = 0.25,
        rescan: float = 2.0,
        done: Callable[[SyncReport], object] | None = None,
    ) -> None:
        """``users()``: the users whose vaults to watch (read again every ``rescan`` s);
        ``shared``: the folder holding the default vaults (``<home>/vault``), watched once
        for all of them (a watch of its own per user would soon exhaust the kernel's
        inotify instances: 128 a user by default); ``done``: told of every file read
        (tests and the benchmark wait on it)."""
        self._sync, self._vault, self._users, self._shared = sync, vault, users, shared
        self._quiet, self._rescan, self._done = quiet, rescan, done
        self._due: dict[tuple[str, Path], float] = {}
        self._wake = threading.Condition()
        # uid ("" for the shared folder) -> its watch and the folder's inode
        self._watches: dict[str, tuple[ObservedWatch, int]] = {}
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping = False
        self._observer = _observer()
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
        """What is watched: users with a vault of their own, and "" for the shared folder."""
        return sorted(self._watches)

    def touched(self, uid: str, path: Path) -> None:
        """A file changed: read it once it has been quiet for ``quiet`` seconds."""
        with self._wake:
            self._due[(uid, path)] = time.monotonic() + self._quiet
            self._wake.notify_all()

    # -- watching ------------------------------------------------------------------------

    def _follow_users(self) -> None:
        """Watch every user's vault not watched yet (or made anew)."""
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
                root = self._vault.root(uid)
                if root.is_symlink() or self._vault.memory(uid).is_symlink():
                    continue  # never followed (the vault's reconciliation says so)
                root.mkdir(parents=True, exist_ok=True)
                if self._shared is not None and root.parent == self._shared:
                    self._watch(observer, "", self._shared, None)
                else:
                    self._watch(observer, uid, root, uid)
            except (OSError, ValueError) as exc:  # that user's vault; the others go on
                log.warning("vault of %s is not watched: %s", uid, exc)

    def _watch(self, observer: BaseObserver, key: str, folder: Path, uid: str | None) -> None:
        """Watch ``folder`` (again, if it was removed and made anew since)."""
        inode = folder.stat().st_ino
        held = self._watches.get(key)
        if held is not None and held[1] == inode:
            return
        if held is not None:
            observer.unschedule(held[0])
        watch = observer.schedule(_Handler(self, uid, folder), str(folder), recursive=True)
        self._watches[key] = (watch, inode)

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
                report = self._sync.read_any(uid, path)
            except Exception:  # one file never stops the others
                log.exception("vault of %s: reading %s failed", uid, path)
                continue
            if self._done is not None:
                self._done(report)


def _observer() -> BaseObserver:
    """The platform's file-system events (inotify on Linux), or, where the kernel refuses
    them (no inotify in a container, its instances used up), a poll every second."""
    try:
        observer: BaseObserver = Observer()
        observer.daemon = True
        observer.start()
    except OSError as exc:
        log.warning("file-system events unavailable (%s): the vaults are polled instead", exc)
        observer = PollingObserver(timeout=1.0)
        observer.daemon = True
        observer.start()
    return observer
