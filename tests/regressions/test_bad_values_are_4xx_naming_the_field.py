"""#22: inputs that answered 500 now answer 4xx naming the field, on every surface that
takes them: a reported source with role ``tool`` but no outcome, a lone UTF-16 surrogate
(JSON's ``"\\ud800"``), a time that leaves the calendar when turned into UTC
(``0001-01-01T00:00:00+14:00``). And what a model really sends, a date alone for
``occurred_at``, is kept as that day, in UTC."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

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
        "since": httpx.get(
            f"{world.url}/api/search",
            params={"q": "oven", "since": far},
            headers={"Authorization": f"Bearer {world.alice}"},
            timeout=30,
        ),
    }
    for name, answer in answers.items():
        assert _field(answer).endswith(name), answer.text
        assert "out of range" in answer.json()["error"]["message"]


def test_a_date_alone_is_that_day_in_utc_and_search_still_works(world: World) -> None:
    drafted = _post(
        world,
        DRAFT,
        _draft(kind="episodic", title="Oven repaired", occurred_at="2026-03-14"),
    )
    assert drafted.status_code < 300, drafted.text
    found = httpx.get(
        f"{world.url}/api/search",
        params={"q": "oven repaired"},
        headers={"Authorization": f"Bearer {world.alice}"},
        timeout=30,
    )
    assert found.status_code == 200, found.text
    context = _post(world, "/api/context", {"task": "what happened to the oven"})
    assert context.status_code == 200, context.text
