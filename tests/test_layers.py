"""The package layout DESIGN.md promises: layers import only downward, and no module imports
itself back through others (every import counts: at module level, inside a function, or for
type checking only). Read from the parsed source, so a lazy import cannot hide a cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import kgmem

PACKAGE = Path(kgmem.__file__).parent

#: kgmem's layers, lowest first; a module may import its own layer and any lower one.
#: The root modules (errors, vocab, clock, progress, bulk) are below every layer; settings check ids
#: as the store names them, and every layer above the store reads settings (and the package's
#: version and public names, which are the settings and the errors).
RANK = {
    "errors": 0,
    "vocab": 0,
    "clock": 0,
    "progress": 0,
    "bulk": 0,
    "store": 1,
    "config": 1,
    "kgmem": 1,
    "ontology": 2,
    "index": 2,
    "memory": 3,
    "retrieval": 4,
    "pages": 4,
    "pipeline": 5,
    "api": 6,
    "cli": 7,
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["kgmem", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The kgmem module a dotted name lives in (a module, or a name inside one)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imported(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names = [f"{origin}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            owner = _owner(name) if name.startswith("kgmem.") else None
            if owner is not None and owner != module:
                yield owner


GRAPH = {m: set(_imported(m, p)) for m, p in MODULES.items()}


def _layer(module: str) -> str:
    return module.split(".")[1] if module != "kgmem" else "kgmem"


def test_every_package_has_a_rank() -> None:
    layers = {_layer(m) for m in MODULES}
    assert layers == set(RANK), "a new top-level package needs its place in RANK"


def test_layers_import_only_downward() -> None:
    upward = sorted(
        f"{m} -> {t}"
        for m, targets in GRAPH.items()
        for t in targets
        if RANK[_layer(t)] > RANK[_layer(m)]
    )
    assert upward == []


def test_no_import_cycles() -> None:
    # Tarjan's strongly connected components; any with two or more modules is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == [], cycles


def test_the_checker_sees_lazy_and_type_checking_imports() -> None:
    # a package __init__ reaches its members; the check would be blind without these edges
    assert "kgmem.api.services" in GRAPH["kgmem.api"]
    assert "kgmem.index.rows" in GRAPH["kgmem.index.base"]
