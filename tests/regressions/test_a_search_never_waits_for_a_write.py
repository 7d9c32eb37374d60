"""Regression (#22, reads under write load): with eight clients mixing writes and reads, a
search waited for other clients' write batches (p50 358 ms, p95 729 ms against 5.9 / 8.4 ms
alone): before reading, it brought the search index up to date with every commit in the
outbox, doing the writers' work behind their locks. Now each commit brings the search index
up to date before it is acknowledged, so a search takes none of the writers' locks, yet
reads every write acknowledged before it (a writer's next search finds its write).

The writers' locks are held here as a write under way holds them; the search must answer
meanwhile. ``benchmarks/load.py`` measures the same under real load."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from starlette.testclient import TestClient

from kgmem.api.services import Services
from kgmem.config import Settings


@pytest.fixture
def served(client: TestClient, settings: Settings) -> Iterator[tuple[TestClient, Services]]:
    key = (settings.home / "api-key").read_text().strip()
    client.headers["Authorization"] = f"Bearer {key}"
    yield client, client.app.state.services  # type: ignore[attr-defined]


def _found(client: TestClient, query: str) -> list[str]:
    answer = client.get("/api/search", params={"q": query})
    assert answer.status_code == 200, answer.text
    return [hit["id"] for hit in answer.json()["results"]]


def _ingest(client: TestClient, chat: str, texts: list[str]) -> None:
    turns = [{"chat": chat, "turn": n, "role": "user", "text": t} for n, t in enumerate(texts)]
    assert client.post("/api/messages", json={"messages": turns}).status_code == 200


def _draft(client: TestClient, chat: str, word: str) -> dict[str, object]:
    draft = {
        "kind": "semantic",
        "title": f"Enjoys {word}",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "kgm:likes", "object": word}],
        "evidence": [{"source": f"chat:{chat}#0", "quote": f"I enjoy {word}"}],
    }
    answer = client.post("/api/memories/batch-draft", json={"drafts": [draft]})
    assert answer.status_code == 200, answer.text
    (item,) = answer.json()["items"]
    return dict(item)


def test_a_search_answers_while_a_write_holds_the_writers_locks(
    served: tuple[TestClient, Services],
) -> None:
    client, services = served
    _ingest(client, "c1", ["I enjoy kayaking on the lake."])
    made = _draft(client, "c1", "kayaking")
    assert made["outcome"] == "active"
    assert _found(client, "kayaking")[:1] == [made["memory"]]  # the writer reads its write

    answers: list[list[str]] = []
    assert services.settle()
    services.feed.stop()  # no background drain may hold one of the locks taken below
    with ExitStack() as held:  # what a write under way holds: the index refresh, the store
        for lock in services.feed._refreshing:
            held.enter_context(lock)
        held.enter_context(services.lexical._refreshing)
        held.enter_context(services.store._lock)  # type: ignore[attr-defined]
        searching = threading.Thread(target=lambda: answers.append(_found(client, "kayaking")))
        searching.start()
        searching.join(timeout=20)
        assert not searching.is_alive(), "the search waited for the writers' locks"
    assert len(answers) == 1 and answers[0][:1] == [made["memory"]]  # then its pages


def test_every_write_acknowledged_before_a_search_is_found_by_it(
    served: tuple[TestClient, Services],
) -> None:
    client, services = served
    services.feed.stop()  # no background drain: only the commits themselves can index
    _ingest(client, "c2", ["I enjoy origami with my nephew."])
    made = _draft(client, "c2", "origami")
    assert _found(client, "origami")[:1] == [made["memory"]]
    assert services.feed.pending("me") > 0  # the graph projection has not had them yet
