"""Which process runs a pass, and whether it still does: the I/O seam of pass liveness.

A process is named by its host, the host's boot, its pid and the pid's start time (clock
ticks since boot, field 22 of ``/proc/<pid>/stat``). When the owner of a pid dies the kernel
may hand the pid to a new process, which has another start time; after a reboot the boot id
differs. So a reused pid never passes for the owner, and no pid survives a reboot.

Only the host a process ran on can tell that it is gone; another host cannot see it (and
neither can a system without ``/proc``), so :meth:`Processes.alive` answers ``None`` there
and the heartbeat decides alone.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["LocalProcesses", "ProcessIdentity", "Processes"]

#: States of ``/proc/<pid>/stat`` of a process that has exited (zombie, dead): its pid and
#: start time still read back until its parent reaps it.
_EXITED = frozenset({"Z", "X", "x"})


@dataclass(frozen=True)
class ProcessIdentity:
    """One process, distinguishable from any later process with the same pid."""

    host: str
    pid: int
    started: int | None  # start time in clock ticks since boot; None without /proc
    boot: str | None  # /proc/sys/kernel/random/boot_id; None without /proc

    def describe(self) -> str:
        """``"pid 4242 on worker-1"``, as the history shows an owner."""
        return f"pid {self.pid} on {self.host}"


class Processes(Protocol):
    def current(self) -> ProcessIdentity:
        """This process."""
        ...

    def alive(self, identity: ProcessIdentity) -> bool | None:
        """True: ``identity`` is running; False: it is gone (this host rebooted, or its pid
        is free, exited, or another process's); None: this host cannot tell."""
        ...


class LocalProcesses:
    """Processes of this host, read from ``proc`` (``/proc``; another root in tests)."""

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._host = socket.gethostname()

    def current(self) -> ProcessIdentity:
        identity = self.identity(os.getpid())
        assert identity is not None  # this process runs
        return identity

    def identity(self, pid: int) -> ProcessIdentity | None:
        """The process ``pid`` of this host now; None when there is none (with ``/proc``)."""
        stat = self._stat(pid)
        if stat is None and self._boot() is not None:
            return None
        return ProcessIdentity(self._host, pid, None if stat is None else stat[1], self._boot())

    def alive(self, identity: ProcessIdentity) -> bool | None:
        if identity.host != self._host:
            return None
        boot = self._boot()
        if boot is None or identity.started is None or identity.boot is None:
            return None  # no /proc here, or the owner had none: only the heartbeat can tell
        if identity.boot != boot:
            return False  # the host rebooted since: every process of that boot is gone
        stat = self._stat(identity.pid)
        if stat is None:
            return False
        state, started = stat
        return state not in _EXITED and started == identity.started

    def _boot(self) -> str | None:
        try:
            return (self._proc / "sys/kernel/random/boot_id").read_text().strip() or None
        except OSError:
            return None

    def _stat(self, pid: int) -> tuple[str, int] | None:
        """The state and start time of ``pid``, or None when there is no such process."""
        try:
            text = (self._proc / str(pid) / "stat").read_text()
        except OSError:
            return None
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after
        # the last ")"; the state is field 3 and the start time field 22.
        fields = text[text.rfind(")") + 1 :].split()
        try:
            return fields[0], int(fields[19])
        except (IndexError, ValueError):
            return None
