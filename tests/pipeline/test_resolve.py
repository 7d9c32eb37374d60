"""The resolve stage on real stores: candidates by name and alias, disjoint types set aside,
context deciding, ties to the model or to a new entity, shells in the proposal graph, and the
pass resolver the reconcile stage plans drafts with."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from dspy.lm15 import Request
from rdflib import Literal, URIRef

from kgmem.config import load_settings
from kgmem.memory.entities import entity_quads, self_entity
from kgmem.memory.model import DraftMemory
from kgmem.memory.planning import PlanContext, plan_draft
from kgmem.ontology import OntologyService, ValidationService, ViolationKind
from kgmem.pipeline import ModelSet, ModelSpec, PassContext, PassState, StageName, pass_iri
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.signatures import ResolveTieBreak
from kgmem.pipeline.stages.classify import ClassifyStage
from kgmem.pipeline.stages.resolve import PassResolver, ResolveStage
from kgmem.pipeline.worklist import EntityBinding, PassDraft, Worklist
from kgmem.store import Changeset, NodeKind, OxigraphStore, Quad, QueryRegistry, new_node
from kgmem.vocab import KGM, RC, RDF, SDO
from tests.memory.world import ALICE, World
from tests.pipeline.scripted import ScriptedEngine, prompt_of, reply

UID = "alice"
PASS = "p1"
PLANET, ELEMENT = "rc:Planet", "rc:ChemicalElement"


class Rig:
    """A world (store, bundled ontology, sources, gate) and a pass context over it."""

    def __init__(self, store: OxigraphStore, queries: QueryRegistry, home: Path) -> None:
        settings = load_settings(env={"KGMEM_HOME": str(home)})
        self.world = World(store, queries, settings)
        self.store, self.queries = store, queries
        self.ontology = OntologyService(store, queries)
        self.ctx = PassContext(
            UID, PASS, pass_iri(UID, PASS), store, queries, self.world.clock, settings
        )

    def ports(self, engine: ScriptedEngine | None = None) -> PassPorts:
        spec = (
            None if engine is None else ModelSpec("openai/scripted", engine=engine, num_retries=0)
        )
        return PassPorts(
            self.ontology,
            ValidationService(self.store, self.queries, self.ontology),
            self.world.sources,
            self.world.gate,
            ModelSet(memory=spec),
        )

    def entity(self, name: str, *types: URIRef, aliases: Sequence[str] = ()) -> URIRef:
        """An existing entity of alice's kg graph, as the gate writes one."""
        iri = new_node(UID, NodeKind.ENTITY)
        self.store.commit(Changeset.of(entity_quads(UID, iri, name, types, aliases, set())))
        return iri

    def relate(self, subject: URIRef, predicate: URIRef, obj: URIRef | Literal) -> None:
        self.store.commit(Changeset.of([Quad(subject, predicate, obj, ALICE.kg)]))

    def run(self, *drafts: DraftMemory, engine: ScriptedEngine | None = None) -> PassState:
        return ResolveStage(self.ports(engine)).run(self.ctx, state(*drafts))

    def shells(self) -> set[URIRef]:
        found = self.store.quads(self.ctx.proposal, None, RDF.type, KGM.Shell)
        return {URIRef(q.subject) for q in found}


@pytest.fixture
def rig(store: OxigraphStore, queries: QueryRegistry, home: Path) -> Rig:
    return Rig(store, queries, home)


def draft(
    *claims: tuple[str, str, str],
    entities: Sequence[dict[str, Any]] = (),
    values: Sequence[tuple[str, str, str]] = (),
    quote: str | None = None,
    source: str = "https://w3id.org/kgmem/user/alice/msg/m1",
) -> DraftMemory:
    """A draft as classify leaves it: (subject, predicate, object) claims, typed entities."""
    rows = [{"subject": s, "predicate": p, "object": o} for s, p, o in claims]
    rows += [{"subject": s, "predicate": p, "value": v} for s, p, v in values]
    return DraftMemory.model_validate(
        {
            "kind": "semantic",
            "title": "a memory",
            "claims": rows,
            "entities": list(entities),
            "evidence": [{"source": source, "quote": quote}] if quote else [],
        }
    )


def state(*drafts: DraftMemory) -> PassState:
    items = tuple(PassDraft(key=f"d{i}", draft=d) for i, d in enumerate(drafts, start=1))
    work = Worklist(drafts=items)
    return PassState.initial([]).with_output(StageName.CLASSIFY, work.to_json())


def bindings(after: PassState) -> list[dict[str, EntityBinding]]:
    work = Worklist.of(after.output(StageName.RESOLVE))
    return [d.bindings for d in work.drafts]


def in_kg(rig: Rig, iri: str) -> bool:
    return any(True for _ in rig.store.quads(ALICE.kg, URIRef(iri)))


def tie_answer(pick: str | None = None, fact: str | None = None) -> Any:
    """A ResolveTieBreak reply: ``pick`` as is, or the id of the candidate showing ``fact``."""

    def answer(request: Request) -> str:
        chosen = pick
        if fact is not None:
            for match in re.finditer(r'\{"id": "(E\d+)".*?\}', prompt_of(request)):
                if fact in match.group(0):
                    chosen = match.group(1)
        return reply(decision={"candidate": chosen, "reason": "the context says so"})

    return answer


# -- binding to what exists ----------------------------------------------------------------


def test_resolve_name_of_one_entity_binds_to_it(rig: Rig) -> None:
    acme = rig.entity("Acme", SDO.Organization)
    after = rig.run(
        draft(
            ("I", "schema:worksFor", "Acme"),
            entities=[{"name": "Acme", "types": ["schema:Organization"]}],
        )
    )
    [found] = bindings(after)
    assert set(found) == {"acme"}  # "I" is the user's: the gate maps it, resolve leaves it
    assert found["acme"].iri == str(acme) and not found["acme"].created
    assert found["acme"].aliases == ()
    assert after.dirty == (str(acme),)
    assert rig.shells() == set()


def test_resolve_alias_binds_and_exact_name_beats_alias(rig: Rig) -> None:
    robert = rig.entity("Robert Smith", SDO.Person, aliases=["Bob"])
    [found] = bindings(rig.run(draft(("Bob", "schema:worksFor", "Acme"))))
    assert found["bob"].iri == str(robert) and not found["bob"].created
    assert found["bob"].reason.startswith("alias")

    bob = rig.entity("Bob", SDO.Person)
    [found] = bindings(rig.run(draft(("Bob", "schema:worksFor", "Acme"))))
    assert found["bob"].iri == str(bob)
    assert found["bob"].reason.startswith("exact name")


def test_resolve_relation_in_the_kg_decides_between_namesakes(rig: Rig) -> None:
    rig.entity("Alex", SDO.Person)
    colleague = rig.entity("Alex", SDO.Person)
    acme = rig.entity("Acme", SDO.Organization)
    rig.relate(colleague, SDO.worksFor, acme)
    after = rig.run(draft(("Alex", "schema:knows", "Acme")))  # no model: a tie would be new
    [found] = bindings(after)
    assert found["alex"].iri == str(colleague)
    assert "1 contextual match" in found["alex"].reason
    assert set(after.dirty) == {str(colleague), str(acme)}


def test_resolve_matching_attribute_decides_between_namesakes(rig: Rig) -> None:
    rig.entity("Sam", SDO.Person)
    dentist = rig.entity("Sam", SDO.Person)
    rig.relate(dentist, SDO.jobTitle, Literal("Dentist"))
    [found] = bindings(rig.run(draft(values=[("Sam", "schema:jobTitle", "dentist")])))
    assert found["sam"].iri == str(dentist)


# -- new entities and shells ---------------------------------------------------------------


def test_two_drafts_naming_one_new_person_bind_one_shell(rig: Rig) -> None:
    person = [{"name": "Dana", "types": ["schema:Person"]}]
    after = rig.run(
        draft(("Dana", "schema:worksFor", "Acme"), entities=person),
        draft(("I", "schema:knows", "dana")),
    )
    first, second = bindings(after)
    assert first["dana"].created and second["dana"].created
    assert first["dana"].iri == second["dana"].iri
    assert second["dana"].name == "Dana"  # the new entity's one name, in every draft
    dana = URIRef(first["dana"].iri)
    assert first["acme"].iri != str(dana)
    assert rig.shells() == {dana, URIRef(first["acme"].iri)}
    shell = set(rig.store.quads(rig.ctx.proposal, dana))
    assert {(q.predicate, q.object) for q in shell} == {
        (RDF.type, KGM.Shell),
        (RDF.type, KGM.Entity),
        (RDF.type, SDO.Person),
        (KGM.name, Literal("Dana")),
        (KGM.nameKey, Literal("dana")),
    }
    assert not in_kg(rig, str(dana)) and after.dirty == ()


def test_rerunning_the_stage_replaces_its_shells(rig: Rig) -> None:
    other = Quad(URIRef("urn:x:term"), RDF.type, KGM.Entity, rig.ctx.proposal)
    rig.store.commit(Changeset.of([other]))  # an earlier stage's proposal: not resolve's
    drafts = (draft(("Dana", "schema:worksFor", "Acme")),)
    rig.run(*drafts)
    after = rig.run(*drafts)
    [found] = bindings(after)
    assert rig.shells() == {URIRef(found["dana"].iri), URIRef(found["acme"].iri)}
    assert rig.store.count(rig.ctx.proposal) == 2 * 4 + 1
    assert list(rig.store.quads(rig.ctx.proposal, URIRef("urn:x:term")))


def test_names_declared_as_aliases_are_one_entity(rig: Rig) -> None:
    entities = [
        {"name": "Robert", "types": ["schema:Person"], "aliases": ["Bobby"]},
        {"name": "Bobby", "aliases": ["Bob"]},
    ]
    after = rig.run(
        draft(
            ("Bob", "schema:worksFor", "Acme"), ("Robert", "schema:knows", "I"), entities=entities
        )
    )
    [found] = bindings(after)
    iris = {found[k].iri for k in ("robert", "bobby", "bob")}
    assert len(iris) == 1 and found["bob"].created
    assert found["bob"].name == "Robert" and found["bob"].aliases == ("Bobby", "Bob")
    [iri] = iris
    shell = {(q.predicate, str(q.object)) for q in rig.store.quads(rig.ctx.proposal, URIRef(iri))}
    assert {(KGM.name, "Robert"), (KGM.alias, "Bobby"), (KGM.alias, "Bob")} <= shell
    assert (KGM.name, "Bob") not in shell


# -- types: the Mercury case ---------------------------------------------------------------


def test_mercury_binds_by_type_and_a_disjoint_mention_is_new(rig: Rig) -> None:
    planet = rig.entity("Mercury", RC.Planet)
    element = rig.entity("Mercury", RC.ChemicalElement)
    company = rig.entity("Mercury", SDO.Corporation)
    sky, lab, singer = bindings(
        rig.run(
            draft(
                ("Mercury", "schema:about", "Sun"),
                entities=[{"name": "Mercury", "types": [PLANET]}],
            ),
            draft(
                ("Mercury", "schema:about", "Hg"),
                entities=[{"name": "Mercury", "types": [ELEMENT]}],
            ),
            draft(
                ("Freddie", "schema:knows", "Mercury"),
                entities=[{"name": "Mercury", "types": ["schema:Person"]}],
            ),
        )
    )
    assert sky["mercury"].iri == str(planet)
    assert "2 candidate(s) of disjoint types set aside" in sky["mercury"].reason
    assert lab["mercury"].iri == str(element)
    assert singer["mercury"].created
    assert singer["mercury"].iri not in {str(planet), str(element), str(company)}
    assert "no compatible candidate" in singer["mercury"].reason


# -- inferred types: provisional, never a veto -------------------------------------------------


def classified(rig: Rig, *drafts: DraftMemory) -> PassState:
    """The drafts as the classify stage leaves them (with the types it inferred)."""
    stage = ClassifyStage(rig.ports())
    parts = [
        stage.classify(UID, PassDraft(key=f"d{i}", draft=d)).work for i, d in enumerate(drafts)
    ]
    return PassState.initial([]).with_output(StageName.CLASSIFY, Worklist.merge(parts).to_json())


def test_an_inferred_type_sets_no_known_entity_aside(rig: Rig) -> None:
    bea = rig.entity("Bea Hart", SDO.Person)
    after = ResolveStage(rig.ports()).run(
        rig.ctx, classified(rig, draft(("Ada Moss", "schema:worksFor", "Bea Hart")))
    )
    [found] = bindings(after)
    # schema:worksFor's range made Bea Hart an Organization only provisionally
    assert found["bea hart"].iri == str(bea) and not found["bea hart"].created
    assert found["bea hart"].types == ()  # the inferred type does not fit her: dropped
    assert found["ada moss"].created and found["ada moss"].types == (str(SDO.Person),)
    assert rig.shells() == {URIRef(found["ada moss"].iri)}  # no namesake organization


def test_an_inferred_type_still_prefers_the_candidate_it_fits(rig: Rig) -> None:
    rig.entity("Acme", SDO.Person)
    company = rig.entity("Acme", SDO.Organization)
    after = ResolveStage(rig.ports()).run(
        rig.ctx, classified(rig, draft(("Dana", "schema:worksFor", "Acme")))
    )
    [found] = bindings(after)
    assert found["acme"].iri == str(company)
    assert "1 agreeing type(s): best of 2" in found["acme"].reason


def test_a_stated_type_still_sets_a_disjoint_candidate_aside(rig: Rig) -> None:
    bea = rig.entity("Bea Hart", SDO.Person)
    typed = draft(
        ("Ada Moss", "schema:worksFor", "Bea Hart"),
        entities=[{"name": "Bea Hart", "types": ["schema:Organization"]}],
    )
    [found] = bindings(ResolveStage(rig.ports()).run(rig.ctx, classified(rig, typed)))
    assert found["bea hart"].created and found["bea hart"].iri != str(bea)
    assert "1 candidate(s) of disjoint types set aside" in found["bea hart"].reason


# -- the gate's tie rule: a known entity typed disjointly ----------------------------------------


def as_organization(source: str, *values: tuple[str, str, str]) -> DraftMemory:
    """Ada Moss's job, the draft typing her an organization."""
    return draft(
        ("Ada Moss", "schema:worksFor", "Lumen Labs"),
        entities=[{"name": "Ada Moss", "types": ["schema:Organization"]}],
        values=values,
        quote="I work at Lumen Labs",
        source=source,
    )


def test_the_speaker_of_a_cited_message_typed_disjointly_is_the_known_entity(rig: Rig) -> None:
    ada = rig.entity("Ada Moss", SDO.Person)
    said = rig.world.say("user", "I work at Lumen Labs.", speaker="Ada Moss")
    [found] = bindings(rig.run(as_organization(said)))
    assert found["ada moss"].iri == str(ada) and not found["ada moss"].created
    assert "ties the name to this one" in found["ada moss"].reason
    assert found["ada moss"].types == (str(SDO.Organization),)  # the clash reconcile refuses
    assert rig.shells() == {URIRef(found["lumen labs"].iri)}  # no namesake organization


def test_a_name_tied_to_two_namesakes_binds_one_never_a_third(rig: Rig) -> None:
    namesakes = {rig.entity("Ada Moss", SDO.Person), rig.entity("Ada Moss", SDO.Person)}
    said = rig.world.say("user", "I work at Lumen Labs.", speaker="Ada Moss")
    engine = ScriptedEngine()  # no tie-break is asked: the draft is refused either way
    [found] = bindings(rig.run(as_organization(said), engine=engine))
    assert URIRef(found["ada moss"].iri) in namesakes and not found["ada moss"].created
    assert engine.requests == []


def test_a_fact_the_known_entity_has_ties_a_disjointly_typed_name_to_it(rig: Rig) -> None:
    ada = rig.entity("Ada Moss", SDO.Person)
    rig.relate(ada, SDO.jobTitle, Literal("chemist"))
    said = rig.world.say("user", "Ada Moss works at Lumen Labs as a chemist.", speaker="Reader")
    [found] = bindings(rig.run(as_organization(said, ("Ada Moss", "schema:jobTitle", "chemist"))))
    assert found["ada moss"].iri == str(ada) and not found["ada moss"].created


def test_a_disjointly_typed_name_the_draft_does_not_tie_is_a_new_entity(rig: Rig) -> None:
    ada = rig.entity("Ada Moss", SDO.Person)
    said = rig.world.say("user", "I work at Lumen Labs.", speaker="Reader")
    [found] = bindings(rig.run(as_organization(said)))
    assert found["ada moss"].created and found["ada moss"].iri != str(ada)
    assert "no compatible candidate" in found["ada moss"].reason


# -- ties ----------------------------------------------------------------------------------


def namesakes(rig: Rig) -> tuple[URIRef, URIRef]:
    """Two people called Alex, one known to work at Initech; a draft says neither."""
    plain = rig.entity("Alex", SDO.Person)
    initech = rig.entity("Alex", SDO.Person)
    rig.relate(initech, SDO.worksFor, rig.entity("Initech", SDO.Organization))
    return plain, initech


CHESS = draft(
    ("Alex", "schema:knowsAbout", "chess"),
    quote="Alex from Initech taught me chess",
    entities=[{"name": "Alex", "types": ["schema:Person"]}],
)


def test_tie_without_a_model_is_a_new_entity(rig: Rig) -> None:
    plain, initech = namesakes(rig)
    after = rig.run(CHESS)
    [found] = bindings(after)
    assert found["alex"].created and found["alex"].iri not in {str(plain), str(initech)}
    assert "2 candidates tie" in found["alex"].reason and "no model" in found["alex"].reason
    assert URIRef(found["alex"].iri) in rig.shells()


def test_tie_with_a_model_binds_the_candidate_it_chooses(rig: Rig) -> None:
    _, initech = namesakes(rig)
    engine = ScriptedEngine().add(ResolveTieBreak, tie_answer(fact="schema:worksFor Initech"))
    after = rig.run(CHESS, engine=engine)
    [found] = bindings(after)
    assert found["alex"].iri == str(initech) and not found["alex"].created
    assert "the model chose" in found["alex"].reason
    [request] = engine.calls(ResolveTieBreak)
    prompt = prompt_of(request)
    assert (
        "Alex from Initech taught me chess" in prompt and "Alex schema:knowsAbout chess" in prompt
    )
    assert prompt.count('"name": "Alex"') == 2
    assert rig.shells() == {URIRef(found["chess"].iri)}  # only the new topic


@pytest.mark.parametrize("answer", ["E7", "https://w3id.org/kgmem/user/alice/entity/x", ""])
def test_tie_with_a_model_answering_an_unoffered_id_is_new(rig: Rig, answer: str) -> None:
    plain, initech = namesakes(rig)
    engine = ScriptedEngine().add(ResolveTieBreak, tie_answer(pick=answer))
    [found] = bindings(rig.run(CHESS, engine=engine))
    assert found["alex"].created and found["alex"].iri not in {str(plain), str(initech)}
    assert f"answered {answer!r}, which was not offered" in found["alex"].reason


def test_tie_with_a_model_answering_new_is_new(rig: Rig) -> None:
    namesakes(rig)
    engine = ScriptedEngine().add(ResolveTieBreak, tie_answer(pick="new"))
    [found] = bindings(rig.run(CHESS, engine=engine))
    assert found["alex"].created and "the model answered new" in found["alex"].reason


def test_no_tie_no_model_call(rig: Rig) -> None:
    rig.entity("Acme", SDO.Organization)
    engine = ScriptedEngine()
    rig.run(draft(("Dana", "schema:worksFor", "Acme")), engine=engine)
    assert engine.requests == []


# -- the pass resolver ---------------------------------------------------------------------


def test_pass_resolver_plans_the_draft_on_the_bound_entities(rig: Rig) -> None:
    world = rig.world
    world.draft(
        {
            "kind": "semantic",
            "title": "Alice works at Acme",
            "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Acme"}],
            "entities": [{"name": "Acme", "types": ["schema:Organization"]}],
            "evidence": [
                {"source": world.say("user", "I work at Acme."), "quote": "I work at Acme"}
            ],
        }
    )
    [acme] = {q.object for q in rig.store.quads(ALICE.kg, self_entity(UID), SDO.worksFor)}
    source = world.say("user", "My colleague Dana works at Acme.")
    colleague = draft(
        ("Dana", "schema:worksFor", "Acme"),
        entities=[
            {"name": "Dana", "types": ["schema:Person"]},
            {"name": "Acme", "types": ["schema:Organization"], "aliases": ["Acme Corp"]},
        ],
        quote="Dana works at Acme",
        source=source,
    )
    [bound] = bindings(rig.run(colleague))
    assert bound["acme"].iri == str(acme) and bound["dana"].created
    dana = URIRef(bound["dana"].iri)

    sources, previous = world.gate.sources_of(UID, colleague)
    resolver = PassResolver(rig.store, rig.queries, bound)
    ctx = PlanContext(UID, UID, rig.ontology.effective(UID), resolver, sources, previous, {})
    plan = plan_draft(colleague, ctx)

    [claim] = plan.claims
    assert (claim.subject, claim.object) == (dana, acme)
    created = set(entity_quads(UID, dana, "Dana", [SDO.Person], (), set()))
    assert created <= set(plan.entity_quads)
    assert Quad(acme, KGM.alias, Literal("Acme Corp"), ALICE.kg) in plan.entity_quads
    assert not any(q.subject == acme and q.predicate == KGM.name for q in plan.entity_quads)
    assert {q.graph for q in plan.entity_quads} == {ALICE.kg}
    assert not in_kg(rig, str(dana))  # planning writes nothing


def test_pass_resolver_resolves_an_unbound_name_as_the_gate_does(rig: Rig) -> None:
    acme = rig.entity("Acme", SDO.Organization)
    resolver = PassResolver(rig.store, rig.queries, {})
    match = resolver.resolve(UID, "ACME", [SDO.Corporation], rig.ontology.effective(UID))
    assert match.iri == acme and not match.created
    assert match.quads == (Quad(acme, RDF.type, SDO.Corporation, ALICE.kg),)


def test_pass_resolver_adds_only_what_an_existing_entity_lacks(rig: Rig) -> None:
    robert = rig.entity("Robert Smith", SDO.Person, aliases=["Bob"])
    binding = EntityBinding(name="Bob", iri=str(robert), aliases=("Bob", "Rob"))
    resolver = PassResolver(rig.store, rig.queries, {"bob": binding})
    match = resolver.resolve(UID, "Bob", [SDO.Person], rig.ontology.effective(UID))
    assert match.iri == robert and match.name == "Robert Smith" and not match.created
    assert set(match.quads) == {
        Quad(robert, KGM.alias, Literal("Rob"), ALICE.kg),
        Quad(robert, KGM.nameKey, Literal("rob"), ALICE.kg),
    }


def test_pass_resolver_reports_a_stated_type_disjoint_with_the_bound_entity(rig: Rig) -> None:
    ada = rig.entity("Ada Moss", SDO.Person)
    binding = EntityBinding(name="Ada Moss", iri=str(ada), types=(str(SDO.Organization),))
    resolver = PassResolver(rig.store, rig.queries, {"ada moss": binding})
    match = resolver.resolve(UID, "Ada Moss", [SDO.Organization], rig.ontology.effective(UID))
    assert match.iri == ada and match.quads == ()  # never a silent retype
    [clash] = match.clashes
    assert (clash.focus, clash.kind, clash.value) == (ada, ViolationKind.DISJOINT, SDO.Organization)


def test_pass_resolver_writes_only_the_types_resolve_kept(rig: Rig) -> None:
    bea = rig.entity("Bea Hart", SDO.Person)
    binding = EntityBinding(name="Bea Hart", iri=str(bea))  # an inferred type was dropped
    resolver = PassResolver(rig.store, rig.queries, {"bea hart": binding})
    match = resolver.resolve(UID, "Bea Hart", [SDO.Organization], rig.ontology.effective(UID))
    assert match.iri == bea and match.quads == () and match.clashes == ()
    assert match.types == frozenset({SDO.Person})


def test_stage_output_round_trips_as_json(rig: Rig) -> None:
    after = rig.run(draft(("Dana", "schema:worksFor", "Acme")))
    assert PassState.from_json(after.to_json()) == after
    assert json.loads(after.to_json())["outputs"]["resolve"]["drafts"][0]["bindings"]["dana"]
