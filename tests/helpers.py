"""Helpers several test modules share."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["holding"]


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
