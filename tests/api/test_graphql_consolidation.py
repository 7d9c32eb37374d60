"""GraphQL ``consolidation``: each pass's state as of now (a running pass whose worker died is
*dead*), its owner, last heartbeat, next attempt, and the drafts it holds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest

from kgmem.pipeline import Claims, StageName
from kgmem.store import NodeKind, new_node
from tests.api.support import ApiServer, api_server
from tests.api.test_graphql import gql
from tests.pipeline.owners import ClaimingAs, identity_of, sleeper

STATUS = """{ consolidation { waitingDrafts passes {
    id status state stateReason stage owner { host pid } heartbeatAt nextAttemptAt drafts
    sources } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    # no sweep within the test: it would take the dead pass over while the test reads it
    with api_server(tmp_path_factory, "graphql-passes", sweep_interval_seconds=3600) as running:
        yield running


def test_a_pass_whose_worker_died_is_shown_dead_with_its_owner_and_drafts(
    server: ApiServer,
) -> None:
    services = server.app.state.services
    uid = "g-dead"
    with server.client(uid) as c:
        drafts = [new_node(uid, NodeKind.QUEUED_DRAFT) for _ in range(2)]
        pass_id = services.consolidation.runner.start(uid, drafts)
        claimed_at = services.clock.now()
        with sleeper() as child:
            owner = identity_of(child)
            claims = Claims(services.store, services.queries, ClaimingAs(owner))
            assert claims.claim(uid, pass_id, claimed_at, timedelta(seconds=40)) is not None
            services.consolidation.checkpoints.begin_stage(
                uid, pass_id, StageName.RESOLVE, claimed_at
            )
            alive = gql(c, STATUS)["consolidation"]["passes"][0]
        dead = gql(c, STATUS)["consolidation"]

    assert alive["state"] == "running" and alive["stateReason"] is None
    assert datetime.fromisoformat(alive["nextAttemptAt"]) == claimed_at + timedelta(seconds=40)
    [shown] = dead["passes"]
    assert shown["id"] == pass_id and shown["status"] == "passRunning"
    assert shown["state"] == "dead" and shown["stage"] == "resolve"
    assert shown["stateReason"] == f"its process is gone ({owner.describe()})"
    assert shown["owner"] == {"host": owner.host, "pid": owner.pid}
    assert datetime.fromisoformat(shown["heartbeatAt"]) == claimed_at
    assert datetime.fromisoformat(shown["nextAttemptAt"]) <= services.clock.now()  # due now
    assert (shown["drafts"], shown["sources"], dead["waitingDrafts"]) == (2, 0, 0)
