"""A benchmark's store kept in a directory (``--home``) across runs: built once (a million
memories take an hour or more to build here), measured again as often as wanted.

A build that finished writes ``kept.json`` beside the store: what was built, and what the next
run needs (the number of the next batch, so a batch drafted again is new, not a restatement
of one a run before wrote). A directory with a store and no record is a build stopped part
way: it is refused, never measured as if it were whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RECORD = "kept.json"


def kept(home: Path, built: dict[str, Any]) -> dict[str, Any] | None:
    """The record of the build of ``built`` in ``home``, or None when there is none yet."""
    record = home / RECORD
    if record.is_file():
        found: dict[str, Any] = json.loads(record.read_text())
        if found.get("built") != built:
            raise SystemExit(f"{home} holds another build ({found.get('built')}), not {built}")
        return found
    if (home / "store").exists():
        raise SystemExit(f"{home} holds a store but no {RECORD}: its build stopped; delete it")
    return None


def keep(home: Path, built: dict[str, Any], **state: Any) -> None:
    """Record that ``home`` holds the whole build of ``built``, with ``state`` for the next run."""
    (home / RECORD).write_text(json.dumps({"built": built, **state}, indent=1) + "\n")
