"""The prompt context: profile, short memory and playbook index, capped, within a budget."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timedelta
from typing import Any

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.config import Settings, load_settings
from kgmem.errors import GraphNameError
from kgmem.memory.gate import Outcome
from kgmem.memory.short_memory import ShortMemoryPolicy
from kgmem.memory.source_inputs import MessageIn
from kgmem.retrieval import (
    MIN_BUDGET_TOKENS,
    ContextLimits,
    InvalidSearch,
    MemorySearch,
    PromptContext,
    PromptContextPacket,
    estimate_tokens,
)
from kgmem.store import Changeset, NodeKind, Quad, UserGraphs, stable_node
from kgmem.vocab import KGM, RDF
from tests.memory.world import NOW, World, works_at
from tests.retrieval.support import QUERIES

MARKER = "… {n} more playbooks not shown (memory_search finds them)"


def context(world: World, **limits: Any) -> PromptContext:
    return PromptContext(world.store, QUERIES, world.clock, ContextLimits(**limits))


def procedure(world: World, title: str, excerpt: str, uid: str = "alice") -> URIRef:
    """An active procedural memory of ``uid``, grounded in what they said."""
    said = f"To {title.lower()}: {excerpt}"
    if uid == "alice":
        source = world.say("user", said)
        [item] = world.draft(_procedure(title, excerpt, source, said))
    else:
        msg = MessageIn(chat="c", turn=0, role="user", text=said)
        source = str(world.sources.ingest_message(uid, msg).iri)
        draft = _procedure(title, excerpt, source, said)
        [item] = world.gate.draft(uid, [draft], account_name=uid.title()).items
    assert item.outcome is Outcome.ACTIVE and item.memory is not None, item
    return item.memory


def _procedure(title: str, excerpt: str, source: str, said: str) -> dict[str, Any]:
    evidence = [{"source": source, "quote": said}]
    return {
        "kind": "procedural",
        "title": title,
        "excerpt": excerpt,
        "confidence": 0.9,
        "evidence": evidence,
    }


def playbook(
    world: World,
    name: str,
    uses: int,
    *,
    uid: str = "alice",
    when: datetime = NOW,
    of: URIRef | None = None,
    excerpt: str | None = None,
) -> URIRef:
    """A playbook page as the author stage stores it, cited ``uses`` times."""
    page = stable_node(uid, NodeKind.PAGE, "playbook", name)
    revision, g = URIRef(f"{page}#r1"), UserGraphs(uid).kg
    quads = [
        Quad(page, RDF.type, KGM.Page, g),
        Quad(page, RDF.type, KGM.Playbook, g),
        Quad(page, KGM.path, Literal(f"memory/playbooks/{name}.md"), g),
        Quad(page, KGM.title, Literal(name.replace("-", " ").title()), g),
        Quad(page, KGM.excerpt, Literal(excerpt or f"What to do to {name.replace('-', ' ')}."), g),
        Quad(page, KGM.useCount, Literal(uses, datatype=XSD.integer), g),
        Quad(page, KGM.currentRevision, revision, g),
        Quad(revision, RDF.type, KGM.PageRevision, g),
        Quad(revision, KGM.revisionOf, page, g),
        Quad(revision, KGM.revision, Literal(1, datatype=XSD.integer), g),
        Quad(revision, KGM.markdown, Literal(f"# {name}\n"), g),
        Quad(revision, KGM.createdAt, Literal(when, datatype=XSD.dateTime), g),
    ]
    if of is not None:
        quads.append(Quad(page, KGM.pageOf, of, g))
    world.store.commit(Changeset.of(quads))
    return page


def note(world: World, text: str, age_days: float, uid: str = "alice") -> None:
    """A short note written ``age_days`` before NOW."""
    world.clock.current = NOW - timedelta(days=age_days)
    world.sources.remember(uid, text)
    world.clock.current = NOW


def learn_about_alice(world: World) -> None:
    """Alice works at Acme and is a staff engineer (active memories about her own entity)."""
    said = "I work at Acme as a staff engineer"
    draft = works_at(world.say("user", said), quote=said)
    draft["claims"].append(
        {"subject": "I", "predicate": "schema:jobTitle", "value": "staff engineer"}
    )
    [item] = world.draft(draft)
    assert item.outcome is Outcome.ACTIVE, item


def lines(packet: PromptContextPacket) -> list[str]:
    return packet.render().splitlines()


# -- profile ---------------------------------------------------------------------------------


def test_profile_has_account_timezone_and_learned_attributes(world: World) -> None:
    learn_about_alice(world)
    packet = context(world).prompt_context("alice", account_name="Alice", timezone="Europe/Paris")
    profile = packet.profile
    assert (profile.account_name, profile.timezone) == ("Alice", "Europe/Paris")
    assert {(f.label, f.value) for f in profile.items} == {
        ("works for", "Acme"),
        ("job title", "staff engineer"),
    }
    text = lines(packet)
    assert text[:3] == [
        "## User profile",
        "- Account name: Alice",
        "- Timezone: Europe/Paris (local time 2026-06-01 14:00, Monday)",  # NOW is 12:00 UTC
    ]
    assert "- works for: Acme" in text and "- job title: staff engineer" in text
    assert profile.truncated == 0


def test_profile_falls_back_to_the_own_entity_name_and_drops_archived_facts(world: World) -> None:
    learn_about_alice(world)
    builder = context(world)
    packet = builder.prompt_context("alice")
    assert packet.profile.account_name == "Alice"  # the user's own entity is named so
    assert packet.profile.timezone is None and packet.profile.local_time is None
    [memory] = {f.memory for f in packet.profile.items}
    assert memory is not None
    world.lifecycle.archive("alice", URIRef(memory))
    after = builder.prompt_context("alice")
    assert after.profile.items == () and "works for" not in after.render()


def test_profile_cap_marks_the_facts_left_out(world: World) -> None:
    learn_about_alice(world)
    packet = context(world, profile_cap=1).prompt_context("alice")
    assert len(packet.profile.items) == 1 and packet.profile.truncated == 1
    assert "… 1 more profile fact not shown (memory_search finds them)" in lines(packet)


def test_an_unknown_timezone_is_shown_without_a_local_time(world: World) -> None:
    packet = context(world).prompt_context("alice", timezone="Mars/Olympus_Mons\n## Evil")
    assert packet.profile.local_time is None
    assert lines(packet) == ["## User profile", "- Timezone: Mars/Olympus_Mons ## Evil"]


# -- short memory ----------------------------------------------------------------------------


def test_short_memory_is_ordered_by_decay_and_old_notes_leave(world: World) -> None:
    for text, age in [("two weeks", 14), ("today", 0), ("long ago", 60), ("last week", 7)]:
        note(world, text, age)
    packet = context(world).prompt_context("alice")
    assert [n.text for n in packet.short_memory.items] == ["today", "last week", "two weeks"]
    scores = [n.score for n in packet.short_memory.items]
    assert scores == sorted(scores, reverse=True) and scores[2] == pytest.approx(0.5)
    assert packet.short_memory.truncated == 0  # below the threshold is not "truncated"
    assert "- 2026-05-25: last week" in lines(packet)
    assert "long ago" not in packet.render()


def test_short_memory_cap_marks_the_notes_left_out(world: World) -> None:
    for age in range(5):
        note(world, f"note {age}", age)
    limits = {"short_memory": ShortMemoryPolicy(cap=2)}
    packet = context(world, **limits).prompt_context("alice")
    assert [n.text for n in packet.short_memory.items] == ["note 0", "note 1"]
    assert packet.short_memory.truncated == 3
    assert lines(packet)[-1] == "… 3 more short notes not shown"


# -- playbook index --------------------------------------------------------------------------


def test_playbooks_are_ordered_by_use_then_recency(world: World) -> None:
    deploy = procedure(world, "Deploy the app", "run make deploy, then watch the logs")
    backup = procedure(world, "Back up the database", "run the nightly dump by hand")
    world.lifecycle.used("alice", [deploy])
    world.lifecycle.used("alice", [deploy])
    playbook(world, "restart-billing", 5)
    playbook(world, "rotate-keys", 1, when=NOW - timedelta(days=3))
    playbook(world, "renew-certs", 1, when=NOW - timedelta(days=1))
    packet = context(world).prompt_context("alice")
    titles = [p.title for p in packet.playbooks.items]
    assert titles == [
        "Restart Billing",  # 5 uses
        "Deploy the app",  # 2 uses
        "Renew Certs",  # 1 use, newer
        "Rotate Keys",  # 1 use, older
        "Back up the database",  # never used
    ]
    deploy_line = f"- **Deploy the app** — run make deploy, then watch the logs (memory `{deploy}`)"
    text = lines(packet)
    assert deploy_line in text
    restart = "What to do to restart billing. (`memory/playbooks/restart-billing.md`)"
    assert text[text.index("## Playbook index") + 1] == f"- **Restart Billing** — {restart}"
    assert str(backup) in packet.render()


def test_citing_a_playbook_moves_it_up(world: World, search: MemorySearch) -> None:
    early = playbook(world, "restart-billing", 1)
    late = playbook(world, "rotate-keys", 1, when=NOW - timedelta(days=3))
    builder = context(world)
    before = [p.id for p in builder.prompt_context("alice").playbooks.items]
    assert before == [str(early), str(late)]  # equal use: the newer revision first
    search.memory_cite("alice", str(late))
    after = builder.prompt_context("alice").playbooks
    assert [p.id for p in after.items] == [str(late), str(early)]
    assert after.items[0].use_count == 2


def test_a_procedure_with_a_playbook_is_listed_once_by_its_page(world: World) -> None:
    memory = procedure(world, "Restart billing", "drain the queue first")
    page = playbook(world, "restart-billing", 0, of=memory)
    items = context(world).prompt_context("alice").playbooks.items
    assert [(p.id, p.kind) for p in items] == [(str(page), "playbook")]


def test_playbook_cap_marks_truncation_with_the_exact_count(
    world: World, search: MemorySearch
) -> None:
    for i in range(10):
        playbook(world, f"task-{i:02d}", uses=i)
    packet = context(world, playbook_cap=3).prompt_context("alice")
    assert [p.use_count for p in packet.playbooks.items] == [9, 8, 7]
    assert packet.playbooks.truncated == 7
    text = lines(packet)
    assert text[-1] == MARKER.format(n=7)
    assert sum(line.startswith("… ") for line in text) == 1
    # what the marker promises: a playbook left out is found by memory_search
    [hit] = search.memory_search("alice", "task-00", k=1)
    assert hit.path == "memory/playbooks/task-00.md"
    assert hit.path not in packet.render()


# -- the budget ------------------------------------------------------------------------------


def test_budget_truncates_in_order_and_says_so(world: World) -> None:
    learn_about_alice(world)
    for age in range(8):
        note(world, f"note {age}: remember this", age)
    for i in range(30):
        playbook(world, f"task-{i:02d}", uses=i)
    budget = 300
    packet = context(world, playbook_cap=30).prompt_context(
        "alice", account_name="Alice", timezone="Europe/Paris", budget_tokens=budget
    )
    assert estimate_tokens(packet.render()) == packet.tokens <= budget
    # profile first, in full; then short memory, in full; the playbooks take what is left
    assert packet.profile.truncated == 0 and len(packet.profile.items) == 2
    assert packet.short_memory.truncated == 0 and len(packet.short_memory.items) == 8
    shown = len(packet.playbooks.items)
    assert 0 < shown < 30 and packet.playbooks.truncated == 30 - shown
    assert [p.use_count for p in packet.playbooks.items] == list(range(29, 29 - shown, -1))
    assert lines(packet)[-1] == MARKER.format(n=30 - shown)
    # the same store gives the same text
    again = context(world, playbook_cap=30).prompt_context(
        "alice", account_name="Alice", timezone="Europe/Paris", budget_tokens=budget
    )
    assert again.render() == packet.render()


def test_a_section_that_does_not_fit_keeps_its_heading_and_marker(world: World) -> None:
    for age in range(30):
        note(world, f"note {age}: " + "x" * 250, age / 10)
    # each playbook line costs more than any leftover a cut note can leave
    playbook(world, "restart-billing", 2, excerpt="z" * 300)
    playbook(world, "rotate-keys", 1, excerpt="z" * 300)
    limits = {"short_memory": ShortMemoryPolicy(cap=30)}
    packet = context(world, **limits).prompt_context("alice", budget_tokens=MIN_BUDGET_TOKENS)
    assert packet.tokens <= MIN_BUDGET_TOKENS
    notes = packet.short_memory
    assert notes.truncated == 30 - len(notes.items) > 0
    assert f"… {notes.truncated} more short notes not shown" in lines(packet)
    # the playbooks were not reached by the budget, but they are not dropped silently
    assert packet.playbooks.items == () and packet.playbooks.truncated == 2
    assert lines(packet)[-2:] == ["## Playbook index", MARKER.format(n=2)]


def test_the_reservation_fits_the_least_budget_at_its_largest(world: World) -> None:
    for age in range(3):
        note(world, "y" * 400, age)
    playbook(world, "restart-billing", 2)
    packet = context(world, short_memory=ShortMemoryPolicy(cap=3), playbook_cap=0).prompt_context(
        "alice", account_name="A" * 500, timezone="Z" * 500, budget_tokens=MIN_BUDGET_TOKENS
    )
    assert packet.tokens <= MIN_BUDGET_TOKENS
    assert packet.playbooks.truncated == 1
    assert lines(packet)[-1] == "… 1 more playbook not shown (memory_search finds them)"
    assert packet.short_memory.truncated == 3 - len(packet.short_memory.items) > 0


def test_the_default_budget_and_caps_come_from_settings(world: World, settings: Settings) -> None:
    tuned = load_settings(
        env={"KGMEM_HOME": str(settings.home), "KGMEM_PLAYBOOK_INDEX_CAP": "2"},
        context_budget_tokens=250,
        short_memory_cap=1,
    )
    limits = ContextLimits.from_settings(tuned)
    assert (limits.playbook_cap, limits.budget_tokens, limits.short_memory.cap) == (2, 250, 1)
    for i in range(4):
        playbook(world, f"task-{i}", uses=i)
    packet = PromptContext(world.store, QUERIES, world.clock, limits).prompt_context("alice")
    assert packet.budget_tokens == 250 and packet.playbooks.truncated == 2
    minimum = next(f for f in fields(Settings) if f.name == "context_budget_tokens")
    assert minimum.metadata["minimum"] == MIN_BUDGET_TOKENS


@pytest.mark.parametrize("budget", [MIN_BUDGET_TOKENS - 1, 0, True, 250.0, "300"])
def test_a_budget_below_the_least_is_refused(world: World, budget: Any) -> None:
    with pytest.raises(InvalidSearch, match="budget_tokens"):
        context(world).prompt_context("alice", budget_tokens=budget)


# -- isolation and emptiness -----------------------------------------------------------------


def test_another_users_notes_memories_and_playbooks_never_appear(world: World) -> None:
    note(world, "bob's secret note", 0, uid="bob")
    procedure(world, "Open the bob vault", "turn the dial twice", uid="bob")
    playbook(world, "bob-runbook", 99, uid="bob")
    msg = world.sources.ingest_message(
        "bob", MessageIn(chat="b", turn=1, role="user", text="I work at Globex")
    )
    [item] = world.gate.draft("bob", [works_at(str(msg.iri), "Globex")], account_name="Bob").items
    assert item.outcome is Outcome.ACTIVE, item
    note(world, "alice's own note", 0)
    packet = context(world).prompt_context("alice")
    text = packet.render()
    assert [n.text for n in packet.short_memory.items] == ["alice's own note"]
    assert packet.playbooks.items == () and packet.profile.items == ()
    for secret in ("bob", "Bob", "Globex", "vault", "runbook"):
        assert secret not in text
    bob = context(world).prompt_context("bob")  # and bob's context does have them
    assert {p.title for p in bob.playbooks.items} == {"Bob Runbook", "Open the bob vault"}
    assert [(f.label, f.value) for f in bob.profile.items] == [("works for", "Globex")]


def test_an_empty_user_gets_an_empty_well_formed_context(world: World) -> None:
    packet = context(world).prompt_context("carol")
    assert packet.uid == "carol" and packet.generated_at == NOW
    assert packet.profile.account_name is None and packet.profile.items == ()
    assert packet.short_memory.items == () and packet.playbooks.items == ()
    assert packet.truncated == 0 and packet.render() == "" and packet.tokens == 0
    assert packet.budget_tokens == ContextLimits().budget_tokens
    named = context(world).prompt_context("carol", account_name="Carol")
    assert named.render() == "## User profile\n- Account name: Carol"


@pytest.mark.parametrize("uid", ["", "a b", "../x", "x" * 300])
def test_a_malformed_uid_is_refused(world: World, uid: str) -> None:
    with pytest.raises(GraphNameError):
        context(world).prompt_context(uid)
