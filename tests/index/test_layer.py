"""The index layer may import only the store (and the shared errors and vocabulary)."""

from __future__ import annotations

import ast
from pathlib import Path

import kgmem.index

ALLOWED = (
    "kgmem.index",
    "kgmem.store",
    "kgmem.errors",
    "kgmem.vocab",
    "kgmem.progress",
    "kgmem.bulk",
)


def test_index_modules_import_only_the_store() -> None:
    package = Path(kgmem.index.__file__).parent
    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("kgmem"):
                    assert name.startswith(ALLOWED), f"{path.name} imports {name}"
