"""Real processes to own passes in the liveness tests: a sleeping child, and a claimant that
claims in its name (the store and the liveness probe stay real)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from kgmem.pipeline import LocalProcesses, ProcessIdentity


@contextmanager
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A child process that sleeps until it is killed (reaped on the way out)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        yield child
    finally:
        child.kill()
        child.wait(timeout=30)


def identity_of(child: subprocess.Popen[bytes]) -> ProcessIdentity:
    found = LocalProcesses().identity(child.pid)
    assert found is not None and found.started is not None
    return found


class ClaimingAs(LocalProcesses):
    """This host's processes, but claims are made in ``owner``'s name (another process)."""

    def __init__(self, owner: ProcessIdentity) -> None:
        super().__init__()
        self._owner = owner

    def current(self) -> ProcessIdentity:
        return self._owner
