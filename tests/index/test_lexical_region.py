"""A loaded shard's documents stay in its file, read where they lie when a search needs them."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from kgmem.index.lexical.docs import FIELD_WEIGHTS, LexicalDoc, pack
from kgmem.index.lexical.region import Opened, Region
from kgmem.index.lexical.saved import ShardFiles
from kgmem.index.lexical.shard import Shard

WEIGHTS = dict(FIELD_WEIGHTS)


def doc(n: int, text: str) -> LexicalDoc:
    return LexicalDoc(f"urn:d{n}", "memory", text, "urn:g", pack((("title", text),)))


def shard(texts: list[str]) -> Shard:
    made = Shard(WEIGHTS)
    for n, text in enumerate(texts):
        made.add(doc(n, text))
    made.calibrate(force=True)
    return made


def opened(fd: int) -> str | None:
    """What descriptor ``fd`` of this process is open on (None: it is closed)."""
    try:
        return str(Path(f"/proc/self/fd/{fd}").readlink())
    except OSError:
        return None


def test_a_loaded_shard_reads_its_documents_from_the_file_it_was_loaded_from(
    tmp_path: Path,
) -> None:
    """The documents are not in memory after a load; a save that replaces the file (by a
    rename) leaves the loaded shard reading the file it was loaded from; the file is closed
    when the shard is let go."""
    files = ShardFiles(tmp_path)
    first = [f"harbor lantern number {n}" for n in range(300)]
    files.write("alice", files.dump(shard(first)), 1, WEIGHTS, len(first))
    loaded = files.load("alice", 1, WEIGHTS)
    assert loaded is not None and isinstance(loaded.docs._block, Region)
    fd = loaded.docs._block._opened.fd
    assert opened(fd) == str(files.path("alice"))
    files.write("alice", files.dump(shard(["meadow violin"] * 300)), 2, WEIGHTS, 300)
    assert [loaded.docs[f"urn:d{n}"].title for n in range(300)] == first
    assert not loaded.docs.damaged
    again = files.load("alice", 2, WEIGHTS)
    assert again is not None and again.docs["urn:d7"].title == "meadow violin"
    assert opened(fd) == f"{files.path('alice')} (deleted)"  # the file it was loaded from
    del loaded, again
    gc.collect()
    # closed (another thread may have opened something else under the same number since)
    assert not (opened(fd) or "").startswith(str(files.path("alice")))


def test_a_region_reads_only_inside_itself(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"0123456789")
    region = Region(Opened(os.open(path, os.O_RDONLY)), 2, 6)
    assert len(region) == 6 and region[0:6] == b"234567" and region[4:100] == b"67"
    assert region[5:2] == b"" and region.part(1, 3)[0:3] == b"345"
    with pytest.raises(ValueError):
        region.part(4, 3)
    with pytest.raises(ValueError):
        region[0:6:2]


def test_a_document_the_file_cannot_give_is_left_out_as_damage(tmp_path: Path) -> None:
    """The disk fails under a loaded shard's file (here: its descriptor is gone): the
    documents already read stay, the others are left out and the shard says it is damaged
    (its user is rebuilt from the store), and nothing raises into the search."""
    files = ShardFiles(tmp_path)
    files.write("alice", files.dump(shard(["harbor", "lantern", "meadow"])), 1, WEIGHTS, 3)
    loaded = files.load("alice", 1, WEIGHTS)
    assert loaded is not None and loaded.docs["urn:d0"].title == "harbor"
    block = loaded.docs._block
    assert isinstance(block, Region)
    block._opened.close()
    assert loaded.docs.get("urn:d1") is None and loaded.docs.damaged
    assert loaded.docs["urn:d0"].title == "harbor"  # read before: held
