"""A batch's drafts read their chat once, with every name the batch gives, and decide as each
did with its own names (#24: each draft read the chat again with its own names, a fifth of a
25-draft batch). The realistic conversations, each drafted whole as one batch, are the check
that sharing the names changes no decision."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import kgmem.memory.grounding as grounding
from kgmem.memory.discourse import Discourse, Kind
from kgmem.memory.gate import Outcome, WriteGate
from kgmem.memory.grounding import GroundingContext, batch_names
from kgmem.memory.model import ClaimDraft
from tests.helpers import load_benchmark, load_realistic
from tests.memory.world import World, claim_draft

data = load_realistic()
core = load_benchmark("correctness_core")
support = load_benchmark("recall_support")

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "realistic"


def _claim(subject: str, obj: str) -> ClaimDraft:
    return ClaimDraft(subject=subject, predicate="schema:knows", object=obj)


def test_batch_names_merge_aliases_agree_on_kinds_and_leave_the_user_out() -> None:
    first = GroundingContext(
        user="Alice",
        entities={"Robert Hale": ("Bob",), "Harinas Norte": ()},
        kinds={"Robert Hale": Kind.PERSON, "Harinas Norte": Kind.THING},
    )
    second = GroundingContext(
        user="Alice",
        entities={"Robert Hale": ("Rob",), "Juno": ()},
        kinds={"Robert Hale": Kind.PERSON, "Juno": Kind.THING, "Harinas Norte": Kind.PERSON},
    )
    found = batch_names(
        [
            ([_claim("I", "Robert Hale")], first),
            ([_claim("Alice", "Mike"), _claim("me", "Juno")], second),
        ]
    )
    assert found.names == {
        "Robert Hale": ("Bob", "Rob"),
        "Harinas Norte": (),
        "Juno": (),
        "Mike": (),  # a claim's term the draft gave no entity for
    }  # "I", "me" and the account's name are the user, no name to look for
    # two drafts that disagree on what a name is leave it unknown
    assert found.kinds == {"Robert Hale": Kind.PERSON, "Juno": Kind.THING}


class _Counted(Discourse):
    made = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        type(self).made += 1
        super().__init__(*args, **kwargs)


def _batch(world: World) -> list[dict[str, Any]]:
    said = [
        world.say("user", "My sister Maya moved to Lisbon in March."),
        world.say("assistant", "That's a big move! How is she settling in?"),
        world.say("user", "Great. Her partner Ravi works at Globex now, he started Monday."),
        world.say("user", "And I finally joined the Tejo Runners club."),
    ]
    person, org, place = "schema:Person", "schema:Organization", "schema:Place"
    said_of = [  # (message, quote, subject, predicate, object, entity types)
        (0, "Maya moved to Lisbon", "Maya", "homeLocation", "Lisbon", [person, place]),
        (2, "Ravi works at Globex now", "Ravi", "worksFor", "Globex", [person, org]),
        (3, "I finally joined the Tejo Runners club", "I", "memberOf", "Tejo Runners", [org]),
    ]
    return [
        claim_draft(
            said[n],
            quote,
            subject,
            f"schema:{predicate}",
            types=dict(zip([t for t in (subject, obj) if t != "I"], types, strict=True)),
            object=obj,
        )
        for n, quote, subject, predicate, obj, types in said_of
    ]


@pytest.mark.parametrize("shared", [True, False], ids=["batch names", "own names"])
def test_a_batch_reads_its_chat_once_for_all_its_drafts(
    world: World, monkeypatch: pytest.MonkeyPatch, shared: bool
) -> None:
    drafts = _batch(world)
    monkeypatch.setattr(grounding, "Discourse", _Counted)
    monkeypatch.setattr(_Counted, "made", 0)
    grounding._discourse.cache_clear()
    if not shared:  # what the gate did before: each draft's own names
        monkeypatch.setattr(WriteGate, "batch", lambda *_: None)
    items = world.draft(*drafts)
    assert [i.outcome for i in items] == [Outcome.ACTIVE] * 3, [i.reasons for i in items]
    assert _Counted.made == (1 if shared else 3)


def _decided(conv: dict[str, Any], shared: bool) -> list[tuple[Any, ...]]:
    """``conv``'s feed drafted as one batch over a new store: each draft's outcome, reasons
    and memory, the memories named by the draft that made them (their IRIs are new)."""
    with tempfile.TemporaryDirectory() as home:
        services, _ = support.open_services(Path(home), datetime(2026, 6, 1, tzinfo=UTC))
        try:
            keys, _ = core.prepare(
                services,
                "u1",
                {"sources": data.sources(conv), "setup": []},
                datetime(2026, 6, 1, tzinfo=UTC),
            )
            drafts = [core._resolve(conv["drafts"][n], keys, "u1") for n in conv["feed"]]
            gate = services.gate
            if not shared:
                gate.batch = lambda *_: None  # type: ignore[method-assign]
            items = gate.draft("u1", drafts).items
        finally:
            services.close()
    made = {str(i.memory): f"#{k}" for k, i in enumerate(items) if i.memory is not None}

    def named(reason: str) -> str:
        for iri, name in made.items():
            reason = reason.replace(iri, name)
        return reason

    return [
        (i.outcome, sorted(named(r) for r in i.reasons), made.get(str(i.memory))) for i in items
    ]


@pytest.mark.parametrize("conv", data.read_conversations(DATA), ids=lambda c: c["id"])
def test_a_realistic_feed_drafted_as_one_batch_decides_the_same_with_the_batch_names(
    conv: dict[str, Any],
) -> None:
    assert _decided(conv, shared=True) == _decided(conv, shared=False)
