"""Opening a projection's Kùzu database without trusting it.

A damaged Kùzu file can crash the process that opens it (a segmentation fault, not an
exception), so an existing database is first opened by a short-lived probe process that
reads every column of every table. When the probe fails, or the database is of another
schema version, the directory is moved aside (``<dir>.broken-N``) and a new database is
created; the caller rebuilds it from the store. A database another process holds is never
moved: that is :class:`~kgmem.errors.StoreLocked`.

The probe takes a quarter of a second (a process of its own), which a command that opens
the store pays every time; so a process that closes the database cleanly records the size
and modification time of its files (``closed-cleanly``), and the next open skips the probe
when they are still those. Every open removes the record first, so a process that dies
with the database open leaves none, and the next open probes.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any, cast

import kuzu

from kgmem.errors import StoreCorrupt, StoreLocked
from kgmem.index.kuzu.schema import SCHEMA_VERSION, ddl

__all__ = ["CLEAN", "DB_FILE", "Opened", "mark_closed", "open_database"]

DB_FILE = "graph.kuzu"
CLEAN = "closed-cleanly"
_PROBE_TIMEOUT = 300
_LOCKED, _BROKEN = 3, 4
# Runs in the probe process: only kuzu is imported, nothing of kgmem.
_PROBE = f"""
import sys, kuzu
try:
    conn = kuzu.Connection(kuzu.Database(sys.argv[1]))
    for _, name, kind, *_ in conn.execute("CALL show_tables() RETURN *").get_all():
        info = conn.execute(f"CALL table_info('{{name}}') RETURN *").get_all()
        columns = ", ".join(f"count(n.`{{row[1]}}`)" for row in info) or "count(*)"
        pattern = f"(n:`{{name}}`)" if kind == "NODE" else f"()-[n:`{{name}}`]->()"
        conn.execute(f"MATCH {{pattern}} RETURN count(*), {{columns}}").get_all()
except Exception as exc:
    print(exc, file=sys.stderr)
    sys.exit({_LOCKED} if "lock" in str(exc).lower() else {_BROKEN})
"""


@dataclass(frozen=True)
class Opened:
    database: kuzu.Database
    created: bool  # new: nothing of the store is in it yet
    reason: str | None = None  # why an existing database was replaced
    moved_to: Path | None = None  # where it went (None: deleted, or nothing to move)


def _is_lock(message: str) -> bool:
    return "lock" in message.lower()


def _files(directory: Path) -> dict[str, list[int]]:
    """Size and modification time of each file of the database in ``directory``."""
    found = {}
    for path in sorted(directory.iterdir()):
        if path.name != CLEAN and path.is_file():
            status = path.stat()
            found[path.name] = [status.st_size, status.st_mtime_ns]
    return found


def mark_closed(directory: Path) -> None:
    """Record that the database in ``directory`` was just closed cleanly (see above)."""
    with contextlib.suppress(OSError):
        (directory / CLEAN).write_text(json.dumps(_files(directory)), encoding="utf-8")


def _closed_cleanly(directory: Path) -> bool:
    """Whether the files are as a clean close left them; the record goes either way."""
    record = directory / CLEAN
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    finally:
        with contextlib.suppress(OSError):
            record.unlink()
    return isinstance(kept, dict) and bool(kept) and kept == _files(directory)


def _probe(directory: Path) -> str | None:
    """Why the database in ``directory`` is unusable, or None (also when there is none)."""
    if not directory.exists():
        return None
    if not directory.is_dir():
        return "not a directory"
    path = directory / DB_FILE
    if _closed_cleanly(directory) or not path.exists():
        return None
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, str(path)],
            capture_output=True,
            text=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"reading it took over {_PROBE_TIMEOUT} s"
    if done.returncode == _LOCKED:
        raise StoreLocked(directory)
    if done.returncode == 0:
        return None
    detail = (done.stderr.strip().splitlines() or [""])[-1]
    if done.returncode < 0:
        return f"reading it crashed the reader (signal {-done.returncode})"
    return f"unreadable: {detail}" if detail else f"unreadable (exit {done.returncode})"


def _move_aside(directory: Path) -> Path | None:
    if not directory.exists():
        return None
    target = next(
        p
        for n in count(1)
        if not (p := directory.with_name(f"{directory.name}.broken-{n}")).exists()
    )
    try:
        directory.rename(target)
    except OSError:
        if directory.is_dir():
            shutil.rmtree(directory)
        else:
            directory.unlink()
        return None
    return target


def _all(conn: kuzu.Connection, cypher: str) -> list[list[Any]]:
    result = conn.execute(cypher)
    assert not isinstance(result, list)
    return cast(list[list[Any]], result.get_all())


def _schema_problem(database: kuzu.Database) -> str | None:
    """Why an opened database cannot serve this version (None: it can, or it is empty)."""
    conn = kuzu.Connection(database)
    try:
        tables = {row[1] for row in _all(conn, "CALL show_tables() RETURN *")}
        if not tables:
            return None
        if "Meta" not in tables:
            return "it has no schema version"
        found = _all(conn, "MATCH (m:Meta {key: 'schema'}) RETURN m.value")
        version = found[0][0] if found else None
        if version != SCHEMA_VERSION:
            return f"its schema version is {version}, this kgmem writes {SCHEMA_VERSION}"
        return None
    finally:
        conn.close()


def _create_schema(database: kuzu.Database) -> None:
    conn = kuzu.Connection(database)
    try:
        for statement in ddl():
            conn.execute(statement)
        conn.execute("MERGE (m:Meta {key: 'schema'}) SET m.value = $v", {"v": SCHEMA_VERSION})
    finally:
        conn.close()


def _open(directory: Path, pool: int) -> tuple[kuzu.Database | None, bool, str | None]:
    """(database, newly created?, why it cannot be used as is)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DB_FILE
    created = not path.exists()
    try:
        database = kuzu.Database(str(path), buffer_pool_size=pool)
    except RuntimeError as exc:
        if _is_lock(str(exc)):
            raise StoreLocked(directory) from exc
        return None, created, f"unreadable: {exc}"
    try:
        problem = _schema_problem(database)
    except RuntimeError as exc:
        problem = f"unreadable: {exc}"
    return database, created, problem


def open_database(directory: Path, buffer_megabytes: int = 0) -> Opened:
    """Open (or create) the database in ``directory``, replacing one that cannot be used;
    Kùzu's buffer pool holds at most ``buffer_megabytes`` (0: Kùzu's default, 80% of the
    machine's memory, which it fills with every page it reads)."""
    pool = buffer_megabytes * 2**20
    reason = _probe(directory)
    moved = _move_aside(directory) if reason else None
    database, created, problem = _open(directory, pool)
    if problem is not None:
        if database is not None:
            with contextlib.suppress(RuntimeError):
                database.close()
        reason, moved = problem, _move_aside(directory)
        database, created, problem = _open(directory, pool)
    if database is None or problem is not None:
        raise StoreCorrupt(directory, problem or "cannot be opened")
    _create_schema(database)
    return Opened(database, created or reason is not None, reason, moved)
