"""``--home`` of ``benchmarks/batch_draft.py`` and ``scale.py`` (``benchmarks/kept.py``): a
store built once is measured again without its build, with batches it has not seen, and a
build that stopped part way is never measured as if it were whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import load_benchmark

batch_draft = load_benchmark("batch_draft")


def test_a_kept_store_is_built_once_and_each_run_drafts_new_batches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "kept"
    first = batch_draft.run(400, 1, None, home=home)
    assert "built 400 memories" in capsys.readouterr().out
    record = json.loads((home / "kept.json").read_text())
    assert record == {"built": {"memories": 400}, "batches": 3}  # 2 warm-up, 1 timed
    again = batch_draft.run(400, 1, None, home=home)
    assert "built" not in capsys.readouterr().out  # measured as kept
    assert json.loads((home / "kept.json").read_text())["batches"] == 6
    # batches 3-5 are new: the same mix of creates, discards and merges as batches 0-2; the
    # same batches drafted again would all be restatements
    assert again[4] == first[4] and first[4]["active"] == 15, first[4]


def test_a_store_whose_build_stopped_or_another_build_is_refused(tmp_path: Path) -> None:
    stopped = tmp_path / "stopped"
    (stopped / "store").mkdir(parents=True)
    with pytest.raises(SystemExit, match="build stopped"):
        batch_draft.run(400, 1, None, home=stopped)
    other = tmp_path / "other"
    other.mkdir()
    (other / "kept.json").write_text(json.dumps({"built": {"memories": 400}, "batches": 3}))
    with pytest.raises(SystemExit, match="another build"):
        batch_draft.run(1000, 1, None, home=other)
