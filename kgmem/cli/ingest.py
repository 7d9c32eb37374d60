"""``kgmem ingest``: keep a chat, a message log, task runs or a folder of notes as a user's
sources."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, ValidationError
from rdflib import URIRef

from kgmem.cli.common import fail, local_services
from kgmem.cli.progress import shown
from kgmem.config import load_settings
from kgmem.errors import SourceConflict
from kgmem.memory.model import SourceType
from kgmem.memory.source_inputs import IngestResult, MessageIn, NoteIn, TaskIn
from kgmem.memory.sources import SourceStore, source_iri, task_record_iris
from kgmem.progress import Progress, counted
from kgmem.store import check_id

__all__ = ["ingest"]

NOTE_SUFFIXES = frozenset({".md", ".markdown", ".txt"})
_LABELS = {
    SourceType.USER_MESSAGE: "user messages",
    SourceType.AGENT_MESSAGE: "assistant messages",
    SourceType.TOOL_RESULT: "tool results",
    SourceType.EXTERNAL_NOTE: "notes",
    SourceType.TASK_RECORD: "task records",
}


@dataclass(frozen=True)
class _Item:
    where: str  # "chat.json: messages[3]", "log.jsonl:7", "notes/a.md"
    source: MessageIn | NoteIn | TaskIn


@dataclass
class _Parsed:
    items: list[_Item]
    errors: list[str]
    skipped: int = 0


def _field_errors(where: str, exc: ValidationError) -> Iterator[str]:
    for error in exc.errors():
        field = ".".join(str(part) for part in error["loc"]) or "message"
        reason = str(error["msg"]).removeprefix("Value error, ")
        yield f"{where}: {field}: {reason}"


def _model(parsed: _Parsed, where: str, kind: type[BaseModel], data: Any) -> None:
    if not isinstance(data, dict):
        parsed.errors.append(f"{where}: expected a JSON object")
        return
    try:
        source = kind.model_validate(data)
    except ValidationError as exc:
        parsed.errors.extend(_field_errors(where, exc))
        return
    assert isinstance(source, MessageIn | NoteIn | TaskIn)
    parsed.items.append(_Item(where, source))


def _read_text(path: Path, parsed: _Parsed, where: str) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        parsed.errors.append(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})")
    except OSError as exc:
        parsed.errors.append(f"{where}: cannot be read: {exc.strerror or exc}")
    return None


def _parse_chat(path: Path, parsed: _Parsed, progress: Progress | None) -> None:
    text = _read_text(path, parsed, path.name)
    if text is None:
        return
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        parsed.errors.append(f"{path.name}:{exc.lineno}: not JSON: {exc.msg}")
        return
    if isinstance(data, dict) and "task_id" in data:  # one task's run
        _model(parsed, path.name, TaskIn, data)
        return
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        for position, task in enumerate(counted(data["tasks"], "tasks", progress)):
            _model(parsed, f"{path.name}: tasks[{position}]", TaskIn, task)
        return
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        parsed.errors.append(
            f'{path.name}: expected {{"chat": "...", "messages": [...]}}, a task '
            '{"task_id": ...} or {"tasks": [...]}'
        )
        return
    for position, message in enumerate(counted(data["messages"], "messages", progress)):
        where = f"{path.name}: messages[{position}]"
        base = {"chat": data.get("chat"), "turn": position}
        _model(parsed, where, MessageIn, base | message if isinstance(message, dict) else message)


def _parse_jsonl(path: Path, parsed: _Parsed, progress: Progress | None) -> None:
    text = _read_text(path, parsed, path.name)
    if text is None:
        return
    for number, line in enumerate(counted(text.splitlines(), "lines", progress), start=1):
        if not line.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.errors.append(f"{where}: not JSON: {exc.msg}")
            continue
        _model(parsed, where, MessageIn, data)


def _note_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        hidden = any(part.startswith(".") for part in relative.parts)
        if path.is_file() and not hidden and path.suffix.lower() in NOTE_SUFFIXES:
            yield path


def _parse_notes(folder: Path, parsed: _Parsed, progress: Progress | None) -> None:
    for path in counted(list(_note_files(folder)), "files", progress):
        relative = path.relative_to(folder).as_posix()
        text = _read_text(path, parsed, relative)
        if text is None:
            continue
        if not text.strip():
            parsed.skipped += 1
            continue
        _model(parsed, relative, NoteIn, {"path": relative, "text": text})


def _parse(path: Path, progress: Progress | None) -> _Parsed:
    parsed = _Parsed([], [])
    if path.is_dir():
        _parse_notes(path, parsed, progress)
    elif path.suffix.lower() == ".jsonl":
        _parse_jsonl(path, parsed, progress)
    elif path.suffix.lower() == ".json":
        _parse_chat(path, parsed, progress)
    else:
        parsed.errors.append(f"{path.name}: unknown format (expected .json, .jsonl or a folder)")
    return parsed


def _store_all(
    sources: SourceStore, uid: str, items: list[_Item], progress: Progress | None
) -> list[IngestResult]:
    messages = [i.source for i in items if isinstance(i.source, MessageIn)]
    notes = [i.source for i in items if isinstance(i.source, NoteIn)]
    tasks = [i.source for i in items if isinstance(i.source, TaskIn)]
    results = list(sources.ingest_messages(uid, messages, progress)) if messages else []
    results += list(sources.ingest_notes(uid, notes, progress)) if notes else []
    for task in counted(tasks, "tasks", progress):  # each task in one commit of its own
        results += sources.ingest_task(uid, task)
    return results


def _where(items: list[_Item], iri: str, uid: str) -> str:
    """The file and line or item of the source at ``iri``."""
    return next((i.where for i in items if iri in map(str, _iris(uid, i.source))), iri)


def _iris(uid: str, source: MessageIn | NoteIn | TaskIn) -> list[URIRef]:
    if isinstance(source, TaskIn):
        return task_record_iris(uid, source)
    return [source_iri(uid, source)]


def _summary(results: list[IngestResult], skipped: int) -> list[str]:
    counts = Counter((r.type, r.status.value) for r in results)
    lines = []
    for source_type, label in _LABELS.items():
        created, unchanged = counts[(source_type, "created")], counts[(source_type, "unchanged")]
        updated = counts[(source_type, "updated")]
        if created or unchanged or updated:
            more = f", {updated} updated (a result reported)" if updated else ""
            lines.append(f"  {label}: {created} created, {unchanged} unchanged{more}")
    if skipped:
        lines.append(f"  skipped: {skipped} empty file(s)")
    return lines or ["  nothing to ingest"]


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--user", "uid", required=True, help="The user whose sources these are.")
def ingest(path: Path, uid: str) -> None:
    """Keep PATH as USER's sources: a chat, a message log, or a folder of notes.

    \b
    PATH is one of:
      chat.json   {"chat": "c1", "messages": [{"role": "user", "text": "...",
                   "timestamp": "2025-03-01T10:00:00Z"}, ...]}
                  turns are numbered by position unless a message gives "turn"
      log.jsonl   one message per line, each with "chat" and "turn"
      task.json   {"task_id": "t1", "text": "...", "states": [{"state": "started",
                   "at": "..."}, {"state": "completed", "at": "..."}], "result": "..."},
                  or {"tasks": [...]}: a task run as the host reports it (states: created,
                  started, completed, failed, cancelled; the result goes with the latest
                  completed or failed one); sending it again with more states appends them
      a folder    every .md/.markdown/.txt file below it (hidden folders skipped) is an
                  external note; its path relative to the folder names it, and the SHA-256
                  of its content is its revision
    \b
    Message fields: chat, turn, role (user, assistant, tool), text, timestamp (ISO 8601,
    default now, naive times are UTC), tool_name, tool_outcome (success or failure; required
    for role tool), recall_tool (true for memory_search and the like), speaker,
    agent_reported (true when an agent reported the message second-hand).

    Ingesting is idempotent: the same input again changes nothing. It is all-or-nothing:
    any invalid item, or one that differs from what is stored under its chat and turn, is
    reported with its file and line or item, and nothing is written (of several tasks, each
    is kept in a commit of its own, after the messages and notes).
    """
    check_id(uid, "user id")
    with shown() as display:
        parsed = _parse(path, display.lane("read"))
        for error in parsed.errors:
            click.echo(f"kgmem: error: {error}", err=True)
        if parsed.errors:
            fail(f"{len(parsed.errors)} invalid item(s) in {path.name}; nothing was ingested")
        settings = load_settings()
        # through the services, as the server ingests: each commit then carries its outbox
        # entry and moves the user's stamp, so the next process finds the projections level
        # (a bare store wrote the sources unseen: the next command found "drift")
        with local_services(settings, "ingest", create=True) as services:
            try:
                results = _store_all(services.sources, uid, parsed.items, display.lane("store"))
            except SourceConflict as exc:
                where = _where(parsed.items, exc.source, uid)
                fail(f"{where}: {exc.reason}; nothing was ingested")
    click.echo(f"ingested {path.name} for {uid}")
    for line in _summary(results, parsed.skipped):
        click.echo(line)
