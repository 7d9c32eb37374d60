"""The classify stage on a real store with the bundled ontologies: terms kept, matched, chosen
by a (scripted) model or proposed as undeclared placeholders; entities typed."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.errors import ModelOutputError
from kgmem.memory.gate import WriteGate
from kgmem.memory.model import ClaimDraft, DraftMemory, EntityDraft, MemoryKind
from kgmem.memory.sources import SourceStore
from kgmem.ontology import (
    DeclareProperty,
    DeltaPatch,
    OntologyService,
    Provenance,
    ValidationService,
    bundled_files,
    delta_term,
    ensure_bundled,
)
from kgmem.pipeline import (
    ClassifyTerm,
    ItemResult,
    ItemStage,
    ModelSet,
    ModelSpec,
    PassContext,
    PassState,
    StageName,
    TermChoice,
    pass_iri,
)
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.stages.classify import ClassifiedDraft, ClassifyDrop, ClassifyStage, term_name
from kgmem.pipeline.worklist import PassDraft, Worklist, worklist
from kgmem.store import OxigraphStore, QueryRegistry
from kgmem.vocab import KGM, SDO
from tests.pipeline.scripted import ScriptedEngine, prompt_of, reply

REPO = Path(__file__).resolve().parents[2]
UID = "alice"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
#: two of alice's own properties that share the label "favourite seat": a genuine tie
SEAT_CHOICE = delta_term(UID, "seatChoice")
SEAT_SIDE = delta_term(UID, "seatSide")


def make_ports(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> PassPorts:
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    ontology = OntologyService(store, queries)
    seats = (
        DeclareProperty("seatChoice", "favourite seat", SDO.Person),
        DeclareProperty("seatSide", "favourite seat", SDO.Person),
    )
    ontology.apply_delta(UID, DeltaPatch(seats, Provenance(f"user:{UID}", NOW)))
    validation = ValidationService(store, queries, ontology)
    clock = FixedClock(NOW)
    sources = SourceStore(store, queries, clock)
    gate = WriteGate(store, queries, settings, clock, sources, ontology, validation)
    return PassPorts(ontology, validation, sources, gate)


def with_model(ports: PassPorts, engine: ScriptedEngine) -> PassPorts:
    spec = ModelSpec("openai/scripted", engine=engine, num_retries=0)
    return dataclasses.replace(ports, models=ModelSet(memory=spec))


def context(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> PassContext:
    return PassContext(
        uid=UID,
        pass_id="p1",
        pass_iri=pass_iri(UID, "p1"),
        store=store,
        queries=queries,
        clock=FixedClock(NOW),
        settings=settings,
    )


def item(key: str, *claims: dict[str, Any], entities: tuple[EntityDraft, ...] = ()) -> PassDraft:
    draft = DraftMemory(
        kind=MemoryKind.SEMANTIC,
        title=f"draft {key}",
        claims=tuple(ClaimDraft(**c) for c in claims),
        entities=entities,
    )
    return PassDraft(key=key, draft=draft)


def rel(subject: str, predicate: str, obj: str, **extra: Any) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": obj, **extra}


def val(subject: str, predicate: str, value: str) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "value": value}


@pytest.fixture
def ports(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> PassPorts:
    return make_ports(store, queries, settings)


def classify(ports: PassPorts, draft: PassDraft) -> ClassifiedDraft:
    return ClassifyStage(ports).classify(UID, draft)


def only(result: ClassifiedDraft) -> DraftMemory:
    (classified,) = result.work.drafts
    return classified.draft


def types_of(draft: DraftMemory) -> dict[str, tuple[str, ...]]:
    return {e.name: e.types for e in draft.entities}


def choice(term: str, reason: str = "") -> str:
    return reply(choice=TermChoice(term=term, reason=reason))


# -- predicates -------------------------------------------------------------------------------


def test_classify_keeps_a_known_curie_as_its_full_iri(ports: PassPorts) -> None:
    result = classify(ports, item("d1", rel("user", "schema:worksFor", "Acme")))
    draft = only(result)
    assert draft.claims[0].predicate == str(SDO.worksFor)
    assert result.work.undeclared == ()


@pytest.mark.parametrize(
    ("words", "term"),
    [
        ("works for", SDO.worksFor),
        ("worksFor", SDO.worksFor),
        ("Employed  By", SDO.worksFor),  # an alternate label, case and spacing normalized
        ("born in", SDO.birthPlace),
        ("hasSkill", SDO.skills),  # the label "has skill" in camelCase
        ("allergicTo", KGM.allergicTo),
    ],
)
def test_classify_matches_words_to_a_starter_property_by_label(
    ports: PassPorts, words: str, term: str
) -> None:
    engine = ScriptedEngine()  # one exact match never needs the model
    result = classify(with_model(ports, engine), item("d1", rel("user", words, "Paris")))
    assert only(result).claims[0].predicate == str(term)
    assert engine.requests == []


def test_classify_asks_the_model_to_break_a_tie_and_takes_its_choice(ports: PassPorts) -> None:
    engine = ScriptedEngine({ClassifyTerm: [choice(str(SEAT_SIDE), "aisle or window")]})
    result = classify(with_model(ports, engine), item("d1", val("user", "favourite seat", "aisle")))
    assert only(result).claims[0].predicate == str(SEAT_SIDE)
    assert result.work.undeclared == ()
    (request,) = engine.calls(ClassifyTerm)
    shown = prompt_of(request)
    assert str(SEAT_CHOICE) in shown and str(SEAT_SIDE) in shown
    assert "user | favourite seat | 'aisle'" in shown


def test_classify_refuses_a_model_answer_that_was_not_offered(ports: PassPorts) -> None:
    engine = ScriptedEngine({ClassifyTerm: [choice("schema:seatPreference")]})
    result = classify(with_model(ports, engine), item("d1", val("user", "favourite seat", "aisle")))
    placeholder = str(delta_term(UID, "favouriteSeat"))
    assert only(result).claims[0].predicate == placeholder
    (term,) = result.work.undeclared
    assert (term.iri, term.role, term.uses) == (placeholder, "property", ("d1",))
    assert {c.term for c in term.candidates} >= {str(SEAT_CHOICE), str(SEAT_SIDE)}
    (note,) = result.notes
    assert "'schema:seatPreference'" in note.reason and "not among the candidates" in note.reason


def test_classify_takes_none_from_the_model_as_no_match(ports: PassPorts) -> None:
    engine = ScriptedEngine({ClassifyTerm: [choice("none", "a seat is not a liking")]})
    result = classify(with_model(ports, engine), item("d1", val("user", "prefersSeat", "aisle")))
    (request,) = engine.calls(ClassifyTerm)
    assert "kgm:likes" in prompt_of(request)  # "prefers" is an alternate label of likes
    assert only(result).claims[0].predicate == str(delta_term(UID, "prefersSeat"))
    assert "a seat is not a liking" in result.notes[0].reason


def test_classify_without_a_model_leaves_a_tie_undeclared(ports: PassPorts) -> None:
    result = classify(ports, item("d1", val("user", "favourite seat", "aisle")))
    (term,) = result.work.undeclared
    assert term.iri == str(delta_term(UID, "favouriteSeat"))
    assert "both match by label" in result.notes[0].reason


def test_classify_without_a_model_proposes_an_undeclared_placeholder(ports: PassPorts) -> None:
    result = classify(ports, item("d1", val("user", "prefers seat", "window")))
    placeholder = str(delta_term(UID, "prefersSeat"))
    assert only(result).claims[0].predicate == placeholder
    (term,) = result.work.undeclared
    assert (term.surface, term.role) == ("prefers seat", "property")
    assert "kgm:likes" in {c.term for c in term.candidates}
    assert term.candidates[0].label  # candidates carry labels for the assemble model


def test_classify_refuses_malformed_model_output(ports: PassPorts) -> None:
    broken = '[[ ## choice ## ]]\n{"term": "schema:worksFor", \n\n[[ ## completed ## ]]'
    engine = ScriptedEngine({ClassifyTerm: [broken]})
    with pytest.raises(ModelOutputError) as caught:
        classify(with_model(ports, engine), item("d1", val("user", "favourite seat", "aisle")))
    assert caught.value.stage == "classify"


def test_classify_drops_a_draft_whose_term_cannot_be_named(ports: PassPorts) -> None:
    result = classify(ports, item("d1", rel("user", "★ ★", "Acme")))
    assert result.work.drafts == ()
    (dropped,) = result.work.dropped
    assert (dropped.key, dropped.stage, dropped.code) == (
        "d1",
        StageName.CLASSIFY,
        ClassifyDrop.UNNAMEABLE_TERM.value,
    )


def test_term_name_mints_camel_case_names() -> None:
    assert term_name("born on", "property") == "bornOn"
    assert term_name("schema vegan-café", "class") == "SchemaVeganCafe"
    assert term_name("3 ★", "class") is None


# -- entities -------------------------------------------------------------------------------


def test_classify_adds_provisional_types_from_domain_and_range(ports: PassPorts) -> None:
    draft = only(classify(ports, item("d1", rel("Bob", "schema:worksFor", "Acme"))))
    assert types_of(draft) == {"Bob": (str(SDO.Person),), "Acme": (str(SDO.Organization),)}


def test_classify_lists_the_types_it_only_inferred(ports: PassPorts) -> None:
    given = (EntityDraft(name="Acme", types=("schema:Organization",), aliases=("Acme Inc",)),)
    claims = (rel("Bob", "schema:worksFor", "Acme Inc"), val("Bob", "schema:jobTitle", "chef"))
    result = classify(ports, item("d1", *claims, entities=given))
    (classified,) = result.work.drafts
    assert types_of(classified.draft)["Bob"] == (str(SDO.Person),)
    # Bob's type comes only from schema:worksFor's domain; Acme's the draft gave
    assert classified.inferred == {"bob": (str(SDO.Person),)}


def test_classify_lets_a_later_typing_claim_decide_over_an_inferred_type(
    ports: PassPorts,
) -> None:
    claims = (rel("Ada", "schema:worksFor", "Bea"), rel("Bea", "rdf:type", "schema:Person"))
    result = classify(ports, item("d1", *claims))
    (classified,) = result.work.drafts
    # Bea's stated Person rules out the Organization schema:worksFor's range would infer
    assert types_of(classified.draft) == {"Ada": (str(SDO.Person),), "Bea": (str(SDO.Person),)}
    assert classified.inferred == {"ada": (str(SDO.Person),)}


@pytest.mark.parametrize("said", ["schema:Organization", "organization", "schema:Corporation"])
def test_classify_drops_a_draft_whose_answer_types_a_mention_against_its_domain(
    ports: PassPorts, said: str
) -> None:
    draft = item("chat:c1#000", val("Lumen Labs", "schema:birthDate", "1990-03-12"))
    result = ClassifyStage(ports).classify(UID, draft, {"lumen labs": (said,)})
    assert result.work.drafts == ()
    (dropped,) = result.work.dropped
    assert dropped.code == ClassifyDrop.SELF_CONTRADICTORY_TYPE.value
    assert "schema:Person" in dropped.message and repr(said) in dropped.message


def test_classify_never_writes_a_type_the_answer_only_said(ports: PassPorts) -> None:
    draft = item("chat:c1#000", rel("Ada", "schema:worksFor", "Acme"), rel("Ada", "knows", "Bo"))
    said = {"acme": ("schema:Corporation",), "bo": ("schema:Person",), "ada": ("robot",)}
    result = ClassifyStage(ports).classify(UID, draft, said)
    (classified,) = result.work.drafts
    # consistent with what is inferred (or naming no known class), the answer's typings
    # check nothing further and become no type: only the domain and range type
    assert types_of(classified.draft) == {
        "Ada": (str(SDO.Person),),
        "Acme": (str(SDO.Organization),),
        "Bo": (str(SDO.Person),),
    }
    assert result.work.undeclared == ()


def test_classify_stage_reads_the_typings_of_the_whole_answer(
    ports: PassPorts, store: OxigraphStore, queries: QueryRegistry, settings: Settings
) -> None:
    born = val("Lumen Labs", "schema:birthDate", "1990-03-12")
    typed = rel("Lumen Labs", "rdf:type", "schema:Organization")
    extracted = (item("chat:c1#000", born), item("chat:c1#001", typed), item("chat:c2#000", born))
    state = PassState().with_output(StageName.EXTRACT, Worklist(drafts=extracted).to_json())
    # ground refused the typing: only the two birth dates are left to classify
    grounded = Worklist(drafts=(extracted[0], extracted[2]))
    state = state.with_output(StageName.GROUND, grounded.to_json())
    stage, ctx = ClassifyStage(ports), context(store, queries, settings)
    results = {k: stage.run_item(ctx, state, k) for k in stage.items(ctx, state)}
    work = worklist(state.with_items(StageName.CLASSIFY, results), before=StageName.RESOLVE)
    assert [(d.key, d.code) for d in work.dropped] == [
        ("chat:c1#000", ClassifyDrop.SELF_CONTRADICTORY_TYPE.value)
    ]
    # another answer (chat c2) said nothing of Lumen Labs: typed from the domain as before
    assert [types_of(d.draft) for d in work.drafts] == [{"Lumen Labs": (str(SDO.Person),)}]


def test_classify_leaves_the_user_untyped(ports: PassPorts) -> None:
    draft = only(
        classify(ports, item("d1", rel("I", "works for", "Acme"), rel("alice", "knows", "Bob")))
    )
    assert set(types_of(draft)) == {"Acme", "Bob"}


def test_classify_keeps_given_types_and_adds_no_implied_or_disjoint_type(
    ports: PassPorts,
) -> None:
    given = (
        EntityDraft(name="Acme", types=("company",), aliases=("Acme Inc",)),
        EntityDraft(name="Rex", types=("schema:Person",)),
    )
    claims = (rel("user", "schema:worksFor", "Acme Inc"), rel("Rex", "schema:about", "Acme"))
    draft = only(classify(ports, item("d1", *claims, entities=given)))
    # Corporation already implies Organization; Person and CreativeWork are disjoint
    assert types_of(draft) == {"Acme": (str(SDO.Corporation),), "Rex": (str(SDO.Person),)}
    assert draft.entities[0].aliases == ("Acme Inc",)


def test_classify_proposes_an_unknown_entity_type_as_an_undeclared_class(
    ports: PassPorts,
) -> None:
    given = (EntityDraft(name="Green Leaf", types=("vegan cafe",)),)
    result = classify(ports, item("d1", rel("user", "likes", "Green Leaf"), entities=given))
    placeholder = str(delta_term(UID, "VeganCafe"))
    assert types_of(only(result))["Green Leaf"][0] == placeholder
    (term,) = result.work.undeclared
    assert (term.iri, term.role) == (placeholder, "class")


@pytest.mark.parametrize("predicate", ["rdf:type", "is a", "a"])
def test_classify_turns_a_typing_claim_into_an_entity_type(
    ports: PassPorts, predicate: str
) -> None:
    claims = (rel("Luigi's", predicate, "restaurant"), rel("user", "likes", "Luigi's"))
    draft = only(classify(ports, item("d1", *claims)))
    assert [c.predicate for c in draft.claims] == [str(KGM.likes)]  # the typing left claims
    assert types_of(draft)["Luigi's"][0] == str(SDO.Restaurant)


def test_classify_types_with_an_undeclared_class_named_by_a_typing_claim(
    ports: PassPorts,
) -> None:
    result = classify(ports, item("d1", rel("Mochi", "rdf:type", "schema:ShibaInu")))
    draft = only(result)
    assert draft.claims == ()
    assert types_of(draft) == {"Mochi": (str(delta_term(UID, "ShibaInu")),)}
    assert result.work.undeclared[0].surface == "schema:ShibaInu"


def test_classify_drops_a_negated_typing_with_its_reason(ports: PassPorts) -> None:
    result = classify(ports, item("d1", rel("Bob", "is a", "doctor", negated=True)))
    (dropped,) = result.work.dropped
    assert dropped.code == ClassifyDrop.NEGATED_TYPE.value and "'doctor'" in dropped.message


# -- the stage ------------------------------------------------------------------------------


def test_classify_stage_banks_one_worklist_per_draft(
    ports: PassPorts, store: OxigraphStore, queries: QueryRegistry, settings: Settings
) -> None:
    drafts = (
        item("a", val("user", "prefers seat", "window")),
        item("b", val("Bob", "prefersSeat", "aisle")),
        item("c", rel("Bob", "is a", "doctor", negated=True)),
    )
    state = PassState().with_output(StageName.GROUND, Worklist(drafts=drafts).to_json())
    stage, ctx = ClassifyStage(ports), context(store, queries, settings)
    assert isinstance(stage, ItemStage) and stage.name is StageName.CLASSIFY
    keys = stage.items(ctx, state)
    assert keys == ["a", "b", "c"]
    results: dict[str, ItemResult] = {k: stage.run_item(ctx, state, k) for k in keys}
    after = state.with_items(StageName.CLASSIFY, results)
    work = worklist(after, before=StageName.RESOLVE)
    assert work.keys() == ["a", "b"]
    assert [d.key for d in work.dropped] == ["c"]
    (term,) = work.undeclared  # one placeholder, used by both drafts
    assert term.uses == ("a", "b")
