"""The hostile suite's server and watchers.

The server is ``kgmem serve`` in a process of its own (so the test's own work, generators
included, is not the server's CPU), its model's API pointed at a loopback *tripwire* that
records any connection (its consolidation sweep held off: passes call the model by design),
and ``/health`` is asked every 0.2 s from a third process: a thread
of the test process would wait for the test's own work (hypothesis and schemathesis hold the
GIL in long calls) and time that instead of the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.api.support import SparqlUsers
from tests.conftest import free_port
from tests.regressions.tripwire import Tripwire, tripwire

HEALTH_EVERY, HEALTH_WITHIN = 0.2, 1.0  # seconds

_PROBE = """
import sys, time, httpx
base, every, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
with httpx.Client(base_url=base, timeout=10) as client, open(out, "w") as log:
    while True:
        at, began = time.time(), time.monotonic()
        try:
            ok = client.get("/health").status_code == 200
        except httpx.HTTPError:
            ok = False
        log.write(f"{at} {time.monotonic() - began if ok else 'inf'}\\n")
        log.flush()
        time.sleep(every)
"""


def _samples(out: Path) -> list[tuple[float, float]]:
    found = []
    for line in out.read_text().splitlines() if out.exists() else ():
        at, took = line.split()
        found.append((float(at), float(took)))
    return found


@contextmanager
def health_probe(base: str, out: Path) -> Iterator[Callable[[], list[tuple[float, float]]]]:
    """Ask ``/health`` every HEALTH_EVERY seconds from another process while the block runs;
    yields a function that reads the (wall time, seconds) samples so far (``inf``: failed)."""
    command = [sys.executable, "-c", _PROBE, base, str(HEALTH_EVERY), str(out)]
    probe = subprocess.Popen(command)
    try:
        yield lambda: _samples(out)
    finally:
        probe.terminate()
        probe.wait(timeout=10)


def _wait_for(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    pytest.fail(f"kgmem serve did not start:\n{log.read_text(errors='replace')[-3000:]}")


@contextmanager
def served(home: Path, wire: Tripwire) -> Iterator[httpx.Client]:
    """``kgmem serve`` on a free loopback port, its model's API at the tripwire; a client
    with the key it made on first start (the default user, an admin)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGMEM_")}
    env.update(KGMEM_HOME=str(home), LITELLM_LOCAL_MODEL_COST_MAP="True", HF_HUB_OFFLINE="1")
    env.update(KGMEM_MODEL_PRIMARY="openai/tripwire", KGMEM_MODEL_API_BASE=wire.url)
    # A consolidation pass calls the model by design (reflect_session queues one at once,
    # an idle chat one after a while), from the scheduler, not from a request: the sweep is
    # held off, so the tripwire sees what a request itself makes the server connect to.
    env.update(KGMEM_SWEEP_INTERVAL_SECONDS="86400")
    port = free_port()
    command = [sys.executable, "-m", "kgmem.cli", "serve", "--port", str(port)]
    with (home / "serve.log").open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_for(base, process, home / "serve.log")
            token = (home / "api-key").read_text().strip()
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
                yield client
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass(frozen=True)
class Target:
    world: SparqlUsers
    wire: Tripwire
    health: Callable[[], list[tuple[float, float]]]

    def headers(self, token: str | None = None, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.world.alice}", **extra}


def _user(client: httpx.Client, uid: str) -> str:
    made = client.post("/api/admin/users", json={"user": uid})
    assert made.status_code in (200, 201), made.text
    return str(made.json()["token"])


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    home = tmp_path_factory.mktemp("hostile")
    with tripwire() as wire, served(home, wire) as client:
        admin = str(client.headers["Authorization"]).removeprefix("Bearer ")
        world = SparqlUsers(
            str(client.base_url).rstrip("/"), _user(client, "alice"), _user(client, "bob"), admin
        )
        with health_probe(world.url, home / "health.log") as samples:
            yield Target(world, wire, samples)


def assert_health_held(target: Target) -> None:
    """``/health`` answered every time, each within a second, and nothing connected out."""
    samples = target.health()
    assert len(samples) > 20, "the probe hardly ran"
    slow = [took for _, took in samples if took >= HEALTH_WITHIN]
    assert slow == [], f"/health took {sorted(slow)[-3:]} s (inf: no answer)"
    assert target.wire.connections == []
