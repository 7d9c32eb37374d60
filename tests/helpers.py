"""Helpers several test modules share."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["MCP_INIT", "holding", "load_benchmark", "on_the_loop_when_called"]

_BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


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
