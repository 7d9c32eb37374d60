"""A draft's source_refs become kgm:derivedFrom edges to the user's memories and sources, web
addresses stay locators, and a ref naming nothing of the user's is refused (the reason names it);
refs never stand in for evidence. A dated episode restating a fact is kept and supports it."""

from __future__ import annotations

from typing import Any

import pytest

from kgmem.memory.decider import Outcome
from kgmem.memory.model import MemoryStatus
from kgmem.vocab import KGM
from tests.memory.world import ALICE, World, claim_draft

PORTO = {"Porto": "schema:City"}


def _lives(world: World) -> tuple[str, Any]:
    said = world.say("user", "I live in Porto now, I moved there on 3 May.")
    [fact] = world.draft(
        claim_draft(
            said, "I live in Porto", "I", "schema:homeLocation", types=PORTO, object="Porto"
        )
    )
    assert fact.outcome is Outcome.ACTIVE
    return said, fact


def test_refs_become_edges_and_locators(world: World) -> None:
    said, fact = _lives(world)
    note = world.sources.remember("alice", "Alice's flat is in Bonfim, near the market").iri
    draft = claim_draft(
        said, "I live in Porto", "I", "schema:homeLocation", types=PORTO, object="Porto"
    )
    draft |= {
        "kind": "reference",
        "title": "Where Alice's moving checklist is",
        "claims": [],
        "source_refs": [
            str(fact.memory),
            str(fact.memory).rsplit("/", 1)[-1],  # the same memory by its short id
            "chat:c1#0",
            str(note).rsplit("/", 1)[-1],
            "https://example.org/porto-moving-checklist",
        ],
    }
    [ref] = world.draft(draft)
    assert ref.outcome is Outcome.ACTIVE, ref.reasons
    record = world.memory(ref.memory)
    assert set(record.derived_from) == {
        fact.memory,
        world.memory(fact.memory).evidence[0].source,
        note,
    }
    assert record.source_refs == ("https://example.org/porto-moving-checklist",)
    edges = {q.object for q in world.store.quads(ALICE.kg, ref.memory, KGM.derivedFrom)}
    assert edges == set(record.derived_from)


@pytest.mark.parametrize(
    "ref",
    [
        "https://w3id.org/kgmem/user/bob/memory/" + "a" * 32,  # another user's
        "https://w3id.org/kgmem/user/alice/memory/" + "b" * 32,  # no such memory
        "https://w3id.org/kgmem/user/alice/entity/" + "c" * 32,  # not a memory or a source
        "c" * 32,  # a short id of nothing
        "chat:nope#4",
        "my notebook",
        "file:///etc/passwd",
    ],
)
def test_a_ref_naming_nothing_of_theirs_is_refused_naming_it(world: World, ref: str) -> None:
    said, _ = _lives(world)
    draft = claim_draft(
        said,
        "I moved there on 3 May",
        "I",
        "schema:description",
        types={},
        value="moved there on 3 May",
    )
    draft["source_refs"] = ["https://example.org/ok", ref]
    before = world.memory_count()
    [refused] = world.draft(draft)
    assert refused.outcome is Outcome.REFUSED and refused.memory is None
    [reason] = refused.reasons
    assert reason.startswith("source_refs[1]: ") and "names nothing of this user's" in reason
    assert world.memory_count() == before  # nothing written but the refusal (in ops)


def test_refs_do_not_stand_in_for_evidence(world: World) -> None:
    _, fact = _lives(world)
    draft = {"kind": "semantic", "title": "Alice loves Porto", "source_refs": [str(fact.memory)]}
    [item] = world.draft(draft)
    assert item.outcome is Outcome.REFUSED and item.memory is None


def test_a_dated_episode_of_a_known_fact_is_kept_and_supports_it(world: World) -> None:
    said, fact = _lives(world)
    episode = claim_draft(
        said, "I moved there on 3 May", "I", "schema:homeLocation", types=PORTO, object="Porto"
    )
    episode["claims"][0]["object"] = "Porto"
    episode["evidence"][0]["quote"] = "I live in Porto now, I moved there on 3 May"
    dated = {**episode, "kind": "episodic", "title": "Alice moved to Porto"}
    dated["occurred_at"] = "2026-05-03"
    [event] = world.draft(dated)
    assert event.outcome is Outcome.ACTIVE and event.memory != fact.memory
    assert world.memory(event.memory).supports == (fact.memory,)
    [twice] = world.draft(dated)  # the same event again is a repeat of the event
    assert twice.outcome is Outcome.DISCARDED and twice.memory == event.memory
    next_move = {**dated, "occurred_at": "2027-02-01", "title": "Alice moved within Porto"}
    [other] = world.draft(next_move)  # another time: another event, supporting the fact
    assert other.outcome is Outcome.ACTIVE and other.memory not in (event.memory, fact.memory)
    assert world.memory(other.memory).supports == (fact.memory,)
    assert world.memory(fact.memory).status is MemoryStatus.ACTIVE
    restated = {**dated, "kind": "semantic", "occurred_at": None, "title": "Lives in Porto"}
    [same] = world.draft(restated)
    assert same.outcome is Outcome.DISCARDED  # a fact restating a fact is still a repeat
    world.lifecycle.forget("alice", fact.memory)
    assert world.memory(event.memory).supports == ()  # no edge to what is gone
