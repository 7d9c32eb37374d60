"""The whole model path over real HTTP: consolidation passes on a real on-disk store, their
model configured only through settings, asking a real OpenAI-compatible server on loopback
(:mod:`tests.model_server`) that answers from a script.

Covered: ``model_api_base`` (every call reaches the server at ``/v1/chat/completions``), the
key read from the variable ``model_api_key_env`` names (sent as the Bearer token; a wrong one
is answered 401, a missing one fails before any request, and either fails the call and parks
the pass), good answers becoming memories, malformed JSON and invented quotes refused,
``model_timeout_seconds`` and ``model_retries`` (a slow answer fails within a bounded time; a
500, a 429 or a timeout is tried again), persistent 500s parking the pass at the stage that
failed and a later run resuming there, and the memory group falling back to the primary model.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.ontology import DeclareProperty, DeltaPatch, Provenance, delta_term
from kgmem.pipeline import (
    AuthorPage,
    ClassifyTerm,
    ExtractClaims,
    PassRecord,
    PassStatus,
    StageName,
)
from kgmem.pipeline.lm import NO_KEY
from kgmem.pipeline.worklist import worklist
from kgmem.vocab import SDO
from tests.conftest import free_port
from tests.model_server import ModelServer, Raw, Slow, Status, serve_model
from tests.pipeline.passes import (
    SESSION_1,
    T1,
    UID,
    memories,
    open_services,
    say,
    session_one_reply,
)
from tests.pipeline.scripted import BROKEN_JSON, claim, claims_reply, quote, reply

KEY_VAR = "KGMEM_TEST_MODEL_KEY"
KEY = "sk-loopback-test-7f3a"
PRIMARY, MEMORY = "kgmem-primary", "kgmem-memory"  # as the server sees them (no provider)
CHAT = "/v1/chat/completions"
SESSION_ONE_TITLES = [
    "Alice knows Robert",
    "Alice was born on 1990-03-12",
    "Alice works at Acme",
    "Robert lives in Paris",
]
#: two of alice's own properties labelled "favourite seat": classify asks the model
SEAT_CHOICE, SEAT_SIDE = delta_term(UID, "seatChoice"), delta_term(UID, "seatSide")
SEAT_SESSION = (("user", "I always take the aisle seat on long flights."),)

Open = Callable[..., Services]


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with serve_model(key=KEY) as server:
        yield server
    assert server.errors == [], "the model server's script ran out"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T1)


@pytest.fixture
def open_kgmem(
    model: ModelServer,
    clock: FixedClock,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Open]:
    """Services on a real on-disk store, their model configured by settings alone (``KGMEM_*``
    values; the key in the process environment, where config reads it)."""
    monkeypatch.setenv(KEY_VAR, KEY)
    for ambient in ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(ambient, raising=False)  # the provider's own variables stay out
    opened: list[Services] = []

    def open_with(**env: str) -> Services:
        values = {
            "KGMEM_HOME": str(tmp_path_factory.mktemp("home")),
            "KGMEM_MODEL_PRIMARY": f"openai/{PRIMARY}",
            "KGMEM_MODEL_API_BASE": model.url,
            "KGMEM_MODEL_API_KEY_ENV": KEY_VAR,
            "KGMEM_MODEL_TIMEOUT_SECONDS": "1",
            "KGMEM_MODEL_RETRIES": "0",
        } | env
        services = open_services(load_settings(env=values, port=free_port()), clock)
        opened.append(services)
        return services

    yield open_with
    for services in opened:
        services.close()


def _consolidate(services: Services, clock: FixedClock, *turns: tuple[str, str]) -> PassRecord:
    """``turns`` said in chat c1, then the chat idle: its one pass, run."""
    say(services, "c1", turns)
    clock.advance(timedelta(minutes=10))
    [record] = services.consolidation.consolidate(UID)
    return record


def _seats(services: Services) -> None:
    """alice's two properties labelled "favourite seat" (a tie only the model breaks)."""
    seats = (
        DeclareProperty("seatChoice", "favourite seat", SDO.Person),
        DeclareProperty("seatSide", "favourite seat", SDO.Person),
    )
    services.ontology.apply_delta(UID, DeltaPatch(seats, Provenance(f"user:{UID}", T1)))


def _seat_claims() -> str:
    said = quote("S1", "I always take the aisle seat")
    return claims_reply(
        claim("user", "favourite seat", said, value="aisle", statement="Alice takes the aisle")
    )


def _seat_side() -> str:
    return reply(choice={"term": str(SEAT_SIDE), "reason": "aisle or window is a side"})


def _parked(record: PassRecord, stage: StageName, error_type: str) -> None:
    assert record.status is PassStatus.PARKED, (record.status, record.error)
    assert record.stage is stage and record.error_stage is stage
    assert record.error_type == error_type, record.error


# -- good answers, and the settings that reach the server ----------------------------------


def test_a_good_extraction_over_http_becomes_memories_and_invented_quotes_do_not(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem()
    model.engine.add(ExtractClaims, session_one_reply())  # four truths and two lies
    record = _consolidate(services, clock, *SESSION_1)

    assert record.status is PassStatus.COMMITTED, record.error
    assert sorted(memories(services)) == SESSION_ONE_TITLES
    dropped = {
        d.code
        for d in worklist(services.consolidation.checkpoints.state(UID, record.pass_id)).dropped
    }
    assert {"quote_not_in_source", "agent_only"} <= dropped
    everything = " ".join(m.title for m in memories(services).values())
    assert "Initech" not in everything and "lovely" not in everything

    # model_api_base, the key and the model name all reached the server
    [extract] = model.calls(ExtractClaims)
    assert extract.path == CHAT and extract.model == PRIMARY
    assert extract.authorization == f"Bearer {KEY}"
    assert "I work at Acme" in extract.prompt  # the conversation itself was shown
    assert model.calls(AuthorPage)  # the pages were asked of the primary model too
    assert {(r.path, r.model, r.authorization) for r in model.requests} == {
        (CHAT, PRIMARY, f"Bearer {KEY}")
    }


def test_an_api_base_off_the_chat_path_is_answered_404_and_parks_the_pass(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    """An ``model_api_base`` without ``/v1`` reaches the server at the wrong path: the call
    fails (the pass parks) instead of anything being made up."""
    services = open_kgmem(
        KGMEM_MODEL_API_BASE=model.url.removesuffix("/v1"), KGMEM_MODEL_RETRIES="2"
    )
    model.engine.add(ExtractClaims, session_one_reply())
    record = _consolidate(services, clock, *SESSION_1)
    _parked(record, StageName.EXTRACT, "ModelCallError")
    assert record.error is not None and "not found" in record.error
    assert [r.path for r in model.requests] == ["/chat/completions"]  # a 404 is not retried
    assert memories(services) == {}


# -- keys ------------------------------------------------------------------------------------


def test_a_wrong_key_is_answered_401_and_parks_the_pass_without_retrying(
    model: ModelServer, open_kgmem: Open, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-wrong")
    services = open_kgmem(KGMEM_MODEL_RETRIES="2")
    model.engine.add(ExtractClaims, session_one_reply())
    record = _consolidate(services, clock, *SESSION_1)

    _parked(record, StageName.EXTRACT, "ModelCallError")
    assert record.error is not None and "Incorrect API key" in record.error
    [asked] = model.requests  # an auth failure is not transient: no retry
    assert asked.authorization == "Bearer sk-wrong"
    assert memories(services) == {}


def test_a_key_variable_left_unset_never_sends_the_providers_own_key(
    model: ModelServer, open_kgmem: Open, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VAR)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-real-openai-key")
    services = open_kgmem(KGMEM_MODEL_RETRIES="2")
    record = _consolidate(services, clock, *SESSION_1)

    _parked(record, StageName.EXTRACT, "ModelCallError")  # this server checks its key: 401
    [asked] = model.requests
    assert asked.authorization == f"Bearer {NO_KEY}"
    assert memories(services) == {}


# -- malformed answers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "error_type", "why"),
    [
        (BROKEN_JSON, "ModelOutputError", "field claims"),  # the claims are not JSON
        (
            Raw('{"id": "x", "object": "chat.completion", "choices": [{"mess'),
            "ModelCallError",
            "is not JSON",
        ),
    ],
    ids=["broken-claims", "broken-body"],
)
def test_malformed_json_parks_the_pass_and_stores_nothing(
    model: ModelServer,
    open_kgmem: Open,
    clock: FixedClock,
    answer: str | Raw,
    error_type: str,
    why: str,
) -> None:
    services = open_kgmem(KGMEM_MODEL_RETRIES="2")
    model.then(answer, signature=ExtractClaims)
    record = _consolidate(services, clock, *SESSION_1)

    _parked(record, StageName.EXTRACT, error_type)
    assert record.error is not None and why in record.error
    assert len(model.calls(ExtractClaims)) == 1  # never asked again in JSON mode, nor retried
    assert memories(services) == {}


# -- timeouts and retries ------------------------------------------------------------------


def test_a_slow_answer_fails_the_call_at_the_timeout(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem(KGMEM_MODEL_TIMEOUT_SECONDS="1", KGMEM_MODEL_RETRIES="0")
    model.always(Slow(20), signature=ExtractClaims)
    say(services, "c1", SESSION_1)
    clock.advance(timedelta(minutes=10))
    started = time.monotonic()
    [record] = services.consolidation.consolidate(UID)
    took = time.monotonic() - started

    assert 1 <= took < 4, took  # the timeout, not the server's 20 s
    _parked(record, StageName.EXTRACT, "ModelCallError")
    assert record.error is not None and "timed out" in record.error
    assert len(model.calls(ExtractClaims)) == 1
    assert memories(services) == {}


def test_a_timed_out_try_is_tried_again_and_its_answer_is_taken(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem(KGMEM_MODEL_TIMEOUT_SECONDS="1", KGMEM_MODEL_RETRIES="1")
    model.then(Slow(20), session_one_reply(), signature=ExtractClaims)
    started = time.monotonic()
    record = _consolidate(services, clock, *SESSION_1)

    assert time.monotonic() - started < 8
    assert record.status is PassStatus.COMMITTED, record.error
    first, second = model.calls(ExtractClaims)
    assert second.at - first.at >= 1.9  # the timeout, then DSPy's 1 s wait
    assert second.body == first.body  # the same question asked again
    assert sorted(memories(services)) == SESSION_ONE_TITLES


def test_a_500_and_a_429_then_a_good_answer_succeed_through_retries(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem(KGMEM_MODEL_RETRIES="2")
    model.then(
        500, Status(429, "slow down", retry_after=0), session_one_reply(), signature=ExtractClaims
    )
    record = _consolidate(services, clock, *SESSION_1)

    assert record.status is PassStatus.COMMITTED, record.error
    assert len(model.calls(ExtractClaims)) == 3
    assert sorted(memories(services)) == SESSION_ONE_TITLES


def test_retries_are_bounded_by_the_setting(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem(KGMEM_MODEL_RETRIES="2")
    model.always(Status(503, "overloaded", retry_after=0), signature=ExtractClaims)
    record = _consolidate(services, clock, *SESSION_1)

    _parked(record, StageName.EXTRACT, "ModelCallError")
    assert record.error is not None and "overloaded" in record.error
    assert len(model.calls(ExtractClaims)) == 3  # one try and two retries


# -- parking and resuming --------------------------------------------------------------------


def test_persistent_500s_park_the_pass_at_the_stage_and_it_resumes_there(
    model: ModelServer, open_kgmem: Open, clock: FixedClock
) -> None:
    services = open_kgmem(KGMEM_MODEL_RETRIES="1")
    _seats(services)
    model.engine.add(ExtractClaims, _seat_claims())
    model.always(500, signature=ClassifyTerm)  # the model server goes down after extract
    parked = _consolidate(services, clock, *SEAT_SESSION)

    _parked(parked, StageName.CLASSIFY, "ModelCallError")
    assert parked.attempts == 1 and parked.next_attempt_at is not None
    assert len(model.calls(ClassifyTerm)) == 2  # one try and one retry
    assert memories(services) == {}
    [shown] = services.consolidation.status(UID).passes
    assert shown.record.status is PassStatus.PARKED and shown.record.stage is StageName.CLASSIFY

    assert services.consolidation.consolidate(UID) == []  # not due before its backoff
    assert len(model.calls(ClassifyTerm)) == 2

    model.always(None)  # the server recovers
    model.engine.add(ClassifyTerm, _seat_side())
    clock.current = parked.next_attempt_at
    stages: list[StageName] = []
    [resumed] = services.consolidation.consolidate(UID, progress=lambda _, s: stages.append(s))

    assert resumed.pass_id == parked.pass_id
    assert resumed.status is PassStatus.COMMITTED, resumed.error
    assert stages[0] is StageName.CLASSIFY and StageName.EXTRACT not in stages
    assert len(model.calls(ExtractClaims)) == 1  # extract was banked: not asked again
    assert len(model.calls(ClassifyTerm)) == 3
    [seat] = memories(services).values()
    assert [c.predicate for c in seat.claims] == [SEAT_SIDE]


# -- model groups ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("memory_model", "memory_stages_ask"),
    [("", PRIMARY), (f"openai/{MEMORY}", MEMORY)],
    ids=["memory-unset-falls-back", "memory-set"],
)
def test_memory_stages_ask_the_memory_model_else_the_primary_and_pages_the_primary(
    model: ModelServer,
    open_kgmem: Open,
    clock: FixedClock,
    memory_model: str,
    memory_stages_ask: str,
) -> None:
    services = open_kgmem(**({"KGMEM_MODEL_MEMORY": memory_model} if memory_model else {}))
    _seats(services)
    model.engine.add(ExtractClaims, _seat_claims())
    model.engine.add(ClassifyTerm, _seat_side())
    record = _consolidate(services, clock, *SEAT_SESSION)

    assert record.status is PassStatus.COMMITTED, record.error
    asked = {
        signature.__name__: {r.model for r in model.calls(signature)}
        for signature in (ExtractClaims, ClassifyTerm, AuthorPage)
    }
    assert asked == {
        "ExtractClaims": {memory_stages_ask},
        "ClassifyTerm": {memory_stages_ask},
        "AuthorPage": {PRIMARY},
    }
    [classify] = model.calls(ClassifyTerm)  # the tie, offered over HTTP
    assert str(SEAT_CHOICE) in classify.prompt and str(SEAT_SIDE) in classify.prompt
    assert services.consolidation.status(UID).model == (memory_model or f"openai/{PRIMARY}")
