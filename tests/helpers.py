"""Helpers several test modules share."""

from __future__ import annotations

import asyncio
import importlib.util
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import httpx

from kgmem.store import Quad, UserGraphs
from kgmem.vocab import KGM, RDF

if TYPE_CHECKING:
    from kgmem.api.services import Services

__all__ = [
    "MCP_INIT",
    "Served",
    "holding",
    "kgmem_serve",
    "load_benchmark",
    "memory_state",
    "on_the_loop_when_called",
]

_BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_REPO = _BENCHMARKS.parent


class Served:
    """A running ``kgmem serve``: its URL, and (once it stopped) what it printed."""

    def __init__(self, url: str, log: Path, process: subprocess.Popen[bytes]) -> None:
        self.url, self.log, self.process = url, log, process

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def output(self) -> list[str]:
        return self.log.read_text(encoding="utf-8", errors="replace").splitlines()


@contextmanager
def kgmem_serve(
    env: dict[str, str], log: Path, *, cwd: Path = _REPO, within: float = 60
) -> Iterator[Served]:
    """A real ``kgmem serve`` process on a free loopback port, with ``env`` (its
    ``KGMEM_HOME``, say), answering ``/health`` (else the test fails with what it printed
    to ``log``); stopped with Ctrl-C (SIGINT) when the block ends, which must end it
    cleanly (exit 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = [sys.executable, "-m", "kgmem.cli", "serve", "--port", str(port)]
    with log.open("ab") as out:
        process = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=out)
    served = Served(f"http://127.0.0.1:{port}", log, process)
    try:
        deadline = time.monotonic() + within
        while not _answers(served.url):
            if process.poll() is not None or time.monotonic() > deadline:
                output = "\n".join(served.output()[-40:])
                raise AssertionError(f"kgmem serve gave no /health in {within} s:\n{output}")
            time.sleep(0.1)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    assert process.returncode == 0, "\n".join(served.output()[-40:])


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2).is_success
    except httpx.HTTPError:
        return False


def load_benchmark(name: str) -> ModuleType:
    """A benchmarks module by path (benchmarks is no package), registered under its name so
    its sibling imports resolve."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def holding(path: Path) -> Iterator[None]:
    """Another process holding the Oxigraph store at ``path``, as a running server would."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pyoxigraph; s = pyoxigraph.Store(sys.argv[1]); print('held', flush=True);"
            " sys.stdin.read()",
            str(path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("")


# An MCP client's first request (JSON-RPC over streamable HTTP).
MCP_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}


def on_the_loop_when_called(calls: list[bool], wrapped: Callable[..., Any]) -> Callable[..., Any]:
    """``wrapped``, recording for each call whether it ran on an event loop's thread."""

    def record(*args: Any, **kwargs: Any) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            calls.append(False)
        else:
            calls.append(True)
        return wrapped(*args, **kwargs)

    return record


def memory_state(services: Services, uid: str) -> tuple[set[Quad], dict[str, str]]:
    """``uid``'s memory once every projection has caught up: the quads of its kg and
    quarantine graphs but pages and their revisions, and each page's current Markdown by
    path with its revision number left out (pages keep their history: a state brought back
    is the same page text at a new revision)."""
    assert services.settle(), "the outbox did not empty"
    graphs = UserGraphs(uid)
    store = services.store
    paged = {q.subject for q in store.quads(graphs.kg, None, RDF.type, KGM.Page)}
    paged |= {q.subject for q in store.quads(graphs.kg, None, RDF.type, KGM.PageRevision)}
    quads = {
        q for g in (graphs.kg, graphs.quarantine) for q in store.quads(g) if q.subject not in paged
    }
    texts: dict[str, str] = {}
    for quad in store.quads(graphs.kg, None, KGM.path):
        current = next(iter(store.quads(graphs.kg, quad.subject, KGM.currentRevision)), None)
        if current is None:
            continue
        for text in store.quads(graphs.kg, current.object, KGM.markdown):
            lines = str(text.object).split("\n")
            texts[str(quad.object)] = "\n".join(x for x in lines if not x.startswith("revision: "))
    return quads, texts


def load_realistic() -> ModuleType:
    """``realistic_data``, with the benchmark modules the realistic suite's runners import by
    name loaded first (``load_benchmark`` then gives any of them)."""
    for sibling in ("correctness_core", "correctness_pass", "correctness_world", "recall_support"):
        load_benchmark(sibling)
    load_benchmark("correctness")
    return load_benchmark("realistic_data")
