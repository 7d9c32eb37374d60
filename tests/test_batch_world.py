"""The batch benchmark's store states each fact once, as a store the gate wrote: the gate
discards or merges a restatement, so a store repeating a fact thousands of times measures
reads the gate never meets (``benchmarks/batch_draft.py``)."""

from __future__ import annotations

import pytest

from tests.helpers import load_benchmark

batch_draft = load_benchmark("batch_draft")


@pytest.mark.parametrize("n", [400, 1000, 12_345, 100_000])
def test_no_two_memories_state_the_same_fact(n: int) -> None:
    world = batch_draft.World(n)
    facts = [world.fact(i) for i in range(n)]
    keys = {(s, r.curie, o) for s, r, o in facts}
    assert len(keys) == n
    for subject, relation, obj in facts:
        assert 0 <= obj < world.counts[relation.range]
        assert not (relation.range == "person" and obj == subject)  # nobody knows themself


def test_a_restated_fact_reads_as_the_stored_memory_says_it() -> None:
    world = batch_draft.World(1000)
    for i in (0, 10, 17, 999):
        subject, relation, obj = world.fact(i)
        who = "I" if subject is None else world.name("person", subject)
        assert world.sentence(i).startswith(who + " ")
        assert world.sentence(i).endswith(world.name(relation.range, obj))
