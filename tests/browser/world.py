"""What the browser tests look at: a user's week with an agent, written through GraphQL as
an agent writes it (chat turns kept first, then drafts quoting them, first names and all),
so the browser shows what the write gate made of them, not rows put in place.

Maya's chats give: people, an employer, places, an allergy, a sister who moved (a memory
superseded by a newer one), a guess of the assistant's the gate leaves for review, and an
invention it refuses. Another user, Bob, holds things Maya must never see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import httpx

INGEST = """mutation($m: [MessageInput!]!) { ingestMessages(messages: $m) { __typename
  ... on InputError { message field } ... on Conflict { message } } }"""
DRAFT = """mutation($d: [DraftInput!]!) { draftMemories(drafts: $d) { __typename
  ... on DraftSuccess { items { outcome memoryId reasons } }
  ... on InputError { message field } } }"""

MAYA_CHATS = {
    "week-1": [
        ("user", "Hi! I'm Maya. I work at Lumen Labs as a data engineer."),
        ("assistant", "Nice to meet you, Maya. What are you working on at Lumen Labs?"),
        ("user", "Mostly the ingestion pipeline. Lumen Labs is based in Berlin."),
        ("user", "My sister Ada lives in Lisbon, she's a translator."),
        ("user", "Ada works for Tidewater Books."),
        ("user", "Also, I'm allergic to peanuts, keep that in mind when you pick restaurants."),
        ("user", "My colleague Ravi Shah runs the data platform team at Lumen Labs."),
        ("assistant", "Got it. Ravi probably knows Ada through the book fair, then."),
    ],
    "week-2": [
        ("user", "Big news: Ada moved to Porto last month."),
        ("user", "Ravi and I are going to the Berlin data meetup on Thursday."),
        (
            "tool",
            "Calendar: 'Berlin Data Meetup', Thursday 18:00, Factory Berlin. "
            "Guests: Maya, Ravi Shah.",
        ),
    ],
}


def _turns(chat: str, turns: list[tuple[str, str]]) -> list[dict[str, Any]]:
    out = []
    for i, (role, text) in enumerate(turns):
        turn = {
            "chat": chat,
            "turn": i,
            "role": role,
            "text": text,
            "timestamp": f"2026-11-{2 + i:02d}T10:00:00Z",
        }
        if role == "tool":
            turn.update(toolName="calendar", toolOutcome="success")
        out.append(turn)
    return out


def _fact(
    title: str,
    chat: str,
    turn: int,
    quote: str,
    claims: list[tuple[str, str, str]],
    entities: list[tuple[str, str]],
    confidence: float = 0.9,
    kind: str = "SEMANTIC",
) -> dict[str, Any]:
    return {
        "kind": kind,
        "title": title,
        "confidence": confidence,
        "entities": [{"name": n, "types": [t]} for n, t in entities],
        "claims": [{"subject": s, "predicate": p, "object": o} for s, p, o in claims],
        "evidence": [{"source": f"chat:{chat}#{turn}", "quote": quote}],
    }


def maya_drafts() -> list[list[dict[str, Any]]]:
    """Batches as an agent sends them, in order (the move supersedes the first home); the
    last is written in review mode (see :func:`maya_held`)."""
    first = [
        _fact(
            "Maya works at Lumen Labs",
            "week-1",
            0,
            "I work at Lumen Labs",
            [("I", "schema:worksFor", "Lumen Labs")],
            [("Lumen Labs", "schema:Organization")],
        ),
        _fact(
            "Lumen Labs is in Berlin",
            "week-1",
            2,
            "Lumen Labs is based in Berlin",
            [("Lumen Labs", "schema:location", "Berlin")],
            [("Lumen Labs", "schema:Organization"), ("Berlin", "schema:City")],
        ),
        _fact(
            "Ada is Maya's sister",
            "week-1",
            3,
            "My sister Ada",
            [("I", "schema:sibling", "Ada")],
            [("Ada", "schema:Person")],
        ),
        _fact(
            "Ada lives in Lisbon",
            "week-1",
            3,
            "Ada lives in Lisbon",
            [("Ada", "schema:homeLocation", "Lisbon")],
            [("Ada", "schema:Person"), ("Lisbon", "schema:City")],
        ),
        _fact(
            "Ada works for Tidewater Books",
            "week-1",
            4,
            "Ada works for Tidewater Books",
            [("Ada", "schema:worksFor", "Tidewater Books")],
            [("Ada", "schema:Person"), ("Tidewater Books", "schema:Organization")],
        ),
        _fact(
            "Ravi Shah is Maya's colleague",
            "week-1",
            6,
            "My colleague Ravi Shah",
            [("I", "schema:colleague", "Ravi Shah")],
            [("Ravi Shah", "schema:Person")],
        ),
        _fact(
            "Ravi works for Lumen Labs",
            "week-1",
            6,
            "Ravi Shah runs the data platform team at Lumen Labs",
            [("Ravi Shah", "schema:worksFor", "Lumen Labs")],
            [("Ravi Shah", "schema:Person"), ("Lumen Labs", "schema:Organization")],
        ),
    ]
    second = [
        _fact(
            "Ada lives in Porto",
            "week-2",
            0,
            "Ada moved to Porto",
            [("Ada", "schema:homeLocation", "Porto")],
            [("Ada", "schema:Person"), ("Porto", "schema:City")],
        ),
        # the assistant's guess: evidence that cannot activate a memory alone
        _fact(
            "Ravi knows Ada",
            "week-1",
            7,
            "Ravi probably knows Ada",
            [("Ravi Shah", "schema:knows", "Ada")],
            [("Ravi Shah", "schema:Person"), ("Ada", "schema:Person")],
            confidence=0.5,
        ),
        # a tool's record the agent reads with little confidence: left for review
        _fact(
            "Ravi is going to the Berlin Data Meetup",
            "week-2",
            2,
            "'Berlin Data Meetup', Thursday 18:00, Factory Berlin. Guests: Maya, Ravi Shah",
            [("Ravi Shah", "schema:attendee", "Berlin Data Meetup")],
            [("Ravi Shah", "schema:Person"), ("Berlin Data Meetup", "schema:Event")],
            confidence=0.5,
        ),
        # an invention: the quote is not in the chat
        _fact(
            "Maya was born in Hamburg",
            "week-1",
            0,
            "I was born in Hamburg",
            [("I", "schema:birthPlace", "Hamburg")],
            [("Hamburg", "schema:City")],
        ),
    ]
    return [first, second]


def maya_held() -> list[dict[str, Any]]:
    """Written after Maya chose review mode: they wait in her inbox."""
    return [
        _fact(
            "Maya is allergic to peanuts",
            "week-1",
            5,
            "I'm allergic to peanuts",
            [("I", "kgm:allergicTo", "peanuts")],
            [("peanuts", "schema:Thing")],
        ),
        _fact(
            "Maya and Ravi go to the Berlin data meetup",
            "week-2",
            1,
            "Ravi and I are going to the Berlin data meetup",
            [("Ravi Shah", "schema:attendee", "Berlin data meetup")],
            [("Ravi Shah", "schema:Person"), ("Berlin data meetup", "schema:Event")],
            kind="EPISODIC",
        )
        | {"occurredAt": "2026-11-05T18:00:00Z"},
    ]


BOB_CHATS = {"bob-1": [("user", "I'm Bob. I work at Quarry Systems in Oslo.")]}


def bob_drafts() -> list[list[dict[str, Any]]]:
    return [
        [
            _fact(
                "Bob works at Quarry Systems",
                "bob-1",
                0,
                "I work at Quarry Systems",
                [("I", "schema:worksFor", "Quarry Systems")],
                [("Quarry Systems", "schema:Organization")],
            ),
            _fact(
                "Quarry Systems is in Oslo",
                "bob-1",
                0,
                "Quarry Systems in Oslo",
                [("Quarry Systems", "schema:location", "Oslo")],
                [("Quarry Systems", "schema:Organization"), ("Oslo", "schema:City")],
            ),
        ]
    ]


@dataclass
class Written:
    """What the gate made of a user's drafts: each draft's title -> its outcome and memory."""

    outcomes: dict[str, str] = field(default_factory=dict)
    memories: dict[str, str] = field(default_factory=dict)
    reasons: dict[str, list[str]] = field(default_factory=dict)


def gql(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    answer = client.post("/graphql", json={"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert not body.get("errors"), body
    data: dict[str, Any] = body["data"]
    return data


def write(
    client: httpx.Client,
    chats: dict[str, list[tuple[str, str]]],
    batches: list[list[dict[str, Any]]],
) -> Written:
    for chat, turns in chats.items():
        out = gql(client, INGEST, m=_turns(chat, turns))["ingestMessages"]
        assert out["__typename"] == "Ingested", out
    written = Written()
    for drafts in batches:
        out = gql(client, DRAFT, d=drafts)["draftMemories"]
        assert out["__typename"] == "DraftSuccess", out
        for draft, item in zip(drafts, out["items"], strict=True):
            written.outcomes[draft["title"]] = item["outcome"]
            written.reasons[draft["title"]] = item["reasons"]
            if item["memoryId"]:
                written.memories[draft["title"]] = item["memoryId"]
    return written


def named(graph: dict[str, Any]) -> dict[str, Any]:
    """GraphQL ``graph`` with its edges' and links' ends as entity IRIs (the answer gives
    indices into ``nodes``) and each edge's predicate as its IRI and label."""
    ids = [n["id"] for n in graph["nodes"]]
    predicates = graph.get("predicates", [])
    edges = [
        {**e, "source": ids[e["source"]], "target": ids[e["target"]]}
        | (
            {
                "predicate": predicates[e["predicate"]]["iri"],
                "label": predicates[e["predicate"]]["label"],
            }
            if "predicate" in e
            else {}
        )
        for e in graph["edges"]
    ]
    links = [{**k, "source": ids[k["source"]], "target": ids[k["target"]]} for k in graph["links"]]
    return {**graph, "edges": edges, "links": links}
