"""The README documents every setting, and opens with the two commands."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from kgmem.config import Settings

README = Path(__file__).resolve().parent.parent / "README.md"


def _settings_table() -> dict[str, str]:
    rows = re.findall(r"^\| `([a-z_]+)` \| `(KGMEM_[A-Z_]+)` \|", README.read_text(), re.M)
    return dict(rows)


def test_readme_table_lists_every_setting_with_its_env_var() -> None:
    table = _settings_table()
    declared = {f.name for f in fields(Settings)}
    assert set(table) == declared
    for name, env in table.items():
        assert env == f"KGMEM_{name.upper()}"


def test_readme_table_shows_each_default() -> None:
    text = README.read_text()
    for f in fields(Settings):
        if f.name in ("home", "shapes_dir"):
            continue
        default = f.default
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        assert re.search(rf"^\| `{f.name}` \| `[A-Z_]+` \| `{re.escape(shown)}` \|", text, re.M), (
            f.name
        )


def test_readme_opens_with_the_two_commands() -> None:
    head = README.read_text().splitlines()[:6]
    assert any(line.startswith("make serve") for line in head)
    assert any(line.startswith("make test") for line in head)
