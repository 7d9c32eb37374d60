"""Periodic consolidation on a real on-disk store: episodes → routine, references → fact.

Every memory is made the way an agent makes it: a message or note is ingested, then drafted
through the write gate with an exact quote. The tests read the store back (steps, triggers,
``derivedFrom`` edges, evidence, decisions) and revert decisions to check the exact prior state.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from typing import Any

import pytest
from rdflib import URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.memory import Action, MemoryKind, MemoryStatus, Outcome, SupportKind, WriteMode
from kgmem.memory.listing import MemoryList
from kgmem.memory.records import MemoryRecord
from kgmem.memory.source_inputs import MessageIn, NoteIn
from kgmem.pipeline.periodic import PeriodicReport
from kgmem.pipeline.periodic.procedures import common_steps, split_steps, trigger_phrase
from kgmem.store import Quad, UserGraphs
from kgmem.vocab import KGM, SDO
from tests.helpers import memory_state

UID = "alice"
G = UserGraphs(UID)
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
RUNS = (
    "Ran the release checklist: tag the release, run the tests, build, publish.",
    "Ran the release checklist: tag the release, build, then publish.",
    "Ran the release checklist:\n1. Tag the release\n2. Build\n3. Publish\n4. Announce it",
)


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    built = build_services(settings, clock=FixedClock(NOW))
    yield built
    built.close()


def _say(services: Services, text: str, *, uid: str = UID) -> str:
    chat = "chat-" + sha256(text.encode()).hexdigest()[:12]
    msg = MessageIn(chat=chat, turn=0, role="user", text=text)
    return str(services.sources.ingest_message(uid, msg).iri)


def _draft(services: Services, draft: dict[str, Any], *, uid: str = UID, **kw: Any) -> Any:
    [item] = services.gate.draft(uid, [draft], account_name="Alice", **kw).items
    assert item.memory is not None, item.reasons
    return item


def _episode(services: Services, body: str, day: int, *, uid: str = UID, **kw: Any) -> URIRef:
    source = _say(services, f"Day {day}: I ran the release checklist. {body}", uid=uid)
    draft = {
        "kind": "episodic",
        "title": "Ran the release checklist",
        "body": body,
        "confidence": 0.9,
        "occurred_at": (NOW - timedelta(days=30 - day)).isoformat(),
        "entities": [{"name": "release checklist"}],
        "evidence": [{"source": source, "quote": "I ran the release checklist"}],
    }
    memory: URIRef = _draft(services, draft, uid=uid, **kw).memory
    return memory


def _episodes(services: Services, *bodies: str) -> list[URIRef]:
    return [_episode(services, body, day) for day, body in enumerate(bodies, 1)]


def _reference(services: Services, note: tuple[str, str, str, dict[str, str]]) -> URIRef:
    path, text, quote, claim = note
    source = services.sources.ingest_note(UID, NoteIn(path=path, text=text)).iri
    draft = {
        "kind": "reference",
        "title": f"Notes: {path}",
        "confidence": 0.95,
        "claims": [{"subject": "Acme", **claim}],
        "entities": [
            {"name": "Acme", "types": ["schema:Organization"]},
            {"name": "Berlin", "types": ["schema:City"]},
        ],
        "evidence": [{"source": str(source), "quote": quote}],
    }
    memory: URIRef = _draft(services, draft).memory
    return memory


def _record(services: Services, memory: URIRef) -> MemoryRecord:
    return services.lifecycle.get(UID, memory)


def _steps(services: Services, memory: URIRef) -> list[tuple[int, str]]:
    rows = services.store.select(
        services.queries["pipeline/memory_steps"], {"graph": G.kg, "memory": memory}
    )
    return [(int(str(r["position"])), str(r["instruction"])) for r in rows]


def _triggers(services: Services, memory: URIRef) -> set[str]:
    return {str(q.object) for q in services.store.quads(G.kg, memory, KGM.trigger)}


def _of_kind(services: Services, kind: MemoryKind) -> list[URIRef]:
    listing = MemoryList(services.store, services.queries)
    return [m.iri for m in listing.memories(UID, kind=kind)]


def _state(services: Services) -> tuple[set[Quad], dict[str, str]]:
    return memory_state(services, UID)


def _entity(services: Services, name: str) -> URIRef:
    [entity] = {
        q.subject for q in services.store.quads(G.kg, None, KGM.name) if str(q.object) == name
    }
    assert isinstance(entity, URIRef)
    return entity


def _periodic(services: Services) -> PeriodicReport:
    return services.consolidation.periodic(UID)


# -- the rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("Ran the checklist: tag, build, and publish.", ("tag", "build", "publish")),
        ("Deploy:\n- pull\n- migrate\n- restart", ("pull", "migrate", "restart")),
        (
            "Pulled the code, then migrated -> restarted",
            ("Pulled the code", "migrated", "restarted"),
        ),
        ("Lunch with Ann, Bob and Carl", ()),  # a list of names is no routine
        ("Ran the checklist: tag", ()),  # one step is no routine
        ("See https://example.org/a, b", ()),
    ],
)
def test_split_steps_reads_lists_only(text: str, steps: tuple[str, ...]) -> None:
    assert split_steps(text)[1] == steps


def test_common_steps_keeps_order_and_the_oldest_wording() -> None:
    runs = [["Tag", "test", "Build", "publish"], ["tag", "build", "publish!"], ["build", "tag"]]
    assert common_steps(runs[:2]) == ("Tag", "Build", "publish")
    assert common_steps(runs) == ("Tag",)  # "build" after "tag" in two runs, before in one


def test_trigger_phrase_is_the_longest_shared_run_of_words() -> None:
    heads = ["Alice ran the release checklist", "Ran the release checklist for 1.2"]
    assert trigger_phrase(heads) == "ran the release checklist"
    assert trigger_phrase(["the deploy", "a release"]) is None


# -- episodes -> procedure -----------------------------------------------------------------


def test_three_episodes_become_one_routine(services: Services) -> None:
    episodes = _episodes(services, *RUNS)
    report = _periodic(services)

    [routine] = report.procedures_created
    assert report.changed == 1 and report.refused == ()
    record = _record(services, routine)
    assert record.kind is MemoryKind.PROCEDURAL and record.status is MemoryStatus.ACTIVE
    assert record.title == "Routine: Ran the release checklist"
    assert _steps(services, routine) == [(1, "tag the release"), (2, "build"), (3, "publish")]
    assert _triggers(services, routine) == {"Ran the release checklist", "release checklist"}
    # stored as any drafted procedure's: its record reads them, so every surface shows them
    assert record.steps == ("tag the release", "build", "publish")
    assert set(record.triggers) == {"Ran the release checklist", "release checklist"}
    assert set(record.derived_from) == set(episodes)
    assert record.about == (_entity(services, "release checklist"),)
    # evidence: every episode's quote, same source and span, now *derived* support
    inputs = [_record(services, e) for e in episodes]
    expected = {(e.source, e.quote, e.span) for r in inputs for e in r.evidence}
    assert {(e.source, e.quote, e.span) for e in record.evidence} == expected
    assert {e.support for e in record.evidence} == {SupportKind.DERIVED}
    assert record.confidence <= min(r.confidence for r in inputs)
    assert record.confidence <= 0.7  # what derived support allows
    # one decision in the feed, with its reason, by consolidation
    [decision] = report.decisions
    entry = next(d for d in services.gate.decisions.feed(UID) if d.iri == decision)
    assert entry.action is Action.CREATE and entry.target == routine
    assert entry.actor == "consolidation"
    assert "3 episodes about release checklist share 3 steps" in entry.reason


def test_reverting_the_routine_restores_the_state_exactly(services: Services) -> None:
    _episodes(services, *RUNS)
    before = _state(services)
    report = _periodic(services)
    assert _state(services) != before
    services.lifecycle.revert(UID, report.decisions[0])
    assert _state(services) == before
    assert _periodic(services).changed == 0  # a reverted derivation is not made again
    assert _state(services) == before


def test_forgetting_a_routine_purges_its_steps(services: Services) -> None:
    _episodes(services, *RUNS)
    [routine] = _periodic(services).procedures_created
    steps = {q.object for q in services.store.quads(UserGraphs(UID).kg, routine, KGM.step)}
    assert len(steps) == 3
    services.lifecycle.forget(UID, routine)
    for graph in UserGraphs(UID).standing:
        for step in steps:
            assert list(services.store.quads(graph, step)) == []
        assert list(services.store.quads(graph, routine)) == []


def test_two_episodes_are_no_routine(services: Services) -> None:
    _episodes(services, *RUNS[:2])
    assert _periodic(services) == PeriodicReport(UID)
    assert _of_kind(services, MemoryKind.PROCEDURAL) == []


def test_a_second_run_changes_nothing(services: Services) -> None:
    _episodes(services, *RUNS)
    _periodic(services)
    state, feed = _state(services), services.gate.decisions.feed(UID)
    assert _periodic(services) == PeriodicReport(UID)
    assert _state(services) == state
    assert services.gate.decisions.feed(UID) == feed  # not even an empty decision


def test_a_fourth_episode_refreshes_the_routine(services: Services) -> None:
    episodes = _episodes(services, *RUNS)
    [routine] = _periodic(services).procedures_created
    fourth = _episode(services, "Ran the release checklist: tag the release, build, publish.", 9)
    before = _state(services)
    report = _periodic(services)

    assert report.procedures_created == () and report.procedures_updated == (routine,)
    assert _of_kind(services, MemoryKind.PROCEDURAL) == [routine]
    record = _record(services, routine)
    assert set(record.derived_from) == {*episodes, fourth}
    [new] = _record(services, fourth).evidence
    assert (new.source, new.span, SupportKind.DERIVED) in {
        (e.source, e.span, e.support) for e in record.evidence
    }
    assert len(record.evidence) == 4
    assert _steps(services, routine) == [(1, "tag the release"), (2, "build"), (3, "publish")]
    assert "Seen in 4 episodes." in record.body
    [decision] = report.decisions
    entry = next(d for d in services.gate.decisions.feed(UID) if d.iri == decision)
    assert entry.action is Action.MERGE and entry.target == routine
    assert _periodic(services).changed == 0
    services.lifecycle.revert(UID, decision)
    assert _state(services) == before


def test_a_fourth_episode_that_skips_a_step_narrows_the_routine(services: Services) -> None:
    _episodes(services, *RUNS)
    [routine] = _periodic(services).procedures_created
    _episode(services, "Ran the release checklist: tag the release, publish.", 9)
    report = _periodic(services)
    assert report.procedures_updated == (routine,)
    assert _steps(services, routine) == [(1, "tag the release"), (2, "publish")]
    assert _record(services, routine).steps == ("tag the release", "publish")
    assert len(_triggers(services, routine)) == 2  # a refresh keeps the triggers
    [decision] = report.decisions
    entry = next(d for d in services.gate.decisions.feed(UID) if d.iri == decision)
    assert "its steps are now 2 (were 3)" in entry.reason


def test_episodes_that_share_no_steps_are_no_routine(services: Services) -> None:
    _episodes(services, RUNS[0], "Ran the release checklist: announce, celebrate.", RUNS[1])
    assert _periodic(services).changed == 0


def test_episodes_of_another_routine_of_the_same_subject_make_their_own(
    services: Services,
) -> None:
    _episodes(services, *RUNS)
    [first] = _periodic(services).procedures_created
    other = "Ran the release checklist: write the changelog, bump the version."
    later = [_episode(services, other, day) for day in (10, 11, 12)]
    report = _periodic(services)
    [second] = report.procedures_created
    assert report.procedures_updated == ()
    assert set(_record(services, second).derived_from) == set(later)
    assert _steps(services, second) == [(1, "write the changelog"), (2, "bump the version")]
    assert len(_steps(services, first)) == 3  # untouched


def _pending(services: Services) -> None:
    _episode(services, RUNS[2], 3, mode=WriteMode.REVIEW)


def _archived(services: Services) -> None:
    services.lifecycle.archive(UID, _episode(services, RUNS[2], 3))


def _quarantined(services: Services) -> None:
    fact = _say(services, "I work at Acme.")
    known = {
        "kind": "semantic",
        "title": "Works at Acme",
        "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Acme"}],
        "evidence": [{"source": fact, "quote": "I work at Acme"}],
    }
    services.lifecycle.pin(UID, _draft(services, known).memory)
    source = _say(services, f"I do not work at Acme. {RUNS[1]}")
    draft = {
        "kind": "episodic",
        "title": "Ran the release checklist",
        "body": RUNS[1],
        "occurred_at": NOW.isoformat(),
        "entities": [{"name": "release checklist"}],
        "claims": [
            {"subject": "I", "predicate": "schema:worksFor", "object": "Acme", "negated": True}
        ],
        "evidence": [{"source": source, "quote": "I do not work at Acme"}],
    }
    assert _draft(services, draft).outcome is Outcome.QUARANTINED


@pytest.mark.parametrize("third", [_pending, _archived, _quarantined])
def test_inactive_episodes_are_never_inputs(services: Services, third: Any) -> None:
    _episodes(services, *RUNS[:2])
    third(services)
    assert _periodic(services).changed == 0
    assert _of_kind(services, MemoryKind.PROCEDURAL) == []


def test_a_routine_waiting_for_review_is_refreshed_only_once_approved(
    services: Services,
) -> None:
    _episodes(services, *RUNS)
    services.gate.set_mode(UID, WriteMode.REVIEW)  # the routine waits in the review inbox
    [routine] = _periodic(services).procedures_created
    assert _record(services, routine).status is MemoryStatus.PENDING
    fourth = _episode(services, RUNS[1], 9, mode=WriteMode.AUTONOMOUS)
    assert _periodic(services).changed == 0
    services.lifecycle.approve(UID, routine)
    assert _periodic(services).procedures_updated == (routine,)
    assert fourth in _record(services, routine).derived_from


def test_an_archived_routine_is_not_made_again(services: Services) -> None:
    _episodes(services, *RUNS)
    [routine] = _periodic(services).procedures_created
    services.lifecycle.archive(UID, routine)
    _episode(services, RUNS[0], 9)
    assert _periodic(services).changed == 0
    assert _of_kind(services, MemoryKind.PROCEDURAL) == [routine]


# -- references -> semantic fact -----------------------------------------------------------

LOCATED = {"predicate": "schema:location", "object": "Berlin"}
FOUNDED = {"predicate": "schema:foundingDate", "value": "2001-05-04"}
NAMED = {"predicate": "schema:alternateName", "value": "Acme Rockets"}
NOTES = (
    ("suppliers.md", "Acme is located in Berlin. They ship on Mondays.",
     "Acme is located in Berlin", LOCATED),
    ("history.md", "Acme was founded on 2001-05-04 by two engineers.",
     "Acme was founded on 2001-05-04", FOUNDED),
    ("names.md", "Acme is also called Acme Rockets.", "Acme is also called Acme Rockets", NAMED),
)  # fmt: skip


def _claims(services: Services, record: MemoryRecord) -> set[tuple[URIRef, str]]:
    """(predicate, object name or value) of each claim of ``record``."""
    out = set()
    for claim in record.claims:
        names = [str(q.object) for q in services.store.quads(G.kg, claim.object, KGM.name)]
        out.add((claim.predicate, names[0] if claim.object is not None else str(claim.value)))
    return out


def test_references_sharing_an_entity_become_one_fact(services: Services) -> None:
    refs = [_reference(services, note) for note in NOTES[:2]]
    report = _periodic(services)

    [fact] = report.facts_created
    assert report.changed == 1 and report.refused == ()
    record = _record(services, fact)
    assert record.kind is MemoryKind.SEMANTIC and record.status is MemoryStatus.ACTIVE
    assert set(record.derived_from) == set(refs)
    assert {c.subject for c in record.claims} == {_entity(services, "Acme")}
    assert _claims(services, record) == {
        (SDO.location, "Berlin"),
        (SDO.foundingDate, "2001-05-04"),
    }
    inputs = [_record(services, r) for r in refs]
    assert {(e.source, e.span) for r in inputs for e in r.evidence} == {
        (e.source, e.span) for e in record.evidence
    }
    assert {e.support for e in record.evidence} == {SupportKind.DERIVED}
    assert record.confidence <= 0.7
    entry = next(d for d in services.gate.decisions.feed(UID) if d.target == fact)
    assert entry.action is Action.CREATE and "2 references about Acme" in entry.reason
    assert _periodic(services).changed == 0  # idempotent


def test_one_reference_is_no_cluster(services: Services) -> None:
    _reference(services, NOTES[0])
    assert _periodic(services) == PeriodicReport(UID)


def test_a_new_reference_merges_into_the_fact(services: Services) -> None:
    refs = [_reference(services, note) for note in NOTES[:2]]
    [fact] = _periodic(services).facts_created
    third = _reference(services, NOTES[2])
    before = _state(services)
    report = _periodic(services)
    assert report.facts_created == () and report.facts_updated == (fact,)
    record = _record(services, fact)
    assert set(record.derived_from) == {*refs, third}
    assert (SDO.alternateName, "Acme Rockets") in _claims(services, record)
    assert _of_kind(services, MemoryKind.SEMANTIC) == [fact]
    [decision] = report.decisions
    entry = next(d for d in services.gate.decisions.feed(UID) if d.iri == decision)
    assert entry.action is Action.MERGE and entry.target == fact
    assert _periodic(services).changed == 0
    services.lifecycle.revert(UID, decision)
    assert _state(services) == before


def test_an_archived_fact_is_not_made_again(services: Services) -> None:
    for note in NOTES[:2]:
        _reference(services, note)
    [fact] = _periodic(services).facts_created
    services.lifecycle.archive(UID, fact)
    _reference(services, NOTES[2])
    assert _periodic(services).changed == 0
    assert _of_kind(services, MemoryKind.SEMANTIC) == [fact]


def test_a_fact_already_known_is_discarded_into_that_memory(services: Services) -> None:
    # two references wait for review while the user states both facts themselves
    services.gate.set_mode(UID, WriteMode.REVIEW)
    refs = [_reference(services, note) for note in NOTES[:2]]
    services.gate.set_mode(UID, WriteMode.AUTONOMOUS)
    said = _say(services, "Acme is located in Berlin. Acme was founded on 2001-05-04.")
    known = {
        "kind": "semantic",
        "title": "Acme",
        "claims": [{"subject": "Acme", **LOCATED}, {"subject": "Acme", **FOUNDED}],
        "evidence": [
            {"source": said, "quote": "Acme is located in Berlin"},
            {"source": said, "quote": "Acme was founded on 2001-05-04"},
        ],
    }
    memory = _draft(services, known).memory
    for ref in refs:
        services.lifecycle.approve(UID, ref)
    report = _periodic(services)
    assert report.facts_created == () and report.facts_updated == (memory,)
    assert set(_record(services, memory).derived_from) == set(refs)
    assert _of_kind(services, MemoryKind.SEMANTIC) == [memory]
    [decision] = report.decisions
    entry = next(d for d in services.gate.decisions.feed(UID) if d.iri == decision)
    assert entry.action is Action.DISCARD and "already known" in entry.reason
    assert _periodic(services).changed == 0


def test_a_pending_reference_is_never_an_input(services: Services) -> None:
    _reference(services, NOTES[0])
    services.gate.set_mode(UID, WriteMode.REVIEW)
    _reference(services, NOTES[1])
    assert _periodic(services).changed == 0
    assert _of_kind(services, MemoryKind.SEMANTIC) == []
