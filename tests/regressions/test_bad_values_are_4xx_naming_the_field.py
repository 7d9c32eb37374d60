"""#22: inputs that answered 500 now answer 4xx naming the field, on every surface that
takes them: a reported source with role ``tool`` but no outcome, a lone UTF-16 surrogate
(JSON's ``"\\ud800"``), a time that leaves the calendar when turned into UTC
(``0001-01-01T00:00:00+14:00``). And what a model really sends, a date alone for
``occurred_at``, is kept as that day, in UTC."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.store import Changeset, Quad, UserGraphs
from kgmem.vocab import KGM
from tests.api.test_sparql import World, running_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home")) as running:
        yield running


def _post(world: World, path: str, body: bytes | dict[str, object]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {world.alice}", "Content-Type": "application/json"}
    if isinstance(body, dict):
        return httpx.post(world.url + path, json=body, headers=headers, timeout=30)
    return httpx.post(world.url + path, content=body, headers=headers, timeout=30)


DRAFT = "/api/memories/batch-draft"


def _search(world: World, token: str, **params: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{world.url}/api/search", params=params, headers=headers, timeout=30)


def _draft(**extra: object) -> dict[str, object]:
    return {"drafts": [{"kind": "semantic", "title": "Alice's oven", **extra}]}


def _field(answer: httpx.Response) -> str:
    assert 400 <= answer.status_code < 500, answer.text
    field = answer.json()["error"]["field"]
    assert isinstance(field, str)
    return field


def test_a_reported_tool_output_names_its_outcome(world: World) -> None:
    refused = _post(world, DRAFT, _draft(reported_source={"role": "tool", "text": "200 OK"}))
    assert "tool_outcome" in _field(refused)
    assert "required when role is 'tool'" in refused.json()["error"]["message"]
    kept = _post(
        world,
        DRAFT,
        _draft(
            reported_source={
                "role": "tool",
                "text": "the oven thermometer reads 180 C",
                "tool_name": "thermometer",
                "tool_outcome": "success",
            }
        ),
    )
    assert kept.status_code < 500, kept.text


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/remember", b'{"text": "I like \\ud800x tea"}', "text"),
        ("/api/remember", b'{"text": "tea", "tags": ["ok", "\\udfff"]}', "tags[1]"),
        (DRAFT, b'{"kind": "semantic", "title": "\\ud83d"}', "title"),
        ("/api/context", b'{"task": "\\ud800"}', "task"),
        ("/api/remember", b'{"\\ud800": "x", "text": "tea"}', "\\ud800"),
    ],
)
def test_a_lone_surrogate_is_refused_naming_its_field(
    world: World, path: str, body: bytes, field: str
) -> None:
    answer = _post(world, path, body)
    assert _field(answer) == field
    assert "surrogate" in answer.json()["error"]["message"]


def test_a_lone_surrogate_in_graphql_is_an_error_not_a_crash(world: World) -> None:
    headers = {"Authorization": f"Bearer {world.alice}"}
    inline = httpx.post(
        f"{world.url}/graphql",
        json={"query": 'mutation { remember(text: "tea \\ud800") { __typename } }'},
        headers=headers,
        timeout=30,
    )
    variable = httpx.post(
        f"{world.url}/graphql",
        content=b'{"query": "mutation($t: String!) { remember(text: $t) '
        b'{ __typename ... on InputError { message field } } }",'
        b' "variables": {"t": "tea \\ud800"}}',
        headers={**headers, "Content-Type": "application/json"},
        timeout=30,
    )
    for answer in (inline, variable):
        assert answer.status_code < 500, answer.text
        body = answer.json()
        if body.get("errors"):  # refused while parsing the document (graphql-core does)
            assert "Invalid Unicode escape" in body["errors"][0]["message"], answer.text
        else:  # refused as the tool's argument, naming it
            assert body["data"]["remember"]["__typename"] == "InputError", answer.text
            assert body["data"]["remember"]["field"] == "text"
            assert "surrogate" in body["data"]["remember"]["message"]


def test_a_time_outside_the_calendar_is_refused_naming_its_field(world: World) -> None:
    far = "0001-01-01T00:00:00+14:00"
    answers = {
        "occurred_at": _post(world, DRAFT, _draft(occurred_at=far)),
        "since": _search(world, world.alice, q="oven", since=far),
    }
    for name, answer in answers.items():
        assert _field(answer).endswith(name), answer.text
        assert "out of range" in answer.json()["error"]["message"]


def _evidenced(world: World, chat: str, said: str, **draft: object) -> str:
    """Ingest what alice said, draft a memory quoting it; the active memory's IRI."""
    told = _post(
        world,
        "/api/messages",
        {"messages": [{"chat": chat, "turn": 0, "role": "user", "text": said}]},
    )
    assert told.status_code == 200, told.text
    evidence = [{"source": f"chat:{chat}#0", "quote": said.rstrip(".")}]
    drafted = _post(world, DRAFT, _draft(evidence=evidence, **draft))
    (item,) = drafted.json()["items"]
    assert item["outcome"] == "active", drafted.text
    return str(item["memory"])


def test_a_date_alone_is_that_day_in_utc_and_search_still_works(world: World) -> None:
    memory = _evidenced(
        world,
        "oven",
        "The oven was repaired on 14 March.",
        kind="episodic",
        title="Oven repaired",
        occurred_at="2026-03-14",
    )
    store = world.app.state.services.store
    (when,) = [
        q.object for q in store.quads(UserGraphs("alice").kg, URIRef(memory), KGM.occurredAt)
    ]
    assert str(when) == "2026-03-14T00:00:00+00:00"
    found = _search(world, world.alice, q="oven repaired", since="2026-03-13T00:00:00Z")
    assert found.status_code == 200, found.text
    assert "Oven repaired" in found.text
    context = _post(world, "/api/context", {"task": "what happened to the oven"})
    assert context.status_code == 200, context.text


def test_a_time_stored_without_a_zone_does_not_break_search(world: World) -> None:
    """Versions before canonical times stored a date alone as a naive time: the lexical index
    then compared naive and aware times and answered 500. Such a record reads as UTC."""
    memory = _evidenced(
        world,
        "boiler",
        "The boiler was serviced on 1 February.",
        kind="episodic",
        title="Boiler serviced",
        occurred_at="2026-02-01T10:00:00Z",
    )
    services = world.app.state.services
    kg = UserGraphs("alice").kg
    (stored,) = services.store.quads(kg, URIRef(memory), KGM.occurredAt)
    naive = Literal("2026-02-01T10:00:00", datatype=XSD.dateTime)
    services.store.commit(Changeset.of([Quad(stored.subject, KGM.occurredAt, naive, kg)], [stored]))
    services.lexical.rebuild("alice")
    for params in ({"q": "boiler serviced"}, {"q": "boiler", "since": "2026-01-01T00:00:00Z"}):
        found = _search(world, world.alice, **params)
        assert found.status_code == 200, found.text
        assert "Boiler serviced" in found.text
    other = _search(world, world.bob, q="boiler")
    assert other.status_code == 200 and "Boiler" not in other.text
