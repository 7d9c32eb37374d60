"""A real ``kgmem serve`` for the benchmarks that measure a server from outside: started in a
process of its own on a fresh home and a free loopback port, with users made through the
admin API, and what its processes use read from ``/proc``."""

from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Served:
    url: str
    pid: int
    home: Path
    admin: str  # the default user's key (an admin)

    def add_user(self, uid: str) -> str:
        """An API key of ``uid``: a new user's, or a new key of a user the store has."""
        auth = {"Authorization": f"Bearer {self.admin}"}
        made = httpx.post(f"{self.url}/api/admin/users", json={"user": uid}, headers=auth)
        if made.status_code == 409:
            made = httpx.post(f"{self.url}/api/admin/users/{uid}/keys", json={}, headers=auth)
        made.raise_for_status()
        return str(made.json()["token"])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def served(home: Path, start_within: float = 120, **settings: str) -> Iterator[Served]:
    """``kgmem serve`` on ``home`` (``settings``: ``KGMEM_<NAME>`` values), ready within
    ``start_within`` seconds, stopped with SIGINT (a clean shutdown) when the block ends."""
    port = free_port()
    env = {
        **os.environ,
        **{f"KGMEM_{name.upper()}": value for name, value in settings.items()},
        "KGMEM_HOME": str(home),
        "KGMEM_PORT": str(port),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "HF_HUB_OFFLINE": "1",
    }
    kgmem = Path(sys.executable).with_name("kgmem")
    log = (home / "serve.log").open("ab")  # what the server says, kept with its home
    process = subprocess.Popen([str(kgmem), "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_within
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the server did not start")
            time.sleep(0.2)
        yield Served(url, process.pid, home, (home / "api-key").read_text().strip())
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:  # still starting: a clean stop waits for start-up
            process.kill()
            process.wait()
        log.close()


def tree(root: int) -> list[int]:
    """``root`` and every live descendant."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def cpu_seconds(root: int) -> float:
    """CPU time used so far by ``root`` and its descendants."""
    total = 0.0
    for pid in tree(root):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / _TICK
    return total


def rss_bytes(root: int) -> int:
    """Resident memory of ``root`` and its descendants."""
    total = 0
    for pid in tree(root):
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
        except OSError:
            continue
    return total


def percentile(values: list[float], p: int) -> float:
    """The ``p``-th percentile (nan for no values)."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1]
