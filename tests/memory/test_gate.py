"""The write gate end to end on real stores: ground, type, pre-pass, contradict, decide."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from rdflib import Literal
from rdflib.namespace import XSD

from kgmem.errors import BatchSizeError, DecisionConflict, DraftInvalid
from kgmem.memory.decisions import Action, draft_hash
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Actor, ItemResult, Outcome, WriteMode
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.source_inputs import MessageIn
from kgmem.store import Changeset, RdfFormat, shapes_graph
from kgmem.vocab import KGM, SDO
from tests.memory.world import ALICE, EMPLOYER, NOW, World, claim_draft, works_at


def test_user_statement_activates_with_exact_evidence(world: World) -> None:
    msg = world.say("user", "Since March I work at Acme as a tester.")
    [item] = world.draft(works_at(msg))
    assert item.outcome is Outcome.ACTIVE
    memory = world.memory(item.memory)
    assert memory.status is MemoryStatus.ACTIVE
    [evidence] = memory.evidence
    assert evidence.quote == "I work at Acme" and evidence.span == (12, 26)
    [claim] = memory.claims
    assert claim.subject == self_entity("alice") and claim.predicate == SDO.worksFor
    # the fact is materialized on the entities
    assert list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))


def test_invented_quote_is_refused_and_nothing_is_stored(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    before = world.memory_count()
    [item] = world.draft(works_at(msg, "Globex"))
    assert item.outcome is Outcome.REFUSED and item.memory is None
    assert world.memory_count() == before  # only the refusal decision, in ops
    assert not list(world.store.quads(ALICE.kg, None, KGM.title, Literal("Alice works at Globex")))


def test_refused_draft_is_one_decision_with_its_reasons(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg, "Globex"))
    [decision] = world.gate.decisions.feed("alice", 1000)
    assert item.decision == decision.iri
    assert decision.action is Action.REFUSE and decision.target is None
    assert decision.actor == "agent" and decision.at == NOW
    assert item.reasons and decision.reason == "; ".join(item.reasons)
    assert "does not occur verbatim in the source" in decision.reason  # says why
    assert decision.draft is not None
    assert decision.draft.title == "Alice works at Globex"
    assert decision.draft.kind is MemoryKind.SEMANTIC
    assert decision.draft.hash == draft_hash(world.gate.parse([works_at(msg, "Globex")])[0])
    # nothing to undo: a refusal is not revertable
    with pytest.raises(DecisionConflict, match="nothing to revert"):
        world.lifecycle.revert("alice", decision.iri)


def test_refusal_decision_validates_against_the_shapes(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg, "Globex"))
    assert item.decision is not None
    quads = list(world.store.quads(ALICE.ops, item.decision))
    report = world.gate._validation.validate("alice", Changeset.of(quads))
    assert report.conforms, report.violations
    assert not any(q.predicate == KGM.target for q in quads)


def test_clash_and_batch_refusals_each_record_one_decision(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    agent = world.say("assistant", "You work at Initech.")
    refused, created, prose = world.draft(
        works_at(msg, "Globex"), works_at(msg), works_at(agent, "Initech", "work at Initech")
    )
    assert (refused.outcome, created.outcome, prose.outcome) == (
        Outcome.REFUSED,
        Outcome.ACTIVE,
        Outcome.REFUSED,
    )
    feed = world.gate.decisions.feed("alice", 1000)
    refusals = [d for d in feed if d.action is Action.REFUSE]
    assert {d.iri for d in refusals} == {refused.decision, prose.decision}
    assert len(refusals) == 2 and len(feed) == 3


def test_agent_prose_alone_waits_for_review(world: World) -> None:
    msg = world.say("assistant", "I work at Acme, the user told me once.")
    [item] = world.draft(works_at(msg))
    assert item.outcome is Outcome.REFUSED  # agent prose is not proof


def test_low_confidence_agent_note_goes_to_the_inbox(world: World) -> None:
    msg = world.say(
        "tool",
        "Search result: Alice works at Acme.",
        tool_name="web_search",
        tool_outcome="success",
    )
    draft = works_at(msg, quote="Alice works at Acme", confidence=0.5)
    draft["claims"][0]["subject"] = "Alice"
    [item] = world.draft(draft)
    assert item.outcome is Outcome.PENDING
    assert world.memory(item.memory).status is MemoryStatus.PENDING


def test_review_mode_holds_even_confident_agent_writes(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg), mode=WriteMode.REVIEW)
    assert item.outcome is Outcome.PENDING
    [person] = world.draft(works_at(msg), mode=WriteMode.REVIEW, actor=Actor.PERSON)
    assert person.outcome is Outcome.ACTIVE


def test_restatement_is_discarded_with_its_evidence_kept(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    second = world.say("user", "As I said, I work at Acme.")
    [created] = world.draft(works_at(first))
    [again] = world.draft(works_at(second))
    assert again.outcome is Outcome.DISCARDED and again.memory == created.memory
    assert len(world.memory(created.memory).evidence) == 2


def test_a_numbered_name_takes_no_alias_of_its_first_word(world: World) -> None:
    # "Studio 54" read as "Studio" gave every numbered place the alias "Studio": a wrong
    # name, and every memory about it read again for the search index
    first = world.say("user", "I work at Studio 54.")
    [created] = world.draft(works_at(first, "Studio 54"))
    second = world.say("user", "Still at Studio 54, five years now.")
    [again] = world.draft(works_at(second, "Studio 54", quote="Still at Studio 54"))
    assert created.outcome is Outcome.ACTIVE and again.memory == created.memory
    assert not list(world.store.quads(ALICE.kg, None, KGM.alias))
    names = {str(q.object) for q in world.store.quads(ALICE.kg, None, KGM.name)}
    assert "Studio 54" in names and "Studio" not in names


def test_a_date_written_two_ways_is_one_value(world: World) -> None:
    born = world.say("user", "I was born on 12 March 1990.")
    birth = {
        "kind": "semantic",
        "title": "Alice was born in 1990",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "schema:birthDate", "value": "1990-03-12"}],
        "evidence": [{"source": born, "quote": "I was born on 12 March 1990"}],
    }
    [first] = world.draft(birth)
    spelled = dict(birth, claims=[dict(birth["claims"][0], value="12 March 1990")])
    [again] = world.draft(spelled)
    # a restatement, not a second value of a single-valued property
    assert again.outcome is Outcome.DISCARDED and again.memory == first.memory
    [fact] = world.store.quads(ALICE.kg, self_entity("alice"), SDO.birthDate)
    assert fact.object == Literal(date(1990, 3, 12), datatype=XSD.date)


def test_new_claim_is_merged_into_the_memory_that_knows_the_rest(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    [created] = world.draft(works_at(first))
    second = world.say("user", "I work at Acme and I like jazz.")
    draft = works_at(second)
    draft["claims"].append({"subject": "I", "predicate": "kgm:likes", "value": "jazz"})
    draft["evidence"].append({"source": second, "quote": "I like jazz"})
    [merged] = world.draft(draft)
    assert merged.outcome is Outcome.MERGED and merged.memory == created.memory
    assert len(world.memory(created.memory).claims) == 2


def test_contradicting_a_pinned_fact_is_quarantined(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    [created] = world.draft(works_at(first, predicate=str(EMPLOYER)))
    old = world.memory(created.memory)
    pinned = [q for q in world.store.quads(ALICE.kg, created.memory, KGM.pinned)]
    world.store.commit(Changeset.of([q._replace(object=Literal(True)) for q in pinned], pinned))
    tool = world.say(
        "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
    )
    draft = works_at(tool, "Globex", quote="Alice works at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["subject"] = "Alice"
    [item] = world.draft(draft)
    assert item.outcome is Outcome.QUARANTINED
    assert item.contradicts == (created.memory,)
    assert world.memory(created.memory).confidence == old.confidence  # untouched
    assert world.memory(item.memory).graph == ALICE.quarantine


def test_newer_authoritative_value_supersedes_with_history(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    [old] = world.draft(works_at(first, predicate=str(EMPLOYER)))
    later = world.say("user", "I now work at Globex.")
    draft = works_at(later, "Globex", "I now work at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["valid_from"] = "2026-05-01T00:00:00Z"
    [new] = world.draft(draft)
    assert new.outcome is Outcome.ACTIVE and new.superseded == (old.memory,)
    previous = world.memory(old.memory)
    assert previous.status is MemoryStatus.SUPERSEDED and previous.retired_at == NOW
    assert world.memory(new.memory).supersedes == (old.memory,)
    facts = {q.object for q in world.store.quads(ALICE.kg, self_entity("alice"), EMPLOYER)}
    assert len(facts) == 1  # the old employer is no longer a current fact


def test_equal_standing_contradiction_halves_the_older_confidence(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    [old] = world.draft(works_at(first, predicate=str(EMPLOYER)))
    other = world.say("user", "I work at Globex.")
    [new] = world.draft(works_at(other, "Globex", predicate=str(EMPLOYER)))
    assert new.outcome is Outcome.PENDING and new.weakened == (old.memory,)
    assert world.memory(old.memory).confidence == pytest.approx(0.45)


def test_unknown_predicate_waits_with_a_vocabulary_proposal(world: World) -> None:
    msg = world.say("user", "I climb at Crux every Tuesday.")
    draft = {
        "kind": "semantic",
        "title": "Climbs at Crux",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "kgm:climbsAt", "object": "Crux"}],
        "evidence": [{"source": msg, "quote": "I climb at Crux"}],
    }
    [item] = world.draft(draft)
    assert item.outcome is Outcome.PENDING
    assert item.needs_terms == (KGM.climbsAt,)


def test_batch_input_errors_refuse_the_whole_batch(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    before = world.store.count()
    with pytest.raises(BatchSizeError):
        world.draft()
    with pytest.raises(BatchSizeError):
        world.draft(*[works_at(msg)] * 26)
    with pytest.raises(DraftInvalid) as info:
        world.draft(works_at(msg), {**works_at(msg), "confidence": 1.5})
    assert (info.value.item, info.value.field) == (1, "confidence")
    with pytest.raises(DraftInvalid, match="occurred_at"):
        world.draft({**works_at(msg), "kind": "episodic"})
    assert world.store.count() == before


def test_batch_outcomes_are_per_item_and_written_together(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    items = world.draft(works_at(msg), works_at(msg, "Globex"), works_at(msg))
    assert [i.outcome for i in items] == [Outcome.ACTIVE, Outcome.REFUSED, Outcome.DISCARDED]
    assert items[2].memory == items[0].memory


def test_other_users_sources_are_not_evidence(world: World) -> None:
    msg = world.sources.ingest_message(
        "bob", MessageIn(chat="b", turn=0, role="user", text="I work at Acme.")
    )
    [item] = world.draft(works_at(str(msg.iri)))
    assert item.outcome is Outcome.REFUSED


def test_every_decision_is_in_the_feed(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg))
    [decision] = world.gate.decisions.feed("alice")
    assert decision.iri == item.decision and decision.target == item.memory
    assert decision.action.value == "create" and decision.actor == "agent"


def allergy(source: str, quote: str = "I am allergic to peanuts") -> dict[str, object]:
    return {
        "kind": "semantic",
        "title": "Allergic to peanuts",
        "confidence": 0.95,
        "claims": [{"subject": "I", "predicate": "kgm:allergicTo", "object": "peanuts"}],
        "evidence": [{"source": source, "quote": quote}],
    }


def test_second_hand_report_waits_until_a_first_hand_source_supports_it(world: World) -> None:
    reported = allergy("reported")
    reported["reported_source"] = {"role": "user", "text": "I am allergic to peanuts."}
    [waiting] = world.draft(reported)
    assert waiting.outcome is Outcome.PENDING  # agent authority cannot activate it
    record = world.memory(waiting.memory)
    [evidence] = record.evidence
    assert evidence.agent_reported and evidence.authority.value == "agent"
    first_hand = world.say("user", "By the way, I am allergic to peanuts.")
    [confirmed] = world.draft(allergy(first_hand))
    assert confirmed.outcome is Outcome.ACTIVE and confirmed.memory == waiting.memory
    record = world.memory(waiting.memory)
    assert record.status is MemoryStatus.ACTIVE
    assert {e.agent_reported for e in record.evidence} == {True, False}  # both kept


def test_write_mode_is_per_user_and_remembered(world: World) -> None:
    assert world.gate.mode("alice") is WriteMode.AUTONOMOUS
    world.gate.set_mode("alice", WriteMode.REVIEW)
    world.gate.set_mode("alice", WriteMode.REVIEW)  # idempotent
    assert world.gate.mode("alice") is WriteMode.REVIEW
    assert world.gate.mode("bob") is WriteMode.AUTONOMOUS
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg))
    assert item.outcome is Outcome.PENDING


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tags": [f"t{i}" for i in range(21)]}, "tags"),
        ({"kind": "rumour"}, "kind"),
        ({"confidence": -0.1}, "confidence"),
        ({"title": ""}, "title"),
        ({"excerpt": "two\nlines"}, "excerpt"),
        (
            {
                "claims": [
                    {
                        "subject": "I",
                        "predicate": "schema:worksFor",
                        "object": "Acme",
                        "value": "Acme",
                    }
                ]
            },
            "claims[0]",
        ),
        ({"claims": [{"subject": "I", "object": "Acme"}]}, "claims[0].predicate"),
        ({"steps": ["open the map"]}, "steps"),
        ({"triggers": ["when booking"]}, "triggers"),
        ({"kind": "procedural", "steps": ["open", "pick", "  "]}, "steps[2]"),
        ({"kind": "procedural", "steps": ["step"] * 51}, "steps"),
        ({"kind": "procedural", "triggers": ["x" * 301]}, "triggers[0]"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_malformed_drafts_name_the_item_and_field(
    world: World, change: dict[str, object], field: str
) -> None:
    msg = world.say("user", "I work at Acme.")
    before = world.store.count()
    with pytest.raises(DraftInvalid) as info:
        world.draft(works_at(msg), {**works_at(msg), **change})
    assert info.value.item == 1 and info.value.field == field
    assert world.store.count() == before


def test_authority_order_setting_changes_who_wins(world: World, home: object) -> None:
    from dataclasses import replace as dc_replace

    from kgmem.memory.gate import WriteGate

    settings = dc_replace(world.gate._settings, authority_order="tool,user,task,agent")
    gate = WriteGate(
        world.store,
        world.gate._queries,
        settings,
        world.clock,
        world.sources,
        world.gate._ontology,
        world.gate._validation,
    )
    first = world.say("user", "I work at Acme.")
    [old] = gate.draft(
        "alice", [works_at(first, predicate=str(EMPLOYER))], account_name="Alice"
    ).items
    tool = world.say(
        "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
    )
    draft = works_at(tool, "Globex", "Alice works at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["subject"] = "Alice"
    draft["claims"][0]["valid_from"] = "2026-05-01T00:00:00Z"
    [new] = gate.draft("alice", [draft], account_name="Alice").items
    # with tools ranked above users, a newer tool record supersedes the user's statement
    assert new.outcome is Outcome.ACTIVE and new.superseded == (old.memory,)


# -- batches: one view, one validation, one commit ------------------------------------------

_SHORT_TITLES = b"""
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix kgm: <https://w3id.org/kgmem/ns#> .
<urn:test:ShortTitle> a sh:NodeShape ;
    sh:targetClass kgm:Memory ;
    sh:property [ sh:path kgm:title ; sh:maxLength 30 ; sh:message "title too long" ] .
"""


def _short_titles(world: World) -> None:
    """An extra shape a draft can break without failing grounding (a long title)."""
    world.store.load(_SHORT_TITLES, RdfFormat.TURTLE, shapes_graph("test-short-titles"))


def test_batch_merges_into_a_memory_an_earlier_item_created(world: World) -> None:
    first = world.say("user", "I work at Acme.")
    second = world.say("user", "I work at Acme and I like jazz.")
    more = works_at(second)
    more["claims"].append({"subject": "I", "predicate": "kgm:likes", "value": "jazz"})
    more["evidence"].append({"source": second, "quote": "I like jazz"})
    created, merged = world.draft(works_at(first), more)
    assert created.outcome is Outcome.ACTIVE
    assert merged.outcome is Outcome.MERGED and merged.memory == created.memory
    memory = world.memory(created.memory)
    assert len(memory.claims) == 2 and len(memory.evidence) == 3
    # one Acme entity, made by the first item and found by the second
    acme = list(world.store.quads(ALICE.kg, None, KGM.nameKey, Literal("acme")))
    assert len(acme) == 1


def test_batch_refuses_only_the_item_that_breaks_a_shape(world: World) -> None:
    _short_titles(world)
    msg = world.say("user", "I work at Acme.")
    other = world.say("user", "I work at Globex.")
    long_title = works_at(msg, title="Alice works at Acme, and this title is far too long")
    refused, created, repeat, globex = world.draft(
        long_title, works_at(msg), works_at(msg), works_at(other, "Globex")
    )
    assert refused.outcome is Outcome.REFUSED and refused.memory is None
    assert "title too long" in refused.reasons and refused.violations
    # decided again without the refused item: the second creates, the third repeats it
    assert created.outcome is Outcome.ACTIVE
    assert repeat.outcome is Outcome.DISCARDED and repeat.memory == created.memory
    assert globex.outcome is Outcome.ACTIVE
    assert world.memory(created.memory).title == "Alice works at Acme"
    assert {m for m in world.store.quads(ALICE.kg, None, KGM.kind)} and all(
        "too long" not in str(q.object) for q in world.store.quads(ALICE.kg, None, KGM.title)
    )
    feed = world.gate.decisions.feed("alice")
    # the three decided items, and the refusal once, though item 0 was validated twice
    assert len(feed) == 4
    [refusal] = [d for d in feed if d.action is Action.REFUSE]
    assert refusal.iri == refused.decision and "title too long" in refusal.reason


def test_batch_is_written_all_or_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    first = world.say("user", "I work at Acme.")
    second = world.say("user", "I work at Globex.")
    before = world.store.count()
    decide = world.gate.decide

    def failing(*args: object, **kw: object) -> object:
        if args[1] == 1:
            raise RuntimeError("crash while deciding item 1")
        return decide(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(world.gate, "decide", failing)
    with pytest.raises(RuntimeError, match="item 1"):
        world.draft(works_at(first), works_at(second, "Globex"))
    assert world.store.count() == before  # item 0 was decided, but nothing was written


def _procedure(msg: str, **extra: object) -> dict[str, object]:
    return {
        "kind": "procedural",
        "title": "Book a flight",
        "confidence": 0.9,
        "steps": ["Open the seat map", "Pick an aisle seat", "Pay with the work card"],
        "triggers": ["when booking a flight", "when booking a flight"],
        "evidence": [{"source": msg, "quote": SEAT_STEPS}],
        **extra,
    }


SEAT_STEPS = "open the seat map, always pick an aisle seat and pay with the work card"
SEAT_SAID = f"When you book my flights, {SEAT_STEPS}."


def test_a_procedures_steps_and_triggers_are_stored_in_order(world: World) -> None:
    msg = world.say("user", SEAT_SAID)
    [item] = world.draft(_procedure(msg))
    assert item.outcome is Outcome.ACTIVE, item.reasons
    memory = world.memory(item.memory)
    assert memory.steps == ("Open the seat map", "Pick an aisle seat", "Pay with the work card")
    assert memory.triggers == ("when booking a flight",)
    steps = list(world.store.quads(ALICE.kg, item.memory, KGM.step))
    assert len(steps) == 3  # kgm:Step nodes, not only body text


def test_archiving_and_reverting_a_procedure_keep_and_remove_its_steps(world: World) -> None:
    msg = world.say("user", SEAT_SAID)
    [item] = world.draft(_procedure(msg))
    archived = world.lifecycle.archive("alice", item.memory)
    assert world.memory(item.memory).steps[0] == "Open the seat map"
    world.lifecycle.revert("alice", archived)
    world.lifecycle.revert("alice", item.decision)  # the create: nothing of it is left
    assert world.memory(item.memory) is None
    assert list(world.store.quads(ALICE.kg, None, KGM.instruction)) == []


def test_a_procedure_without_a_usable_quote_is_refused_whatever_its_steps(world: World) -> None:
    msg = world.say("user", SEAT_SAID)
    before = world.memory_count()
    [item] = world.draft(_procedure(msg, evidence=[{"source": msg, "quote": "pay with cash"}]))
    assert item.outcome is Outcome.REFUSED
    assert world.memory_count() == before  # the refusal is a decision in ops, nothing else
    assert list(world.store.quads(ALICE.kg, None, KGM.instruction)) == []


def test_restating_a_procedure_with_new_steps_replaces_them_and_adds_triggers(
    world: World,
) -> None:
    first = world.say("user", "I work at Acme, and I file expenses on Fridays.")
    second = world.say("user", "As I said, I work at Acme.")
    steps = ["Collect receipts", "File them in the portal"]
    [created] = world.draft(
        works_at(first, kind="procedural", steps=steps, triggers=["on Fridays"])
    )
    assert created.outcome is Outcome.ACTIVE, created.reasons
    [again] = world.draft(
        works_at(second, kind="procedural", steps=["Scan receipts"], triggers=["month end"])
    )
    assert again.outcome is Outcome.DISCARDED and again.memory == created.memory
    assert "its steps are now 1 (were 2)" in again.reasons
    memory = world.memory(created.memory)
    assert memory.steps == ("Scan receipts",)
    assert memory.triggers == ("month end", "on Fridays")
    world.lifecycle.revert("alice", again.decision)
    assert world.memory(created.memory).steps == tuple(steps)


def test_a_claimless_draft_told_again_is_folded_not_copied(world: World) -> None:
    """A procedure or an event has no claims for the pre-pass to find known: drafting one
    again (a second consolidation pass, a host re-sending a session, the demo run twice)
    made a copy each time. The same kind (and time) quoting the same spans is one memory."""
    msg = world.say("user", SEAT_SAID)
    ran = world.say("user", "Last Tuesday I ran the Lisbon half marathon.")
    event = {
        "kind": "episodic",
        "title": "Ran the Lisbon half marathon",
        "occurred_at": "2026-11-24T09:00:00Z",
        "evidence": [{"source": ran, "quote": "I ran the Lisbon half marathon"}],
    }
    note = {
        "kind": "semantic",
        "title": "Seat and card when booking",
        "evidence": [{"source": msg, "quote": SEAT_STEPS}],
    }
    first = world.draft(_procedure(msg), event, note)
    assert [i.outcome for i in first] == [Outcome.ACTIVE] * 3, [i.reasons for i in first]
    count = world.memory_count()
    again = world.draft(_procedure(msg, title="Booking a flight"), event)
    assert [i.outcome for i in again] == [Outcome.DISCARDED] * 2, [i.reasons for i in again]
    assert [i.memory for i in again] == [i.memory for i in first[:2]]
    assert all("told again" in " ".join(i.reasons) for i in again)
    assert world.memory_count() == count  # nothing new but the decisions, kept in ops

    # not a restatement: another time for the event, another kind over the same quote
    other_day = world.draft({**event, "occurred_at": "2025-11-23T09:00:00Z"})
    assert other_day[0].outcome is Outcome.ACTIVE and other_day[0].memory != first[1].memory
    as_event = world.draft({**note, "kind": "episodic", "occurred_at": "2026-11-20T00:00:00Z"})
    assert as_event[0].outcome is Outcome.ACTIVE

    # a memory no longer active is not what a new draft restates
    world.lifecycle.archive("alice", first[0].memory)
    [fresh] = world.draft(_procedure(msg))
    assert fresh.outcome is Outcome.ACTIVE and fresh.memory != first[0].memory
    # a claimless note of another kind is left to the rest of the gate (the vault drafts a
    # changed line as written, quoting what a known claim's memory just took as evidence)
    [note_again] = world.draft(note)
    assert note_again.outcome is Outcome.ACTIVE
    assert "told again" not in " ".join(note_again.reasons)


def test_a_periodic_refusal_is_recorded_once_per_draft(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [draft] = world.gate.parse([works_at(msg, "Globex")])
    refused = ItemResult(0, Outcome.REFUSED, reasons=("not grounded",))
    recorded = []
    for _ in range(3):  # a periodic job derives the same draft each run
        with world.store.transaction() as tx:
            result = world.gate.refusal("alice", draft, refused, Actor.CONSOLIDATION, tx, once=True)
        recorded.append(result.decision)
    [decision] = world.gate.decisions.feed("alice")
    assert recorded == [decision.iri, None, None] and decision.actor == "consolidation"


def test_a_procedure_with_a_step_no_quote_states_is_refused(world: World) -> None:
    msg = world.say("user", SEAT_SAID)
    invented = ["Open the seat map", "Pick a window seat", "Pay with the work card"]
    [item] = world.draft(_procedure(msg, steps=invented))
    assert item.outcome is Outcome.REFUSED
    assert any("steps[1]" in r for r in item.reasons)
    assert list(world.store.quads(ALICE.kg, None, KGM.instruction)) == []


def _owns(source: str, owner: str, quote: str) -> dict[str, Any]:
    types = {owner: "schema:Organization", "ledger-api": "schema:SoftwareApplication"}
    return claim_draft(source, quote, owner, "schema:owns", types=types, object="ledger-api")


def test_a_thing_that_moved_to_a_new_holder_leaves_the_old_one(world: World) -> None:
    first = world.say("user", "Core Ledger owns ledger-api, Lena is their tech lead.")
    [old] = world.draft(_owns(first, "Core Ledger", "Core Ledger owns ledger-api"))
    assert old.outcome is Outcome.ACTIVE
    # another owner said plainly is one more owner: nothing says the first stopped
    also = world.say("user", "Data Guild owns ledger-api too.")
    [more] = world.draft(_owns(also, "Data Guild", "Data Guild owns ledger-api"))
    assert more.outcome is Outcome.ACTIVE
    assert world.memory(old.memory).status is MemoryStatus.ACTIVE
    moved = world.say("user", "Big change: ledger-api moved to the Payments Platform team.")
    quote = "ledger-api moved to the Payments Platform team"
    [new] = world.draft(_owns(moved, "Payments Platform", quote))
    assert new.outcome is Outcome.ACTIVE
    assert old.memory in new.superseded and more.memory in new.superseded
    assert world.memory(old.memory).status is MemoryStatus.SUPERSEDED


def test_a_batch_that_moves_a_thing_its_earlier_draft_gave_closes_that_one(world: World) -> None:
    """One batch: "Core Ledger owns ledger-api", then "it moved to Payments Platform". The
    second draft weighs the first one's pending claim (it used to fail the whole batch)."""
    first = world.say("user", "Core Ledger owns ledger-api.")
    moved = world.say("user", "Big change: ledger-api moved to the Payments Platform team.")
    quote = "ledger-api moved to the Payments Platform team"
    old, new = world.draft(
        _owns(first, "Core Ledger", "Core Ledger owns ledger-api"),
        _owns(moved, "Payments Platform", quote),
    )
    assert old.outcome is Outcome.ACTIVE and new.outcome is Outcome.ACTIVE, new.reasons
    assert new.superseded == (old.memory,)
    assert world.memory(old.memory).status is MemoryStatus.SUPERSEDED
