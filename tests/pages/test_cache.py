"""A hub entity's page is read from what changed, not from every memory about it, and says
exactly what a whole read says: real on-disk stores, the real gate and lifecycle, the change
feed; after every kind of change the page the follower stored is compared with a read that
keeps nothing (:func:`read_page_input` without a cache)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta

import pytest
from rdflib import Literal, URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.memory import MemoryStatus
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.pages import content, stored_page
from kgmem.pages.cache import PageCache, Ranked
from kgmem.pages.content import PageInput
from kgmem.pages.follow import prepare_pages
from kgmem.store import Changeset, Quad, UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import NOW

ALICE = self_entity("alice")
KG = UserGraphs("alice").kg


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def services(settings: Settings, clock: FixedClock) -> Iterator[Services]:
    wired = build_services(replace(settings, vault="on"), clock=clock)
    yield wired
    wired.close()


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages that show 5 memories, 6 claims and 2 changes (a window keeps half again), so a
    few dozen memories make a hub: the queries' LIMIT is not reached, a window's trim cuts."""
    for name, show in (("MEMORIES", 5), ("CLAIMS", 6), ("CHANGES", 2)):
        monkeypatch.setattr(content, name, replace(getattr(content, name), show=show))


def likes(services: Services, clock: FixedClock, start: int, count: int) -> list[URIRef]:
    """``count`` memories about alice, each naming a new gadget entity, a second apart."""
    memories = []
    for turn in range(start, start + count):
        clock.advance(timedelta(seconds=1))
        said = f"I like the gadget called Widget{turn}."
        msg = services.sources.ingest_message(
            "alice", MessageIn(chat="c1", turn=turn, role="user", text=said)
        )
        draft = {
            "kind": "semantic",
            "title": f"Likes Widget{turn}",
            "confidence": 0.9,
            "claims": [{"subject": "I", "predicate": "kgm:likes", "object": f"Widget{turn}"}],
            "entities": [{"name": f"Widget{turn}", "types": ["schema:Product"]}],
            "evidence": [{"source": str(msg.iri), "quote": said.rstrip(".")}],
        }
        [item] = services.gate.draft("alice", [draft], account_name="Alice").items
        assert item.outcome is Outcome.ACTIVE and isinstance(item.memory, URIRef), item
        memories.append(item.memory)
    return memories


def whole(services: Services, cache: PageCache | None = None) -> PageInput:
    """Alice's page input as the follower writes it (links resolved); read whole when no
    ``cache`` is given."""
    prepared = prepare_pages(
        services.store, services.queries, services.ontology, "alice", [ALICE], cache
    )
    [found] = [p for p in prepared.inputs if p.entity == ALICE]
    return found


def level(services: Services) -> PageInput:
    """The page the follower stored says what a whole read says, and so does a read through
    the follower's cache; the whole read."""
    assert services.settle()
    expected = whole(services)
    stored = stored_page(services.store, services.queries, KG, ALICE)
    assert stored is not None and stored.digest == expected.digest
    assert services.pages is not None
    assert whole(services, services.pages.cache) == expected
    return expected


def cited(page: PageInput, memory: URIRef) -> bool:
    """Whether ``page`` shows ``memory`` (cited by ``m:`` and a prefix of its id)."""
    local = str(memory).rsplit("/", 1)[-1]
    return any(local.startswith(m.memory.removeprefix("m:")) for m in page.memories)


@pytest.mark.usefixtures("small_pages")
def test_a_hub_page_follows_adds_archives_forgets_and_refills(
    services: Services, clock: FixedClock
) -> None:
    memories = likes(services, clock, 1, 12)
    page = level(services)
    assert page.truncated and len(page.memories) == 5
    assert all(cited(page, m) for m in memories[-5:])
    more = likes(services, clock, 100, 3)  # newer than everything: shown at once
    page = level(services)
    assert all(cited(page, m) for m in more) and not cited(page, memories[-4])
    services.lifecycle.archive("alice", more[-1])  # a shown one leaves: an older one comes in
    level(services)
    services.lifecycle.forget("alice", more[-2])
    level(services)
    for memory in [*more[:1], *memories[-6:]]:  # more than a window keeps beyond the page
        services.lifecycle.archive("alice", memory)
    page = level(services)
    assert len(page.memories) == 5 and page.truncated
    assert services.pages is not None and services.pages.cache.windows
    services.reset_user("alice")  # nothing of alice's is kept, however little was touched
    assert services.pages.cache.windows == 0


@pytest.mark.usefixtures("small_pages")
def test_a_renamed_object_and_a_superseded_value_reach_the_hub_page(
    services: Services, clock: FixedClock
) -> None:
    memories = likes(services, clock, 1, 9)
    level(services)
    [widget] = [q.subject for q in services.store.quads(KG, None, KGM.name, Literal("Widget9"))]
    services.store.commit(  # a name changed by a commit of its own: only the entity is touched
        Changeset.of(
            [Quad(widget, KGM.name, Literal("Sprocket Nine"), KG)],
            [Quad(widget, KGM.name, Literal("Widget9"), KG)],
        )
    )
    likes(services, clock, 50, 1)  # the next change to alice's page shows the new name
    page = level(services)
    assert any(f.value == "Sprocket Nine" for f in page.facts)
    services.lifecycle.retire("alice", memories[-1], MemoryStatus.OUTDATED, "no longer liked")
    page = level(services)
    assert [c.value for c in page.changes][:1] == ["Sprocket Nine"]


def test_a_hub_past_the_queries_limit_is_kept_level(services: Services, clock: FixedClock) -> None:
    """Real page sizes: more memories about alice than the query's LIMIT reads."""
    limit = content.MEMORIES.rows
    memories = likes(services, clock, 1, limit + 4)
    page = level(services)
    assert page.truncated and len(page.memories) == content.PAGE_MEMORIES
    for memory in memories[-(limit - content.PAGE_MEMORIES) :]:  # the window's slack, and one
        services.lifecycle.archive("alice", memory)
    services.lifecycle.archive("alice", memories[0])  # an old one, beyond every window
    page = level(services)
    assert len(page.memories) == content.PAGE_MEMORIES


def test_windows_are_bounded_by_the_rows_they_hold(services: Services, clock: FixedClock) -> None:
    likes(services, clock, 1, 6)
    services.settle()
    cache = PageCache(rows=10)
    ranked = Ranked("pages/memories_about", "memory", 3, 301)
    about = {"graph": KG, "status": MemoryStatus.ACTIVE.iri}
    for turn in range(1, 7):
        [widget] = [
            q.subject for q in services.store.quads(KG, None, KGM.name, Literal(f"Widget{turn}"))
        ]
        cache.newest(
            services.store, services.queries, ranked, "alice", widget, {**about, "entity": widget}
        )
    rows, more = cache.newest(
        services.store, services.queries, ranked, "alice", ALICE, {**about, "entity": ALICE}
    )
    assert len(rows) == 3 and more
    assert cache.rows <= 10 or cache.windows == 1
