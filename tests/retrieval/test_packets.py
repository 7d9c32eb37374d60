"""retrieve_memory and record_outcome on a real store, every memory drafted through the gate.

The world is a billing team's memory: facts (one with two pieces of evidence), two
procedures, three episodes (one grounded in a failed task), a pinned fact a quarantined
claim contradicts, a fact about the quarantined claim's company, a low-confidence fact, a
stale one, and a superseded and an archived memory that must never show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import LifecycleError, UnknownMemory
from kgmem.index.lexical import LexicalIndex
from kgmem.memory.gate import Outcome
from kgmem.memory.lifecycle import Verdict
from kgmem.memory.model import MemoryKind
from kgmem.memory.source_inputs import TaskIn, TaskStateChange
from kgmem.retrieval import (
    INTENT_PROFILES,
    ContextPacket,
    Intent,
    InvalidSearch,
    MemoryRetrieval,
    MemorySearch,
    PacketItem,
    Section,
    WarningKind,
    packets,
)
from kgmem.store import Changeset, NodeKind, Quad, new_node
from kgmem.vocab import KGM, RDF
from tests.memory.world import ALICE, EMPLOYER, NOW, World, works_at
from tests.retrieval.support import QUERIES, remember_for, searcher

TASK = "deploy the billing service"
P, F, E = Section.PROCEDURE, Section.FACTS, Section.EPISODES


@dataclass
class Billing:
    world: World
    search: MemorySearch
    retrieval: MemoryRetrieval
    m: dict[str, str]  # role -> memory id

    def name(self, id: str | None) -> str | None:
        return None if id is None else {v: k for k, v in self.m.items()}[id]

    def names(self, items: tuple[PacketItem, ...]) -> list[str | None]:
        return [self.name(i.id) for i in items]

    def packet(self, intent: str, task: str = TASK) -> ContextPacket:
        return self.retrieval.retrieve_memory("alice", task, intent)

    def scores(self, task: str = TASK) -> dict[str, float]:
        """Each memory's memory_search score for ``task`` (the candidates)."""
        hits = self.search.memory_search("alice", task, 30, kinds=["memory"])
        return {str(self.name(h.id)): h.score for h in hits}


def said(world: World, chat: str, text: str, role: str = "user", **extra: Any) -> str:
    """A message in a chat of its own, so no memory's search text leaks into another's."""
    return world.say(role, text, chat=chat, **extra)


def tool(world: World, chat: str, text: str) -> str:
    return said(world, chat, text, "tool", tool_name=chat, tool_outcome="success")


def draft(world: World, kind: str, title: str, *evidence: dict[str, str], **extra: Any) -> str:
    body = {"kind": kind, "title": title, "confidence": 0.9, **extra, "evidence": list(evidence)}
    [item] = world.draft(body)
    assert item.outcome is Outcome.ACTIVE and item.memory is not None, item
    return str(item.memory)


def fact(world: World, chat: str, title: str, text: str, **extra: Any) -> str:
    kind = extra.pop("kind", "semantic")
    return draft(world, kind, title, {"source": said(world, chat, text), "quote": text}, **extra)


def episode(world: World, chat: str, title: str, text: str, days_ago: int) -> str:
    when = (NOW - timedelta(days=days_ago)).isoformat()
    return fact(world, chat, title, text, kind="episodic", occurred_at=when)


def employer(world: World, source: str, who: str, company: str, quote: str, **extra: Any) -> Any:
    """``who`` works at ``company`` (a single-valued relation), as ``quote`` in ``source``."""
    valid_from = extra.pop("valid_from", None)
    body = works_at(source, company, quote=quote, predicate=str(EMPLOYER), **extra)
    body["claims"][0] |= {"subject": who} | ({"valid_from": valid_from} if valid_from else {})
    if who == "Bob":
        body["entities"].append({"name": who, "types": ["schema:Person"]})
    [item] = world.draft(body)
    return item


RELEASE = "to deploy the billing service run make release and watch the billing dashboard"
K8S = "the billing service runs on kubernetes in the eu cluster"


def facts(world: World) -> dict[str, str]:
    world.clock.current = NOW - timedelta(days=200)
    stale = fact(
        world, "db", "Billing service database", "the billing service database is postgres 12"
    )
    world.clock.current = NOW
    k8s = draft(
        world,
        "semantic",
        "Billing service runs on Kubernetes",
        {"source": said(world, "k8s", K8S), "quote": K8S},
        {
            "source": tool(world, "kubectl", "kubectl: billing pods running in eu cluster"),
            "quote": "billing pods running in eu cluster",
            "support": "derived",
        },
    )
    ticket = "every billing deploy needs a change ticket"
    window = "I think the billing deploy window is friday afternoon"
    globex = "Globex hosts the billing service servers"
    return {
        "stale": stale,
        "k8s": k8s,
        "ticket": fact(world, "ticket", "Billing deploys need a change ticket", ticket),
        "low": fact(
            world,
            "window",
            "Billing deploy window",
            window,
            confidence=0.4,
            entities=[{"name": "Alice"}],
        ),
        "globex": fact(
            world,
            "globex",
            "Globex hosts the billing service",
            globex,
            entities=[{"name": "Globex", "types": ["schema:Organization"]}],
        ),
    }


def conflicts(world: World) -> dict[str, str]:
    """A pinned fact a tool's claim contradicts (quarantined: it is also about Globex and
    Acme), and Bob's job, superseded by his new one."""
    acme = said(world, "acme", "I work at Acme on the billing service.")
    pinned = employer(
        world,
        acme,
        "I",
        "Acme",
        "I work at Acme on the billing service",
        title="Alice deploys billing at Acme",
    )
    world.lifecycle.pin("alice", pinned.memory)
    crm = tool(world, "crm", "Alice works at Globex. Before: Acme.")
    quarantined = employer(
        world,
        crm,
        "Alice",
        "Globex",
        "Alice works at Globex",
        entities=[{"name": "Globex"}, {"name": "Acme"}],
    )
    assert quarantined.outcome is Outcome.QUARANTINED
    assert set(world.memory(pinned.memory).about) < set(world.memory(quarantined.memory).about)
    initech = "Bob works at Initech on billing deploys"
    old = employer(
        world,
        said(world, "bob1", initech),
        "Bob",
        "Initech",
        initech,
        title="Bob runs billing deploys at Initech",
    )
    hooli = "Bob now works at Hooli on billing deploys"
    title, since = "Bob runs billing deploys at Hooli", "2026-05-01T00:00:00Z"
    new = employer(
        world, said(world, "bob2", hooli), "Bob", "Hooli", hooli, title=title, valid_from=since
    )
    assert new.superseded == (old.memory,)
    return {
        "pinned": str(pinned.memory),
        "quarantined": str(quarantined.memory),
        "superseded": str(old.memory),
        "bob": str(new.memory),
    }


def procedures(world: World) -> dict[str, str]:
    runbook = tool(world, "runbook", "runbook: make release deploys billing")
    deploy = draft(
        world,
        "procedural",
        "Deploy the billing service",
        {"source": said(world, "release", RELEASE), "quote": RELEASE},
        {"source": runbook, "quote": "make release deploys billing"},
    )
    hotfix = "for a billing hotfix, deploy from the hotfix branch"
    return {
        "deploy": deploy,
        "hotfix": fact(world, "hotfix", "Billing hotfix procedure", hotfix, kind="procedural"),
    }


def episodes(world: World) -> dict[str, str]:
    """A good deploy a day ago, a slow one three days ago, and a failed task six days ago."""
    started = NOW - timedelta(days=6)
    states = ("started", started), ("failed", started + timedelta(minutes=10))
    task = TaskIn(
        task_id="deploy-42",
        text="Deploy the billing service",
        states=tuple(TaskStateChange(state=s, at=at) for s, at in states),
        result="billing deploy failed: migration lock timeout",
    )
    record = str(world.sources.ingest_task("alice", task)[-1].iri)
    failed = draft(
        world,
        "episodic",
        "Billing deploy failed",
        {"source": record, "quote": "billing deploy failed: migration lock timeout"},
        occurred_at=started.isoformat(),
    )
    ok, slow = "the billing deploy on monday went fine", "the billing deploy on thursday was slow"
    return {
        "ok": episode(world, "monday", "Billing deploy went fine", ok, 1),
        "slow": episode(world, "thursday", "Slow billing deploy", slow, 3),
        "failed": failed,
    }


def tools(world: World) -> tuple[MemorySearch, MemoryRetrieval]:
    """memory_search and retrieve_memory over one lexical index."""
    index = LexicalIndex(world.store, QUERIES)
    search = searcher(world, index)
    retrieval = MemoryRetrieval(world.store, QUERIES, search, world.lifecycle, index, world.clock)
    return search, retrieval


def build(world: World) -> Billing:
    search, retrieval = tools(world)
    m = facts(world) | conflicts(world) | procedures(world) | episodes(world)
    m["archived"] = fact(world, "old", "Old billing deploy server", "old billing server: bluebox")
    world.lifecycle.archive("alice", URIRef(m["archived"]))
    return Billing(world, search, retrieval, m)


@pytest.fixture
def billing(world: World) -> Billing:
    return build(world)


FACTS = {"stale", "k8s", "ticket", "low", "globex", "pinned", "bob"}
EPISODES = {"ok", "slow", "failed"}
NEVER = {"superseded", "archived", "quarantined"}


def expected_warnings(b: Billing, packet: ContextPacket) -> set[tuple[str, str | None, str | None]]:
    """The world's warnings, for exactly the items the packet returns."""
    shown = set(b.names(packet.items))
    every = {
        ("pinned", (WarningKind.CONTRADICTION, "pinned", "quarantined")),
        ("globex", (WarningKind.QUARANTINED_NEIGHBOUR, "globex", "quarantined")),
        ("low", (WarningKind.LOW_CONFIDENCE, "low", None)),
        ("stale", (WarningKind.STALE, "stale", None)),
    }
    return {warning for item, warning in every if item in shown}


def warnings(b: Billing, packet: ContextPacket) -> set[tuple[str, str | None, str | None]]:
    return {(w.kind.value, b.name(w.memory), b.name(w.other)) for w in packet.warnings}


def by_score(b: Billing, roles: set[str]) -> list[str]:
    """``roles`` among the search candidates, best first (ties by id), as a packet ranks a
    section: one weight per section, so the search order is the section's order."""
    found = [(-score, b.m[r], r) for r, score in b.scores().items() if r in roles]
    return [r for _, _, r in sorted(found)]


def check_common(b: Billing, packet: ContextPacket, evidence: int | None) -> None:
    """What holds for every packet: no inactive memory, the right warnings, exact quotes."""
    assert not NEVER & set(b.names(packet.items))
    assert warnings(b, packet) == expected_warnings(b, packet)
    assert {w.memory for w in packet.warnings} <= {i.id for i in packet.items}
    for item in packet.items:
        assert len(item.evidence) == (
            item.evidence_total if evidence is None else min(evidence, item.evidence_total)
        )
        for ev in item.evidence:
            [source] = b.world.sources.get("alice", [ev.source]).values()
            assert ev.quote is not None and ev.span is not None
            assert source.text[ev.span[0] : ev.span[1]] == ev.quote
            assert ev.source_type == source.type.value
            if source.task_id is not None:
                assert ev.link == f"task:{source.task_id}"
            else:
                assert ev.link == f"chat:{source.chat}#{source.turn}"


# -- each intent's packet ------------------------------------------------------------------


def test_execute_leads_with_the_one_best_procedure_and_its_steps(billing: Billing) -> None:
    b = billing
    deploy, g = URIRef(b.m["deploy"]), ALICE.kg
    steps = [URIRef(f"{deploy}#step{i}") for i in (1, 2)]
    quads = [Quad(deploy, KGM.step, s, g) for s in steps]
    for position, (step, text) in enumerate(zip(steps, ("make release", "watch"), strict=True), 1):
        quads += [
            Quad(step, RDF.type, KGM.Step, g),
            Quad(step, KGM.position, Literal(position), g),
            Quad(step, KGM.instruction, Literal(text), g),
        ]
    b.world.store.commit(Changeset.of(quads))
    packet = b.packet("execute")
    assert (packet.task, packet.intent, packet.sections) == (TASK, Intent.EXECUTE, (P, F, E))
    assert packet.procedure is not None and b.name(packet.procedure.id) == "deploy"
    assert packet.procedure.steps == ("make release", "watch")
    assert packet.procedure.score == round(b.scores()["deploy"] * 2.0, 6)
    assert packet.alternatives == ()
    assert b.names(packet.facts) == by_score(b, FACTS)[:3]
    assert b.names(packet.episodes) == by_score(b, EPISODES)[:1]
    assert b.names(packet.items)[0] == "deploy"  # procedure first
    # one piece of evidence each: the strongest (the user's explicit words, not the tool's)
    [top] = packet.procedure.evidence
    assert packet.procedure.evidence_total == 2
    assert (top.quote, top.source_type, top.support, top.authority) == (
        RELEASE,
        "userMessage",
        "explicit",
        "user",
    )
    assert top.link.startswith("chat:release#") and not top.failure
    check_common(b, packet, 1)


def test_plan_gives_procedures_facts_and_some_episodes(billing: Billing) -> None:
    b = billing
    before = _snapshot(b.world)
    packet = b.packet("plan")
    assert b.packet("plan") == packet and _snapshot(b.world) == before  # reading changes nothing
    assert packet.sections == (P, F, E)
    assert packet.procedure is not None and b.name(packet.procedure.id) == "deploy"
    assert b.names(packet.alternatives) == ["hotfix"]  # the next-best procedure, plan only
    assert b.names(packet.facts) == by_score(b, FACTS)[:5]
    assert b.names(packet.episodes) == by_score(b, EPISODES)[:3]
    assert set(b.names(packet.episodes)) == EPISODES
    check_common(b, packet, 1)


def test_answer_gives_facts_and_episodes_and_a_procedure_only_for_a_how_to(
    billing: Billing,
) -> None:
    b = billing
    packet = b.packet("answer")
    assert packet.sections == (F, E, P)
    assert packet.procedure is None and packet.alternatives == ()  # facts outrank it
    assert b.names(packet.facts) == by_score(b, FACTS)[:6]
    assert b.names(packet.episodes) == by_score(b, EPISODES)
    assert b.names(packet.items)[:6] == b.names(packet.facts)  # facts come first
    check_common(b, packet, 2)
    how_to = b.packet("answer", "how do I ship a billing hotfix")
    assert how_to.procedure is not None and b.name(how_to.procedure.id) == "hotfix"
    assert all(how_to.procedure.score > i.score for i in (*how_to.facts, *how_to.episodes))
    check_common(b, how_to, 2)


def test_verify_gives_every_fact_with_all_its_evidence_and_every_warning(
    billing: Billing,
) -> None:
    b = billing
    packet = b.packet("verify")
    assert packet.sections == (F, E)
    assert packet.procedure is None and packet.alternatives == ()
    assert set(b.names(packet.facts)) == FACTS  # all seven, at most eight
    assert b.names(packet.facts) == by_score(b, FACTS)
    assert b.names(packet.episodes) == by_score(b, EPISODES)[:2]
    [k8s] = [i for i in packet.facts if b.name(i.id) == "k8s"]
    assert [(e.quote, e.support, e.source_type, e.authority) for e in k8s.evidence] == [
        (K8S, "explicit", "userMessage", "user"),
        ("billing pods running in eu cluster", "derived", "toolResult", "tool"),
    ]
    assert k8s.evidence[0].link.startswith("chat:k8s#")
    assert k8s.evidence[1].link.startswith("chat:kubectl#")
    assert warnings(b, packet) == {
        ("contradiction", "pinned", "quarantined"),
        ("quarantined_neighbour", "globex", "quarantined"),
        ("low_confidence", "low", None),
        ("stale", "stale", None),
    }
    [contradiction] = [w for w in packet.warnings if w.kind is WarningKind.CONTRADICTION]
    assert (
        "quarantined" in contradiction.message and "Alice works at Globex" in contradiction.message
    )
    [neighbour] = [w for w in packet.warnings if w.kind is WarningKind.QUARANTINED_NEIGHBOUR]
    assert neighbour.message.endswith("is also about Globex")
    [stale] = [w for w in packet.warnings if w.kind is WarningKind.STALE]
    assert stale.message == "neither recorded nor used for 200 days"
    check_common(b, packet, None)


def test_debug_puts_failures_first_then_the_most_recent_episodes(billing: Billing) -> None:
    b = billing
    scores = b.scores()
    assert scores["failed"] < max(scores["ok"], scores["slow"])  # not first on relevance
    packet = b.packet("debug")
    assert packet.sections == (E, P, F)
    assert b.names(packet.episodes) == ["failed", "ok", "slow"]  # failure, 1 day, 3 days ago
    failed, ok, slow = packet.episodes
    assert failed.failure and not ok.failure and not slow.failure
    assert "a failure" in failed.why
    [evidence] = failed.evidence
    assert (evidence.source_type, evidence.link, evidence.quote, evidence.failure) == (
        "taskRecord",
        "task:deploy-42",
        "billing deploy failed: migration lock timeout",
        True,
    )
    assert packet.procedure is not None and b.name(packet.procedure.id) == "deploy"
    assert b.names(packet.facts) == by_score(b, FACTS)[:2]
    assert b.names(packet.items)[:3] == ["failed", "ok", "slow"]
    # other intents rank episodes by applicability alone
    assert b.names(b.packet("plan").episodes) == by_score(b, EPISODES)
    check_common(b, packet, 2)


def test_the_documented_table_is_the_table() -> None:
    """The module docstring's table says what INTENT_PROFILES holds."""
    rows = [re.split(r"\s{2,}", line) for line in (packets.__doc__ or "").splitlines()]
    table = {Intent(r[0]): r[1:] for r in rows if r[0] in {i.value for i in Intent}}
    assert set(table) == set(Intent)
    rules = {"always": "always", "always +2": "always", "if top": "if_top", "never": "never"}
    kinds = (MemoryKind.SEMANTIC, MemoryKind.PROCEDURAL, MemoryKind.EPISODIC, MemoryKind.REFERENCE)
    for intent, profile in INTENT_PROFILES.items():
        *weights, facts, episodes, procedure, evidence = table[intent]
        assert [float(w) for w in weights] == [profile.weights[k] for k in kinds]
        assert (int(facts), int(episodes)) == (profile.facts, profile.episodes)
        assert rules[procedure] == profile.procedure.value
        assert profile.alternatives == (2 if procedure.endswith("+2") else 0)
        assert evidence == ("all" if profile.evidence is None else str(profile.evidence))


@pytest.mark.parametrize("intent", list(Intent), ids=str)
def test_inactive_memories_never_appear(billing: Billing, intent: Intent) -> None:
    b = billing
    task = TASK + " initech bluebox globex"  # words that match them, were they active
    statuses = ["superseded", "archived", "quarantined"]
    inactive = b.search.memory_search("alice", task, 30, statuses=statuses)
    assert {b.name(h.id) for h in inactive} == NEVER
    packet = b.packet(intent, task)
    assert not NEVER & set(b.names(packet.items))
    assert warnings(b, packet) == expected_warnings(b, packet)


def test_stale_means_past_its_time_or_long_unused_but_an_old_episode_is_not_stale(
    world: World,
) -> None:
    b = build(world)
    ttl = said(world, "ttl", "the billing deploy freeze lasts this week")
    expiring = draft(
        world,
        "episodic",
        "Billing deploy freeze",
        {"source": ttl, "quote": "the billing deploy freeze lasts this week"},
        occurred_at=(NOW - timedelta(days=10)).isoformat(),
        ttl="P7D",
    )
    b.m["freeze"] = expiring
    packet = b.packet("debug", "billing deploy freeze")
    assert {"freeze", "failed"} <= set(b.names(packet.episodes))
    stale = {b.name(w.memory): w.message for w in packet.warnings if w.kind is WarningKind.STALE}
    assert (
        stale["freeze"]
        == "its time to live ran out on " + (NOW - timedelta(days=3)).date().isoformat()
    )
    assert "failed" not in stale  # six days old, no time to live: an episode does not age
    # a helpful outcome is a use: the long-unused fact is no longer stale
    b.retrieval.record_outcome("alice", [b.m["stale"]], "helpful", "check db")
    verify = b.packet("verify")
    assert "stale" in b.names(verify.facts)
    assert ("stale", "stale", None) not in warnings(b, verify)


def test_a_settled_contradiction_and_a_rejected_claim_are_no_warnings(billing: Billing) -> None:
    b = billing
    assert {("contradiction", "pinned", "quarantined"), ("low_confidence", "low", None)} <= (
        warnings(b, b.packet("verify"))
    )
    b.world.lifecycle.archive("alice", URIRef(b.m["quarantined"]))  # rejected for good
    packet = b.packet("verify")
    assert warnings(b, packet) == {("low_confidence", "low", None), ("stale", "stale", None)}
    assert {"pinned", "globex", "low"} <= set(b.names(packet.facts))


# -- record_outcome ------------------------------------------------------------------------


def twins(world: World) -> tuple[MemoryRetrieval, str, str]:
    """Two memories equal in every ranking signal, each in a chat of its own."""
    first = fact(world, "z1", "Zephyr runbook alpha", "zephyr restarts nightly")
    second = fact(world, "z2", "Zephyr runbook gamma", "zephyr restarts weekly")
    return tools(world)[1], first, second


def test_misleading_drops_a_memory_below_an_equal_one_and_helpful_lifts_it(world: World) -> None:
    retrieval, first, second = twins(world)
    before = retrieval.retrieve_memory("alice", "zephyr runbook", "answer")
    [top, other] = [i.id for i in before.facts]
    assert before.facts[0].score == before.facts[1].score and {top, other} == {first, second}
    result = retrieval.record_outcome("alice", [top], Verdict.MISLEADING, "restart zephyr")
    [change] = result.changes
    assert (result.verdict, result.task, change.id) == (Verdict.MISLEADING, "restart zephyr", top)
    assert (change.before.confidence, change.after.confidence) == (0.9, 0.765)
    assert change.after.status == "active" and change.decision.startswith("https://")
    after = retrieval.retrieve_memory("alice", "zephyr runbook", "answer")
    assert [i.id for i in after.facts] == [other, top]
    assert after.facts[1].score < after.facts[0].score
    [warning] = after.warnings
    assert (warning.kind, warning.memory) == (WarningKind.MISLEADING, top)
    helped = retrieval.record_outcome("alice", [top], "helpful", "restart zephyr")
    [lift] = helped.changes
    assert lift.after.strength > lift.before.strength and lift.after.use_count == 1
    assert lift.after.confidence == round(0.765 + 0.05, 6)
    again = retrieval.retrieve_memory("alice", "zephyr runbook", "answer")
    assert [i.id for i in again.facts] == [top, other]


def test_unused_weakens_only_a_little(world: World) -> None:
    retrieval, first, second = twins(world)
    [top, other] = [i.id for i in retrieval.retrieve_memory("alice", "zephyr", "answer").facts]
    assert {top, other} == {first, second}
    [change] = retrieval.record_outcome("alice", [top], "unused").changes
    assert change.after.strength == round(change.before.strength * 0.95, 6)
    assert change.after.confidence == change.before.confidence
    after = retrieval.retrieve_memory("alice", "zephyr", "answer")
    assert [i.id for i in after.facts] == [other, top] and after.warnings == ()


def test_outdated_removes_a_memory_from_later_packets(billing: Billing) -> None:
    b = billing
    assert "k8s" in b.names(b.packet("verify").facts)
    result = b.retrieval.record_outcome("alice", [b.m["k8s"], b.m["k8s"]], "outdated", "deploy")
    [change] = result.changes  # the same id twice is one outcome
    assert (change.before.status, change.after.status) == ("active", "outdated")
    for intent in Intent:
        assert "k8s" not in b.names(b.packet(intent).items)
    assert b.world.memory(URIRef(b.m["k8s"])).valid_until == NOW


def _snapshot(world: World) -> set[Quad]:
    return {q for g in (ALICE.kg, ALICE.quarantine, ALICE.ops) for q in world.store.quads(g)}


def test_record_outcome_is_all_or_nothing(billing: Billing) -> None:
    b, world = billing, billing.world
    theirs = str(remember_for(world, "bob", "Bob's billing", "bob deploys billing on sundays"))
    bob_before = {q for q in world.store.quads() if str(q.graph).startswith("urn:kgmem:user:bob")}
    before = _snapshot(world)
    mine = b.m["k8s"]
    missing = str(new_node("alice", NodeKind.MEMORY))
    entity = str(new_node("alice", NodeKind.ENTITY))
    refusals = []
    for bad in (missing, theirs, entity, "not an id"):
        with pytest.raises(UnknownMemory) as caught:
            b.retrieval.record_outcome("alice", [mine, bad], "misleading", "deploy")
        refusals.append(caught.value.reason)
    assert refusals[0] == refusals[1]  # nothing tells whether bob's memory exists
    with pytest.raises(LifecycleError):  # an archived memory cannot become outdated
        b.retrieval.record_outcome("alice", [mine, b.m["archived"]], "outdated")
    assert _snapshot(world) == before
    assert {q for q in world.store.quads() if str(q.graph).startswith("urn:kgmem:user:bob")} == (
        bob_before
    )


@pytest.mark.parametrize(
    ("task", "intent", "k", "field"),
    [
        ("", "execute", 30, "task"),
        ("  \n", "plan", 30, "task"),
        ("x" * 2001, "plan", 30, "task"),
        (None, "plan", 30, "task"),
        ("deploy", "explore", 30, "intent"),
        ("deploy", "EXECUTE", 30, "intent"),
        ("deploy", None, 30, "intent"),
        ("deploy", "debug", 0, "k"),
        ("deploy", "debug", 101, "k"),
        ("deploy", "debug", True, "k"),
        ("deploy", "debug", "5", "k"),
    ],
)
def test_retrieve_arguments_are_checked(
    billing: Billing, task: Any, intent: Any, k: Any, field: str
) -> None:
    with pytest.raises(InvalidSearch) as caught:
        billing.retrieval.retrieve_memory("alice", task, intent, k=k)
    assert caught.value.field == field


@pytest.mark.parametrize(
    ("items", "verdict", "field"),
    [([], "helpful", "items"), (["x"] * 101, "helpful", "items"), (None, "great", "verdict")],
)
def test_outcome_arguments_are_checked(
    billing: Billing, items: Any, verdict: str, field: str
) -> None:
    before = _snapshot(billing.world)
    given = [billing.m["k8s"]] if items is None else items
    with pytest.raises(InvalidSearch) as caught:
        billing.retrieval.record_outcome("alice", given, verdict)
    assert caught.value.field == field
    assert _snapshot(billing.world) == before
