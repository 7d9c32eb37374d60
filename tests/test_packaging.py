"""How pip installs kgmem from the repository: `pip install -e .` (what `make serve` and
`make test` run) prints no warning."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from setuptools import find_packages
from setuptools.discovery import find_package_path

from tests.conftest import REPO


def _setuptools_config() -> dict[str, Any]:
    config: dict[str, Any] = tomllib.loads((REPO / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"])


def test_an_editable_install_puts_the_source_root_on_the_path() -> None:
    """#28: with no package-dir, setuptools' editable build (``editable_wheel``) sees a flat
    layout it will not put on sys.path, installs a meta path finder instead and warns, on
    every install, to be careful with "folders in your working directory with the same name
    as your package". It writes a plain .pth, and says nothing, when the package-dir is one
    root under which every package it finds sits at its dotted path.

    Checked on the configuration, not by a build: the venv's setuptools predates this
    pyproject's license field, and a build in isolation needs the package index."""
    config = _setuptools_config()
    package_dir: dict[str, str] = config.get("package-dir", {})
    assert set(package_dir) == {""}, "a flat layout: pip install -e . warns again"
    root = REPO / package_dir[""]
    packages = find_packages(str(root), include=config["packages"]["find"]["include"])
    assert {"kgmem", "kgmem.api.graphql", "kgmem.pipeline.stages"} <= set(packages)
    for package in packages:
        found = Path(find_package_path(package, package_dir, str(REPO)))
        assert found.resolve() == (root / package.replace(".", "/")).resolve(), package
