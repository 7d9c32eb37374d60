"""schemathesis over GraphQL on a live server: every query and mutation field of the committed
``schema.graphql``, with arguments hypothesis-graphql draws (any Unicode text, NUL and
non-BMP included; numbers at their extremes; nested inputs), sent as the caller's key.
No answer may be a 5xx, ``/health`` must answer within a second throughout, and nothing
may connect out (the tripwire)."""

from __future__ import annotations

from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from tests.hostile.conftest import Target, assert_health_held

pytestmark = pytest.mark.integration

SCHEMA = schemathesis.graphql.from_path(Path(__file__).resolve().parents[2] / "schema.graphql")
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda op: op.label)
def test_generated_documents_never_get_a_5xx(
    target: Target, operation: schemathesis.APIOperation
) -> None:
    seen: list[str] = []

    @given(case=operation.as_strategy(generation_mode=GenerationMode.POSITIVE))
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def call(case: schemathesis.Case) -> None:
        answer = case.call_and_validate(
            base_url=f"{target.world.url}/graphql",
            headers=target.headers(),
            checks=[not_a_server_error],
            timeout=30,
        )
        # a document the schema admits is answered 200, with data or with errors that say
        # why (a limit, an InputError member): never a transport error
        assert answer.status_code == 200, (case.body, answer.status_code, answer.text[:300])
        body = answer.json()
        assert body.get("data") is not None or body.get("errors"), body
        seen.append(f"{answer.status_code} {answer.text[:200]}")

    call()
    assert seen, f"no document was drawn for {operation.label}"
    assert target.wire.connections == []


def test_zz_health_answered_within_a_second_throughout(target: Target) -> None:
    assert_health_held(target)
