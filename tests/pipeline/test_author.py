"""The author stage on real stores: pages from memories written through the real gate."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from typing import Any

import pytest
from rdflib import Literal, URIRef

from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.errors import StageFailed
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome
from kgmem.memory.model import MemoryKind
from kgmem.memory.records import record_quads
from kgmem.ontology import OntologyService, ValidationService
from kgmem.pages import PAGE_MEMORIES, page_id, prepare_pages, stored_page
from kgmem.pages.revisions import stamped
from kgmem.pipeline import (
    AuthorPage,
    Checkpoints,
    ModelSet,
    ModelSpec,
    PassContext,
    PassState,
    Stage,
    StageName,
    pass_iri,
)
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.stages.author import (
    AuthorStage,
    FactLine,
    MemoryLine,
    PageInput,
    read_page_input,
    render_page,
)
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry
from kgmem.vocab import KGM, RDF
from tests.memory.world import ALICE, EMPLOYER, NOW, World, works_at
from tests.pipeline import scripted
from tests.pipeline.scripted import ScriptedEngine, reply

LATER = NOW + timedelta(days=1)
ALICE_IRI = self_entity("alice")
GHOST = URIRef("https://w3id.org/kgmem/user/alice/entity/0000ghost")


class Scene:
    """Alice's memories: active, pinned, pending, quarantined and archived ones."""

    def __init__(self, world: World, queries: QueryRegistry, settings: Settings) -> None:
        self.world, self.queries, self.settings = world, queries, settings
        self.store = world.store
        self.ontology = OntologyService(world.store, queries)
        self.job = self._one(works_at(world.say("user", "I work at Acme."), predicate=EMPLOYER))
        world.lifecycle.pin("alice", self.job)
        self.acme = world.memory(self.job).claims[0].object
        self.seat = self._one(
            _note("procedural", "Books an aisle seat when flying", "Alice"),
            "When I fly I always book an aisle seat.",
            "I always book an aisle seat",
        )
        self.visit = self.episode("Visited the Acme office in Berlin", "2026-05-31T09:00:00Z")
        pending = _note("semantic", "Acme is moving to Springfield", "Acme", confidence=0.5)
        self.pending = self._one(
            pending,
            "CRM: Acme is moving to Springfield.",
            "Acme is moving to Springfield",
            tool="crm",
            outcome=Outcome.PENDING,
        )
        profile = world.say(
            "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
        )
        rival = works_at(profile, "Globex", quote="Alice works at Globex", predicate=EMPLOYER)
        rival["claims"][0]["subject"] = "Alice"
        self.quarantined = self._one(rival, outcome=Outcome.QUARANTINED)
        self.jazz = self._one(
            _note("semantic", "Likes jazz", "Alice"), "I like jazz.", "I like jazz"
        )
        world.lifecycle.archive("alice", self.jazz)

    def episode(self, title: str, at: str) -> URIRef:
        text = f"Note: {title}."
        return self._one(_note("episodic", title, "Acme", occurred_at=at), text, title)

    def _one(
        self,
        draft: dict[str, Any],
        text: str | None = None,
        quote: str | None = None,
        tool: str | None = None,
        outcome: Outcome | None = None,
    ) -> URIRef:
        if text is not None:
            kw = {"tool_name": tool, "tool_outcome": "success"} if tool else {}
            source = self.world.say("tool" if tool else "user", text, **kw)
            draft["evidence"] = [{"source": source, "quote": quote}]
        [item] = self.world.draft(draft)
        assert item.outcome is (outcome or Outcome.ACTIVE), item.reasons
        return URIRef(item.memory)

    def ports(self, engine: ScriptedEngine | None = None) -> PassPorts:
        models = ModelSet()
        if engine is not None:
            models = ModelSet(primary=ModelSpec("openai/scripted", engine=engine, num_retries=0))
        return PassPorts(
            ontology=self.ontology,
            validation=ValidationService(self.store, self.queries, self.ontology),
            sources=self.world.sources,
            gate=self.world.gate,
            models=models,
        )

    def ctx(self, at: datetime = NOW) -> PassContext:
        return PassContext(
            uid="alice",
            pass_id="p1",
            pass_iri=pass_iri("alice", "p1"),
            store=self.store,
            queries=self.queries,
            clock=FixedClock(at),
            settings=self.settings,
        )

    def run(
        self,
        *entities: URIRef,
        at: datetime = NOW,
        engine: ScriptedEngine | None = None,
    ) -> dict[str, Any]:
        state = PassState().with_output(
            StageName.COMMIT, {"entities": [str(e) for e in entities], "memories": []}
        )
        after = AuthorStage(self.ports(engine)).run(self.ctx(at), state)
        output = after.output(StageName.AUTHOR)
        assert isinstance(output, dict)
        return output

    def page_of(self, entity: URIRef) -> URIRef:
        [quad] = self.store.quads(ALICE.kg, None, KGM.pageOf, entity)
        return URIRef(quad.subject)

    def one(self, node: URIRef, predicate: URIRef) -> Any:
        [quad] = self.store.quads(ALICE.kg, node, predicate)
        return quad.object

    def markdown(self, entity: URIRef) -> str:
        current = self.one(self.page_of(entity), KGM.currentRevision)
        return str(self.one(current, KGM.markdown))

    def expected(self, entity: URIRef, at: datetime = NOW) -> str:
        """The stored page of ``entity`` as the renderer writes it, links resolved, under
        the id and revision the store gave it."""
        prepared = prepare_pages(self.store, self.queries, self.ontology, "alice", [entity])
        page = next(p for p in prepared.inputs if p.entity == entity)
        stored = stored_page(self.store, self.queries, ALICE.kg, entity)
        assert stored is not None
        return stamped(render_page(page, at), page_id(stored.page), stored.latest)


def _note(kind: str, title: str, about: str, *types: str, **extra: Any) -> dict[str, Any]:
    kinds = list(types) or (["schema:Organization"] if about == "Acme" else [])
    entity = {"name": about, "types": kinds}
    return {"kind": kind, "title": title, "confidence": 0.9, "entities": [entity], **extra}


def cite(memory: URIRef) -> str:
    return f"[m:{str(memory).rsplit('/', 1)[-1][:8]}]"


@pytest.fixture
def scene(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> Scene:
    return Scene(World(store, queries, settings), queries, settings)


# -- deterministic pages ------------------------------------------------------------------


def test_author_renders_each_changed_entity_from_its_active_memories(scene: Scene) -> None:
    out = scene.run(ALICE_IRI, scene.acme, GHOST)
    pages = [scene.page_of(ALICE_IRI), scene.page_of(scene.acme)]
    assert sorted(out["pages"]) == sorted(str(p) for p in pages)
    assert out["skipped"] == [str(GHOST)] and out["fallbacks"] == [] and out["unchanged"] == []
    alice = scene.markdown(ALICE_IRI)
    assert alice == scene.expected(ALICE_IRI)
    assert alice.startswith(f'---\nid: "{page_id(pages[0])}"\nrevision: 1\ntitle: "Alice"\n')
    assert '\ntypes: ["person"]\n' in alice and "\nwriter: kgmem\n" in alice
    assert f'entity: "{ALICE_IRI}"' in alice and "updated: 2026-06-01T12:00:00Z" in alice
    assert "\n# Alice\n" in alice
    facts, howtos, history = (alice.index(f"## {s}") for s in _SECTIONS)
    assert facts < howtos < history
    link = "[[Memory/entities/acme|Acme]]"  # the page of Acme, in the vault
    assert f"- **current job at**: {link} {cite(scene.job)}" in alice[facts:howtos]
    assert f"- Books an aisle seat when flying {cite(scene.seat)}" in alice[howtos:history]
    for hidden in ("Globex", "jazz", "Springfield", cite(scene.quarantined)[1:-1]):
        assert hidden not in alice  # quarantined, archived, pending
    acme = scene.markdown(scene.acme)
    assert f"- Alice works at Acme {cite(scene.job)}" in acme
    visit = f"- 2026-05-31: Visited the Acme office in Berlin {cite(scene.visit)}"
    assert visit in acme[acme.index("## History") :]
    assert "Springfield" not in acme and cite(scene.pending)[1:-1] not in acme


_SECTIONS = ("Facts", "How-tos and preferences", "History")


def test_author_stores_a_page_node_with_path_and_revision(scene: Scene) -> None:
    scene.run(ALICE_IRI)
    page = scene.page_of(ALICE_IRI)
    assert scene.one(page, RDF.type) == KGM.Page
    assert str(scene.one(page, KGM.path)) == "entities/alice.md"
    assert str(scene.one(page, KGM.title)) == "Alice"
    revision = scene.one(page, KGM.currentRevision)
    markdown = str(scene.one(revision, KGM.markdown))
    assert scene.one(revision, KGM.revisionOf) == page
    assert scene.one(revision, KGM.revision).toPython() == 1
    assert str(scene.one(revision, KGM.contentHash)) == (
        "sha256:" + sha256(markdown.encode()).hexdigest()
    )
    assert scene.one(revision, KGM.createdAt).toPython() == NOW


def test_author_lists_procedure_steps_in_order(scene: Scene) -> None:
    # A procedure's steps as the store holds them (kgm:Step nodes), written out of order.
    for position, text in ((2, "Pick the aisle"), (1, "Open the seat map")):
        step = URIRef(f"{scene.seat}#step{position}")
        scene.store.commit(
            Changeset.of(
                [
                    _q(scene.seat, KGM.step, step),
                    _q(step, RDF.type, KGM.Step),
                    _q(step, KGM.position, Literal(position)),
                    _q(step, KGM.instruction, Literal(text)),
                ]
            )
        )
    scene.run(ALICE_IRI)
    markdown = scene.markdown(ALICE_IRI)
    # the citation, its evidence footnote, then the steps in order
    expected = r"\[m:%s\]\[\^\d+\]\n   1\. Open the seat map\n   2\. Pick the aisle\n"
    assert re.search(expected % cite(scene.seat)[3:-1], markdown), markdown


def _q(s: URIRef, p: URIRef, o: URIRef | Literal) -> Quad:
    return Quad(s, p, o, ALICE.kg)


def test_render_page_is_pure_and_orders_its_input() -> None:
    first = MemoryLine("m:00000002", MemoryKind.EPISODIC, "Later", occurred_at=LATER)
    second = MemoryLine("m:00000001", MemoryKind.EPISODIC, "Earlier", occurred_at=NOW)
    trick = MemoryLine("m:00000003", MemoryKind.SEMANTIC, "Says [m:ffffffff] *loudly*")
    facts = (FactLine("works for", "Acme", ("m:00000004",)), FactLine("born", "1990", ("m:5",)))
    entity = URIRef("https://w3id.org/kgmem/user/alice/entity/x")
    a = PageInput(entity, "Bo", ("B.",), ("person",), facts, (first, second, trick))
    b = PageInput(entity, "Bo", ("B.",), ("person",), facts[::-1], (trick, second, first))
    assert a == b and a.digest == b.digest
    page = render_page(a, NOW)
    assert page == render_page(b, NOW)
    assert page.index("Earlier") < page.index("Later")  # episodes oldest first
    assert page.index("**born**") < page.index("**works for**")
    assert r"Says \[m:ffffffff\] \*loudly\* [m:00000003]" in page
    assert "- 2026-06-01: Earlier [m:00000001]" in page
    assert "_Nothing recorded yet._" in page  # no how-tos
    assert render_page(a, LATER) != page  # the time is part of the page


# -- revisions ----------------------------------------------------------------------------


def test_rerun_over_unchanged_facts_writes_nothing(scene: Scene) -> None:
    scene.run(ALICE_IRI, scene.acme)
    before = scene.store.count()
    out = scene.run(ALICE_IRI, scene.acme, at=LATER)
    assert out["pages"] == []
    assert sorted(out["unchanged"]) == sorted(
        str(scene.page_of(e)) for e in (ALICE_IRI, scene.acme)
    )
    assert scene.store.count() == before


def test_changed_facts_make_a_new_revision_and_keep_the_old(scene: Scene) -> None:
    scene.run(ALICE_IRI, scene.acme)
    page = scene.page_of(scene.acme)
    first = scene.markdown(scene.acme)
    later = scene.episode("Signed the Acme contract", "2026-06-01T08:00:00Z")
    out = scene.run(ALICE_IRI, scene.acme, at=LATER)
    assert out["pages"] == [str(page)]
    assert out["unchanged"] == [str(scene.page_of(ALICE_IRI))]
    current = scene.one(page, KGM.currentRevision)
    assert current == URIRef(f"{page}#r2") and scene.one(current, KGM.revision).toPython() == 2
    second = scene.markdown(scene.acme)
    assert f"Signed the Acme contract {cite(later)}" in second
    assert "updated: 2026-06-02T12:00:00Z" in second and second == scene.expected(scene.acme, LATER)
    old = URIRef(f"{page}#r1")
    assert str(scene.one(old, KGM.markdown)) == first and scene.one(old, KGM.revisionOf) == page


def test_entities_sharing_a_name_get_distinct_paths(scene: Scene) -> None:
    friend = scene._one(
        _note("semantic", "Jordan plays chess", "Jordan", "schema:Person"),
        "My friend Jordan plays chess.",
        "Jordan plays chess",
    )
    brand = scene._one(
        _note("semantic", "Jordan sells shoes", "Jordan", "schema:Organization"),
        "The company Jordan sells shoes.",
        "Jordan sells shoes",
    )
    people = {e for m in (friend, brand) for e in scene.world.memory(m).about}
    assert len(people) == 2
    scene.run(*people)
    paths = sorted(str(scene.one(scene.page_of(e), KGM.path)) for e in people)
    assert paths == ["entities/jordan-2.md", "entities/jordan.md"]


# -- the model ----------------------------------------------------------------------------


def test_scripted_model_page_is_accepted_under_kgmem_front_matter(scene: Scene) -> None:
    body = (
        f"Alice works at Acme {cite(scene.job)} and flies aisle {cite(scene.seat)}.\n\n"
        f"## How-tos and preferences\n\n- Aisle seats {cite(scene.seat)}"
    )
    engine = ScriptedEngine({AuthorPage: [reply(markdown=body)]})
    scene.run(scene.acme)  # Acme's page exists (the page follower writes it at once)
    out = scene.run(ALICE_IRI, engine=engine)
    assert out["fallbacks"] == [] and out["pages"] == [str(scene.page_of(ALICE_IRI))]
    markdown = scene.markdown(ALICE_IRI)
    assert markdown.startswith(f'---\nid: "{page_id(scene.page_of(ALICE_IRI))}"\nrevision: 1\n')
    assert '\ntitle: "Alice"\n' in markdown and "\nwriter: model\n" in markdown
    assert markdown.endswith("\n---\n\n# Alice\n\n" + body + "\n")
    [request] = engine.calls(AuthorPage)
    shown = scripted.prompt_of(request)
    assert "Books an aisle seat when flying" in shown and cite(scene.job)[1:-1] in shown
    for hidden in ("Globex", "Likes jazz", "Springfield"):
        assert hidden not in shown


FromScene = Callable[[Scene], str]
REFUSED: dict[str, tuple[FromScene, FromScene]] = {
    "unknown-id": (
        lambda s: reply(markdown=f"Alice works at Acme {cite(s.job)} [m:deadbeef]."),
        lambda s: "unknown memory id(s) m:deadbeef",
    ),
    "quarantined-id": (
        lambda s: reply(markdown=f"Alice works at Globex {cite(s.quarantined)}."),
        lambda s: f"unknown memory id(s) {cite(s.quarantined)[1:-1]}",
    ),
    "no-citation": (
        lambda s: reply(markdown="Alice works at Acme."),
        lambda s: "cites no memory",
    ),
    "own-heading": (
        lambda s: reply(markdown=f"# Alice\n\nWorks at Acme {cite(s.job)}."),
        lambda s: "top-level heading",
    ),
    "broken-output": (lambda s: scripted.NO_FIELDS, lambda s: "malformed model output"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_model_page_falls_back_to_the_renderer(scene: Scene, case: str) -> None:
    answer, why = REFUSED[case]
    engine = ScriptedEngine({AuthorPage: [answer(scene)]})
    reason = why(scene)
    scene.run(scene.acme)
    out = scene.run(ALICE_IRI, engine=engine)
    assert scene.markdown(ALICE_IRI) == scene.expected(ALICE_IRI)
    [fallback] = out["fallbacks"]
    assert fallback["entity"] == str(ALICE_IRI) and reason in fallback["reason"]
    assert out["pages"] == [str(scene.page_of(ALICE_IRI))]


# -- nothing to do, and what is written --------------------------------------------------


@pytest.mark.parametrize("commit", [None, {}, {"entities": [], "memories": []}])
def test_nothing_to_author_writes_nothing_and_asks_no_model(
    scene: Scene, commit: dict[str, Any] | None
) -> None:
    before = scene.store.count()
    engine = ScriptedEngine()
    state = PassState() if commit is None else PassState().with_output(StageName.COMMIT, commit)
    stage = AuthorStage(scene.ports(engine))
    out = stage.run(scene.ctx(), state).output(StageName.AUTHOR)
    assert out == {"pages": [], "unchanged": [], "skipped": [], "fallbacks": []}
    assert scene.store.count() == before and engine.requests == []


def test_author_is_the_ninth_stage(scene: Scene) -> None:
    stage = AuthorStage(scene.ports())
    assert isinstance(stage, Stage) and stage.name is StageName.AUTHOR


def test_stored_pages_conform_to_the_shapes(scene: Scene) -> None:
    scene.run(ALICE_IRI, scene.acme)
    page = scene.page_of(ALICE_IRI)
    nodes = [page, scene.one(page, KGM.currentRevision)]
    quads = [q for node in nodes for q in scene.store.quads(ALICE.kg, node)]
    validation = scene.ports().validation
    assert validation.validate("alice", Changeset.of(quads)).conforms
    second_path = Quad(page, KGM.path, Literal("entities/other.md"), ALICE.kg)
    assert not validation.validate("alice", Changeset.of([*quads, second_path])).conforms


def test_written_pages_reach_the_outbox(scene: Scene) -> None:
    out = scene.run(ALICE_IRI, scene.acme)
    [entry] = Checkpoints(scene.store, scene.queries).outbox("alice")
    assert entry.pass_iri == pass_iri("alice", "p1") and ALICE.kg in entry.graphs
    assert {URIRef(p) for p in out["pages"]} <= entry.nodes
    assert entry.created_at == NOW.astimezone(UTC)


def test_model_page_is_not_rewritten_while_its_input_is_unchanged(scene: Scene) -> None:
    engine = ScriptedEngine({AuthorPage: [reply(markdown=f"Works at Acme {cite(scene.job)}.")]})
    scene.run(scene.acme)
    scene.run(ALICE_IRI, engine=engine)
    first = scene.markdown(ALICE_IRI)
    out = scene.run(ALICE_IRI, at=LATER, engine=engine)
    assert out["unchanged"] == [str(scene.page_of(ALICE_IRI))] and out["pages"] == []
    assert len(engine.calls(AuthorPage)) == 1 and scene.markdown(ALICE_IRI) == first


def test_malformed_commit_output_fails_the_stage(scene: Scene) -> None:
    state = PassState().with_output(StageName.COMMIT, {"entities": "not a list"})
    with pytest.raises(StageFailed, match="stage author: the commit output"):
        AuthorStage(scene.ports()).run(scene.ctx(), state)


def test_a_hub_entity_page_shows_the_newest_memories_and_says_there_are_more(
    scene: Scene,
) -> None:
    before = read_page_input(
        scene.store, scene.queries, "alice", ALICE_IRI, scene.ontology.effective("alice")
    )
    assert before is not None and not before.truncated
    # more memories about alice than a page shows: write them as the gate would, in bulk
    template = scene.world.memory(scene.seat)  # active, about alice
    quads: list[Quad] = []
    for n in range(PAGE_MEMORIES + 1):
        node = URIRef(f"https://w3id.org/kgmem/user/alice/memory/bulk{n:04d}")
        record = replace(
            template,
            iri=node,
            title=f"Bulk memory {n:04d}",
            claims=(),
            evidence=(),
            recorded_at=NOW + timedelta(minutes=n),
        )
        quads += record_quads(record, ALICE.kg)
    scene.store.commit(Changeset.of(quads))
    page = read_page_input(
        scene.store, scene.queries, "alice", ALICE_IRI, scene.ontology.effective("alice")
    )
    assert page is not None and page.truncated
    assert len(page.memories) == PAGE_MEMORIES
    titles = {m.title for m in page.memories}
    assert f"Bulk memory {PAGE_MEMORIES:04d}" in titles  # the newest is shown
    assert "Bulk memory 0000" not in titles  # the oldest is not
    assert "`kgmem memories list` has them all" in render_page(page, LATER)


def test_a_model_rewrites_a_page_the_follower_rendered_from_the_same_input(scene: Scene) -> None:
    scene.run(scene.acme)
    scene.run(ALICE_IRI)  # as the page follower leaves it: rendered, no model
    assert "\nwriter: kgmem\n" in scene.markdown(ALICE_IRI)
    engine = ScriptedEngine({AuthorPage: [reply(markdown=f"Works at Acme {cite(scene.job)}.")]})
    out = scene.run(ALICE_IRI, at=LATER, engine=engine)
    assert out["pages"] == [str(scene.page_of(ALICE_IRI))] and out["fallbacks"] == []
    markdown = scene.markdown(ALICE_IRI)
    assert "\nwriter: model\n" in markdown and "\nrevision: 2\n" in markdown
    again = scene.run(ALICE_IRI, at=LATER, engine=engine)  # the model's page stands
    assert again["unchanged"] == [str(scene.page_of(ALICE_IRI))]
    assert len(engine.calls(AuthorPage)) == 1
