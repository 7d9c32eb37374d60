"""Each layer's __init__ is its public API: the export lists are complete, sorted, resolvable."""

from __future__ import annotations

import importlib
import inspect

import pytest

import kgmem
import kgmem.errors

PACKAGES = [
    "kgmem",
    "kgmem.store",
    "kgmem.ontology",
    "kgmem.memory",
    "kgmem.pipeline",
    "kgmem.index",
    "kgmem.retrieval",
    "kgmem.api",
    "kgmem.errors",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_resolvable(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical
    assert exported == sorted(
        exported, key=lambda n: (0 if n.isupper() else 1 if n[:1].isupper() else 2, n)
    )
    for item in exported:
        assert hasattr(module, item), f"{name}.{item}"


@pytest.mark.parametrize(
    "name",
    [
        "kgmem.store",
        "kgmem.ontology",
        "kgmem.memory",
        "kgmem.pipeline",
        "kgmem.index",
        "kgmem.retrieval",
        "kgmem.api",
    ],
)
def test_every_public_class_and_function_is_exported(name: str) -> None:
    module = importlib.import_module(name)
    public = {
        n
        for n, v in vars(module).items()
        if not n.startswith("_")
        and (inspect.isclass(v) or inspect.isfunction(v))
        and getattr(v, "__module__", "").startswith("kgmem")
    }
    assert public <= set(module.__all__)


def test_top_level_api() -> None:
    assert kgmem.__version__
    assert set(kgmem.__all__) == {"KgmemError", "Settings", "__version__", "load_settings"}


def test_every_error_is_drawn_in_the_tree_and_rooted() -> None:
    doc = kgmem.errors.__doc__ or ""
    for name in kgmem.errors.__all__:
        cls = getattr(kgmem.errors, name)
        assert issubclass(cls, kgmem.errors.KgmemError)
        assert name in doc, f"{name} is missing from the tree in errors.py"
