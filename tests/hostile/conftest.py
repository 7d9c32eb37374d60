"""The hostile suite's target: one live server on loopback, a tripwire listener its attacks
name, and a watcher asking ``/health`` every 50 ms, shared by a module's tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest

from tests.api.test_sparql import World, running_world
from tests.regressions.tripwire import Tripwire, tripwire


@dataclass
class Watch:
    """``/health`` latencies and failures while the attacks run."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


@dataclass
class Target:
    world: World
    wire: Tripwire
    watch: Watch

    def headers(self, token: str | None = None, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token or self.world.alice}", **extra}


def _watch(url: str, watch: Watch, stop: threading.Event) -> None:
    with httpx.Client(timeout=10) as http:
        while not stop.is_set():
            started = time.monotonic()
            try:
                code = http.get(f"{url}/health").status_code
                if code != 200:
                    watch.failures.append(f"/health answered {code}")
            except httpx.HTTPError as exc:
                watch.failures.append(f"/health failed: {exc!r}")
            watch.latencies.append(time.monotonic() - started)
            time.sleep(0.05)


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    stop, watch = threading.Event(), Watch()
    with running_world(tmp_path_factory.mktemp("home")) as world, tripwire() as wire:
        watcher = threading.Thread(target=_watch, args=(world.url, watch, stop), daemon=True)
        watcher.start()
        try:
            yield Target(world, wire, watch)
        finally:
            stop.set()
            watcher.join(timeout=15)


def assert_health_held(target: Target) -> None:
    """``/health`` answered every time, each within a second, and nothing connected out."""
    watch = target.watch
    assert len(watch.latencies) > 20, "the watcher hardly ran"
    assert watch.failures == []
    assert max(watch.latencies) < 1.0, f"/health took up to {max(watch.latencies):.2f} s"
    assert target.wire.connections == []
