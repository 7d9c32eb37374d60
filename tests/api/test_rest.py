"""The REST surface against a real uvicorn with httpx: each route's stored effect, and
tenant isolation (another user's ids, search, review and decisions give 404 or nothing)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from kgmem.memory import WriteMode
from tests.api.support import ApiServer, api_server


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "rest-home") as running:
        yield running


def said(client: httpx.Client, chat: str, *texts: str) -> None:
    """The user said ``texts`` in ``chat``, turn by turn."""
    messages = [{"chat": chat, "turn": i, "role": "user", "text": t} for i, t in enumerate(texts)]
    answer = client.post("/api/messages", json={"messages": messages})
    assert answer.status_code == 200, answer.text


def grounded(title: str, chat: str, turn: int, quote_: str, obj: str) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": title,
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "kgm:allergicTo", "object": obj}],
        "evidence": [{"source": f"chat:{chat}#{turn}", "quote": quote_}],
    }


def drafted(client: httpx.Client, *drafts: dict[str, Any]) -> list[dict[str, Any]]:
    answer = client.post("/api/memories/batch-draft", json={"drafts": list(drafts)})
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def allergy(client: httpx.Client, chat: str, food: str) -> str:
    """A grounded, active memory that the user is allergic to ``food``; its id."""
    text = f"I am allergic to {food}"
    said(client, chat, text)
    [item] = drafted(client, grounded(f"Allergic to {food}", chat, 0, text, food))
    assert item["outcome"] == "active", item
    memory: str = item["memory"]
    return memory


def search_ids(
    client: httpx.Client, q: str, kinds: tuple[str, ...] = ("memory",), **params: Any
) -> list[str]:
    """The ids of the hits of ``kinds`` (memories; pages and notes are hits too)."""
    answer = client.get("/api/search", params={"q": q, **params})
    assert answer.status_code == 200, answer.text
    return [hit["id"] for hit in answer.json()["results"] if hit["kind"] in kinds]


# -- each route's stored effect ----------------------------------------------------------


def test_draft_then_list_and_get_show_it_by_short_id_and_encoded_iri(rest: ApiServer) -> None:
    with rest.client("u-draft") as c:
        memory = allergy(c, "d1", "peanuts")
        listed = c.get("/api/memories", params={"kind": "semantic", "status": "active"}).json()
        assert [m["id"] for m in listed["memories"]] == [memory]
        assert c.get("/api/memories", params={"kind": "episodic"}).json()["memories"] == []
        short = memory.rsplit("/", 1)[1]
        by_short = c.get(f"/api/memories/{short}")
        by_iri = c.get("/api/memories/" + quote(memory, safe=""))
        assert by_short.status_code == by_iri.status_code == 200
        assert by_short.json() == by_iri.json()
        shown = by_short.json()
        assert shown["title"] == "Allergic to peanuts" and shown["status"] == "active"
        assert shown["evidence"][0]["quote"] == "I am allergic to peanuts"
        assert [d["action"] for d in shown["decisions"]] == ["create"]


def test_a_refused_draft_is_one_decision_in_the_feed_and_no_memory(rest: ApiServer) -> None:
    with rest.client("u-refuse") as c:
        said(c, "r1", "I am allergic to peanuts")
        invented = grounded("Allergic to shellfish", "r1", 0, "I am allergic to shellfish", "x")
        [item] = drafted(c, invented)
        assert item["outcome"] == "refused" and item["memory"] is None
        [decision] = c.get("/api/decisions", params={"limit": 1000}).json()["decisions"]
        assert decision["id"] == item["decision"]
        assert decision["action"] == "refuse" and decision["target"] is None
        assert "does not occur verbatim" in decision["reason"]
        assert decision["reason"] == "; ".join(item["reasons"])
        assert decision["draft"]["title"] == "Allergic to shellfish"
        assert decision["draft"]["kind"] == "semantic" and len(decision["draft"]["hash"]) == 64
        assert c.get("/api/memories").json()["memories"] == []
        assert c.get("/api/review").json()["memories"] == []
        assert search_ids(c, "shellfish") == []


def test_approving_a_memory_waiting_for_vocabulary_is_refused_naming_it(rest: ApiServer) -> None:
    with rest.client("u-terms") as c:
        said(c, "t1", "I climb at Crux")
        draft = grounded("Climbs at Crux", "t1", 0, "I climb at Crux", "Crux")
        draft["claims"][0]["predicate"] = "kgm:climbsAt"
        [item] = drafted(c, draft)
        assert item["outcome"] == "pending", item
        short = item["memory"].rsplit("/", 1)[1]
        answer = c.post(f"/api/review/{short}/approve")
        assert answer.status_code == 409, answer.text
        error = answer.json()["error"]
        assert error["code"] == "conflict"
        assert "https://w3id.org/kgmem/ns#climbsAt" in error["message"]
        assert c.get(f"/api/memories/{short}").json()["status"] == "pending"


def test_messages_are_kept_once_and_a_changed_turn_is_refused(rest: ApiServer) -> None:
    with rest.client("u-msg") as c:
        turn = {"chat": "m1", "turn": 0, "role": "user", "text": "I live in Lyon"}
        first = c.post("/api/messages", json={"messages": [turn]}).json()["messages"]
        again = c.post("/api/messages", json={"messages": [turn]}).json()["messages"]
        assert (first[0]["status"], again[0]["status"]) == ("created", "unchanged")
        before = rest.snapshot()
        changed = c.post("/api/messages", json={"messages": [{**turn, "text": "I live in Nice"}]})
        assert changed.status_code == 409 and changed.json()["error"]["code"] == "conflict"
        assert rest.snapshot() == before


def test_remember_keeps_a_short_note(rest: ApiServer) -> None:
    with rest.client("u-note") as c:
        answer = c.post("/api/remember", json={"text": "prefers green tea", "chat": "n1"})
        assert answer.status_code == 200, answer.text
        note = answer.json()["id"]
    stored = rest.app.state.services.sources.get("u-note", [note])
    assert stored[note].text == "prefers green tea"


def test_search_filters_by_kind_and_cite_changes_ranking(rest: ApiServer) -> None:
    with rest.client("u-search") as c:
        peanuts = allergy(c, "s1", "peanuts")
        shellfish = allergy(c, "s2", "shellfish")
        assert set(search_ids(c, "allergic")) == {peanuts, shellfish}
        assert search_ids(c, "allergic", kind="episodic") == []
        assert search_ids(c, "allergic", kind=["semantic", "page"], k=1) in ([peanuts], [shellfish])

        def scores() -> dict[str, float]:
            hits = c.get("/api/search", params={"q": "allergic"}).json()["results"]
            return {h["id"]: h["score"] for h in hits}

        before = scores()
        below = min(before, key=lambda i: before[i])
        for _ in range(3):
            cited = c.post("/api/cite", json={"id": below.rsplit("/", 1)[1]})
            assert cited.status_code == 200, cited.text
        assert cited.json()["use_count"] == 3
        after = scores()
        assert after[below] > before[below]
        assert search_ids(c, "allergic")[0] == below


def test_context_and_outcomes_change_the_memory(rest: ApiServer) -> None:
    with rest.client("u-ctx") as c:
        memory = allergy(c, "x1", "sesame")
        packet = c.post("/api/context", json={"task": "cook with sesame", "intent": "plan"})
        assert packet.status_code == 200, packet.text
        assert [f["id"] for f in packet.json()["facts"]] == [memory]
        before = c.get(f"/api/memories/{quote(memory, safe='')}").json()["confidence"]
        done = c.post("/api/outcomes", json={"items": [memory], "verdict": "helpful"})
        assert done.status_code == 200, done.text
        after = c.get(f"/api/memories/{quote(memory, safe='')}").json()
        assert after["confidence"] > before
        gone = c.post("/api/outcomes", json={"items": [memory], "verdict": "outdated"})
        assert gone.status_code == 200, gone.text
        assert c.get(f"/api/memories/{quote(memory, safe='')}").json()["status"] == "outdated"
        assert search_ids(c, "sesame") == []


def test_lifecycle_actions_revert_and_forget(rest: ApiServer) -> None:
    with rest.client("u-life") as c:
        memory = allergy(c, "l1", "kiwi")
        url = f"/api/memories/{memory.rsplit('/', 1)[1]}"

        def act(action: str, **body: Any) -> dict[str, Any]:
            answer = c.post(f"{url}/{action}", json=body or None)
            assert answer.status_code == 200, answer.text
            out: dict[str, Any] = answer.json()
            return out

        assert act("pin")["pinned"] is True and c.get(url).json()["pinned"] is True
        assert act("unpin")["pinned"] is False
        assert act("archive")["status"] == "archived"
        assert search_ids(c, "kiwi") == []
        assert c.post(f"{url}/archive").status_code == 409  # already archived
        assert act("restore")["status"] == "active" and search_ids(c, "kiwi") == [memory]
        strength = c.get(url).json()["strength"]
        assert act("rate", delta=1)["strength"] > strength
        assert act("revert")["strength"] == pytest.approx(strength)  # undid the rating
        feed = c.get("/api/decisions").json()["decisions"]
        assert [d["action"] for d in feed][:3] == ["revert", "rate", "restore"]
        assert feed[1]["reverted_by"] == feed[0]["id"]
        assert act("forget")["decision"].startswith("urn:kgmem:forgotten:")
        assert c.get(url).status_code == 404
        # nothing else is said of kiwi: its page went with the memory, in the same call
        assert search_ids(c, "kiwi", kinds=("memory", "page", "note")) == []
        assert c.get("/api/memories").json()["memories"] == []


def test_review_inbox_approve_and_reject(rest: ApiServer) -> None:
    rest.app.state.services.gate.set_mode("u-review", WriteMode.REVIEW)
    with rest.client("u-review") as c:
        said(c, "r1", "I am allergic to milk", "I am allergic to eggs")
        items = drafted(
            c,
            grounded("Allergic to milk", "r1", 0, "I am allergic to milk", "milk"),
            grounded("Allergic to eggs", "r1", 1, "I am allergic to eggs", "eggs"),
        )
        assert [i["outcome"] for i in items] == ["pending", "pending"]
        milk, eggs = (i["memory"] for i in items)
        inbox = c.get("/api/review").json()["memories"]
        assert {m["id"] for m in inbox} == {milk, eggs}
        assert c.post(f"/api/review/{quote(milk, safe='')}/approve").json()["status"] == "active"
        assert c.post(f"/api/review/{eggs.rsplit('/', 1)[1]}/reject").json()["status"] == (
            "archived"
        )
        assert c.get("/api/review").json()["memories"] == []
        again = c.post(f"/api/review/{quote(milk, safe='')}/approve")
        assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
        assert search_ids(c, "allergic") == [milk]


# -- tenant isolation --------------------------------------------------------------------


def test_another_users_memory_is_a_404_by_every_route(rest: ApiServer) -> None:
    with rest.client("bob") as bob, rest.client("alice") as alice:
        theirs = allergy(bob, "b1", "walnuts")
        allergy(alice, "a1", "almonds")
        before = rest.snapshot()
        short = theirs.rsplit("/", 1)[1]
        for ref in (short, quote(theirs, safe="")):
            assert alice.get(f"/api/memories/{ref}").status_code == 404
            for action in ("pin", "archive", "forget", "revert"):
                answer = alice.post(f"/api/memories/{ref}/{action}")
                assert answer.status_code == 404, (action, answer.text)
                assert "walnuts" not in answer.text
            assert alice.post(f"/api/memories/{ref}/rate", json={"delta": 1}).status_code == 404
            assert alice.post(f"/api/review/{ref}/approve").status_code == 404
        assert alice.post("/api/cite", json={"id": theirs}).status_code == 404
        outcome = alice.post("/api/outcomes", json={"items": [theirs], "verdict": "misleading"})
        assert outcome.status_code == 404
        assert rest.snapshot() == before  # nothing of bob's (or anyone's) changed
        assert search_ids(alice, "walnuts") == []
        assert search_ids(alice, "walnuts", entity="walnuts") == []
        assert theirs not in search_ids(alice, "allergic", status=["active", "archived"])
        packet = alice.post("/api/context", json={"task": "walnuts", "intent": "answer"}).json()
        assert (packet["facts"], packet["procedure"], packet["episodes"]) == ([], None, [])
        listed = alice.get("/api/memories").json()["memories"]
        assert theirs not in {m["id"] for m in listed}
        feed = alice.get("/api/decisions").json()["decisions"]
        assert feed and all("/user/alice/" in d["target"] for d in feed)
        assert search_ids(bob, "walnuts") == [theirs]  # bob still has it


def test_another_users_review_inbox_and_sources_stay_theirs(rest: ApiServer) -> None:
    rest.app.state.services.gate.set_mode("carol", WriteMode.REVIEW)
    with rest.client("carol") as carol, rest.client("dave") as dave:
        said(carol, "c1", "I am allergic to celery")
        [item] = drafted(carol, grounded("Celery", "c1", 0, "I am allergic to celery", "celery"))
        pending = item["memory"]
        assert dave.get("/api/review").json()["memories"] == []
        assert dave.post(f"/api/review/{quote(pending, safe='')}/reject").status_code == 404
        # dave cannot ground a draft on carol's message, by chat reference or by IRI
        source = rest.app.state.services.sources.get("carol", ["chat:c1#0"])["chat:c1#0"].iri
        for ref in ("chat:c1#0", str(source)):
            draft = grounded("Celery", "c1", 0, "I am allergic to celery", "celery")
            draft["evidence"][0]["source"] = ref
            [refused] = drafted(dave, draft)
            assert refused["outcome"] == "refused" and refused["memory"] is None
        assert dave.get("/api/memories").json()["memories"] == []
        assert carol.get("/api/review").json()["memories"][0]["id"] == pending
