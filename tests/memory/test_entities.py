"""Entity resolution through the write gate: one identity per name unless the kinds differ,
and a draft that ties a name to a known entity cannot retype it into something disjoint."""

from __future__ import annotations

from typing import Any

from rdflib import Literal, URIRef

from kgmem.memory.entities import key_variants
from kgmem.memory.gate import Outcome
from kgmem.ontology import ViolationKind
from kgmem.vocab import KGM, RDF, SDO
from tests.memory.world import ALICE, World, claim_draft


def described(
    name: str, value: str, source: str, quote: str, kind: str = "schema:Person"
) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": f"{name}: {value}",
        "confidence": 0.9,
        "claims": [{"subject": name, "predicate": "schema:description", "value": value}],
        "entities": [{"name": name, "types": [kind]}],
        "evidence": [{"source": source, "quote": quote}],
    }


def named(world: World, key: str) -> list[URIRef]:
    found = world.store.quads(ALICE.kg, None, KGM.nameKey, Literal(key))
    return sorted({q.subject for q in found if isinstance(q.subject, URIRef)})


def types_of(world: World, entity: URIRef) -> set[object]:
    return {q.object for q in world.store.quads(ALICE.kg, entity, RDF.type)}


def test_known_speaker_typed_as_an_organization_is_refused_not_duplicated(
    world: World,
) -> None:
    world.say("user", "Who likes the mountains here?", speaker="Alice")  # two speakers:
    said = world.say("user", "I love hiking in the Alps.", speaker="Nora Lindqvist")  # Nora
    [known] = world.draft(described("Nora Lindqvist", "hiking", said, "I love hiking"))
    assert known.outcome is Outcome.ACTIVE
    [nora] = named(world, "nora lindqvist")
    before = world.memory_count()
    as_org = described("Nora Lindqvist", "the Alps", said, "I love hiking in the Alps")
    as_org["entities"][0]["types"] = ["schema:Organization"]
    [item] = world.draft(as_org)
    assert item.outcome is Outcome.REFUSED and item.memory is None
    [clash] = item.violations
    assert clash.kind is ViolationKind.DISJOINT and clash.focus == nora
    assert clash.value == SDO.Organization and clash.proof is not None
    [reason] = item.reasons
    assert "'Nora Lindqvist'" in reason and str(SDO.Person) in reason
    assert str(SDO.Organization) in reason
    # one identity, not retyped, nothing written
    assert named(world, "nora lindqvist") == [nora]
    assert SDO.Organization not in types_of(world, nora)
    assert world.memory_count() == before  # the refusal is a decision in ops, nothing else
    [refusal] = [d for d in world.gate.decisions.feed("alice") if d.iri == item.decision]
    assert refusal.target is None and refusal.reason == reason


def test_a_fact_the_known_entity_has_ties_the_name_to_it(world: World) -> None:
    told = world.say("user", "Nora loves hiking.", speaker="Reader")
    [known] = world.draft(described("Nora", "hiking", told, "Nora loves hiking"))
    assert known.outcome is Outcome.ACTIVE
    [nora] = named(world, "nora")
    [item] = world.draft(
        described("Nora", "hiking", told, "Nora loves hiking", "schema:Organization")
    )
    assert item.outcome is Outcome.REFUSED
    assert [(v.kind, v.focus) for v in item.violations] == [(ViolationKind.DISJOINT, nora)]
    assert named(world, "nora") == [nora]


def test_a_relation_the_known_entity_has_ties_the_name_to_it(world: World) -> None:
    told = world.say("user", "Nora works at Acme.", speaker="Reader")
    job = {
        "kind": "semantic",
        "title": "Nora works at Acme",
        "confidence": 0.9,
        "claims": [{"subject": "Nora", "predicate": "schema:worksFor", "object": "Acme"}],
        "entities": [
            {"name": "Nora", "types": ["schema:Person"]},
            {"name": "Acme", "types": ["schema:Organization"]},
        ],
        "evidence": [{"source": told, "quote": "Nora works at Acme"}],
    }
    [known] = world.draft(job)
    assert known.outcome is Outcome.ACTIVE
    [nora] = named(world, "nora")
    job["entities"][0]["types"] = ["schema:Organization"]
    [item] = world.draft(job)
    assert item.outcome is Outcome.REFUSED
    # the identity conflict, not a domain violation of a second, organization "Nora"
    assert [(v.kind, v.focus) for v in item.violations] == [(ViolationKind.DISJOINT, nora)]


def test_same_name_of_another_kind_with_nothing_tying_them_stays_apart(world: World) -> None:
    friend = world.say("user", "My friend Jordan plays chess.")
    brand = world.say("user", "The company Jordan sells shoes.")
    [person] = world.draft(described("Jordan", "plays chess", friend, "Jordan plays chess"))
    [company] = world.draft(
        described("Jordan", "sells shoes", brand, "Jordan sells shoes", "schema:Organization")
    )
    assert person.outcome is company.outcome is Outcome.ACTIVE
    jordans = named(world, "jordan")
    assert len(jordans) == 2
    assert sorted(SDO.Person in types_of(world, j) for j in jordans) == [False, True]
    assert not any(
        SDO.Person in types_of(world, j) and SDO.Organization in types_of(world, j) for j in jordans
    )


def test_a_speaker_typed_compatibly_resolves_to_the_known_entity(world: World) -> None:
    said = world.say("user", "I love hiking in the Alps.", speaker="Nora Lindqvist")
    world.draft(described("Nora Lindqvist", "hiking", said, "I love hiking"))
    [nora] = named(world, "nora lindqvist")
    [item] = world.draft(described("Nora Lindqvist", "the Alps", said, "I love hiking in the Alps"))
    assert item.outcome is Outcome.ACTIVE
    assert [c.subject for c in world.memory(item.memory).claims] == [nora]
    assert named(world, "nora lindqvist") == [nora]


# -- #23 f: the chat's words type a referent ----------------------------------------------


def test_a_colleague_typed_as_an_organization_is_a_mislabel(world: World) -> None:
    said = world.say("user", "My colleague Claire Fontaine lent me her old hotspot.")
    quote = "Claire Fontaine lent me her old hotspot"
    as_org = described(
        "Claire Fontaine", "lent me her old hotspot", said, quote, "schema:Organization"
    )
    [item] = world.draft(as_org)
    assert item.outcome is Outcome.REFUSED and item.memory is None
    assert any(str(SDO.Organization) in r for r in item.reasons)
    assert named(world, "claire fontaine") == []  # nothing written
    [kept] = world.draft(described("Claire Fontaine", "lent me her old hotspot", said, quote))
    assert kept.outcome is Outcome.ACTIVE


def test_two_referents_of_one_name_and_disjoint_kinds_stay_apart(world: World) -> None:
    broker = world.say("user", "ledger-api publishes events to Mercury, our message broker.")
    planet = world.say("user", "My daughter needs three facts about Mercury, the planet.")
    [software] = world.draft(
        described("Mercury", "our message broker", broker, "Mercury, our message broker",
                  "schema:SoftwareApplication")
    )  # fmt: skip
    [body] = world.draft(
        described("Mercury", "the planet", planet, "Mercury, the planet", "schema:Place")
    )
    assert software.outcome is body.outcome is Outcome.ACTIVE
    assert len(named(world, "mercury")) == 2


def test_a_university_is_one_whichever_way_round_it_is_said() -> None:
    edinburgh = set(key_variants("University of Edinburgh"))
    assert edinburgh & set(key_variants("Edinburgh Uni"))
    assert edinburgh & set(key_variants("Edinburgh University"))
    assert not edinburgh & set(key_variants("Edinburgh Napier University"))


def _gp(source: str, name: str, quote: str) -> dict[str, Any]:
    person = {name: "schema:Person"}
    return claim_draft(source, quote, name, "schema:jobTitle", types=person, value="GP")


def test_a_title_and_a_surname_are_the_person_the_chat_named_in_full(world: World) -> None:
    said = world.say("user", "Dr. Adaeze Okafor, my GP at the Riverside practice.")
    [first] = world.draft(_gp(said, "Adaeze Okafor", "Dr. Adaeze Okafor, my GP"))
    assert first.outcome is Outcome.ACTIVE
    [again] = world.draft(_gp(said, "Dr. Okafor", "my GP at the Riverside practice"))
    assert again.outcome is Outcome.DISCARDED  # the same person, the same fact
