"""A wired process for the change-feed tests: the services the server builds (real on-disk
Oxigraph, real on-disk Kùzu, the feed draining in the background), and what to ask of them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

import kuzu
from rdflib import URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.index import KuzuProjection
from kgmem.index.kuzu.opening import DB_FILE
from kgmem.memory.gate import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.store import TripleStore

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def wired(settings: Settings) -> Services:
    return build_services(settings, clock=FixedClock(NOW))


def remember(services: Services, turn: int, company: str = "Acme", uid: str = "alice") -> URIRef:
    """An active memory, through the real gate: ``uid`` works at ``company``."""
    said = f"I work at {company}."
    msg = services.sources.ingest_message(
        uid, MessageIn(chat="c1", turn=turn, role="user", text=said)
    )
    draft = {
        "kind": "semantic",
        "title": f"Works at {company}",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": company}],
        "entities": [{"name": company, "types": ["schema:Organization"]}],
        "evidence": [{"source": str(msg.iri), "quote": said.rstrip(".")}],
    }
    [item] = services.gate.draft(uid, [draft], account_name=uid.title()).items
    assert item.outcome is Outcome.ACTIVE and isinstance(item.memory, URIRef), item
    return item.memory


def settled(services: Services, uid: str = "alice", timeout: float = 20.0) -> None:
    """Wait for the background drain to empty ``uid``'s outbox (nothing drains it here)."""
    deadline = time.monotonic() + timeout
    while services.feed.pending(uid):
        if time.monotonic() > deadline:
            raise AssertionError(f"the outbox of {uid} was not drained in {timeout} s")
        time.sleep(0.02)


def in_sync(projection: KuzuProjection, uid: str = "alice") -> bool:
    return projection.fingerprint(uid) == projection.store_fingerprint(uid)


def memory_ids(projection: KuzuProjection, uid: str = "alice") -> dict[str, str | None]:
    """Memory id -> status, as the projection holds them."""
    return {m.id: m.status for m in projection.rows(uid).memories}


def mentions(store: TripleStore, iris: Iterable[URIRef]) -> list[object]:
    """Every quad of every graph with a term naming any of ``iris`` (or a node under it)."""
    needles = [str(i) for i in iris]
    return [q for q in store.quads() if any(n in str(t) for t in q for n in needles)]


def cypher(directory: Path, *statements: str) -> None:
    """Change the projection's database behind its back (no process may hold it)."""
    database = kuzu.Database(str(directory / DB_FILE))
    conn = kuzu.Connection(database)
    for statement in statements:
        conn.execute(statement)
    conn.close()
    database.close()
