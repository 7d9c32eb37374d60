"""Shared pieces of the consolidation tests: services on a real on-disk store, a pipeline on
a scripted model (or none), the two sessions and what the model says about the first, and
readers of the resulting memory that leave node ids out."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rdflib import Literal, URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.memory.listing import MemoryList
from kgmem.memory.model import MemoryStatus
from kgmem.memory.records import MemoryRecord, read_memory
from kgmem.memory.source_inputs import MessageIn
from kgmem.ontology import DeclareProperty, DeltaPatch, Provenance, delta_term
from kgmem.pipeline import Checkpoints, ModelSet, ModelSpec
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.ports import PassPorts
from kgmem.store import UserGraphs
from kgmem.vocab import KGM, RDF, SDO
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, quote

UID = "alice"
G = UserGraphs(UID)
T1 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
T2 = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
JOB = delta_term(UID, "currentJobAt")

SESSION_1 = (
    ("user", "I work at Acme. My friend Robert lives in Paris. My birthday is 12 March 1990."),
    ("assistant", "Noted. Paris is lovely in spring."),
)
SESSION_2 = (
    ("user", "Big news: I now work at Globex."),
    ("tool", "CRM record: Alice, born 1991-03-12."),
)


def open_services(settings: Settings, clock: FixedClock, *, fresh: bool = True) -> Services:
    """Services on a real on-disk store; a ``fresh`` one gets alice's own single-valued
    ``currentJobAt`` (a reopened one has it already)."""
    built = build_services(settings, clock=clock)
    if not fresh:
        return built
    # alice's own single-valued relation: a new employer is a change of the world
    built.ontology.apply_delta(
        UID,
        DeltaPatch(
            (
                DeclareProperty(
                    "currentJobAt", "current job at", SDO.Person, SDO.Organization, functional=True
                ),
            ),
            Provenance("user:alice", T1),
        ),
    )
    return built


def consolidation(
    services: Services, engine: ScriptedEngine | None, checkpoints: Checkpoints | None = None
) -> Consolidation:
    """A pipeline on the scripted model (None: no model configured)."""
    models = ModelSet()
    if engine is not None:
        models = ModelSet(memory=ModelSpec("openai/scripted", engine=engine, num_retries=0))
    ports = PassPorts(
        services.ontology, services.validation, services.sources, services.gate, models
    )
    return Consolidation(
        services.store,
        services.queries,
        services.clock,
        services.settings,
        ports,
        checkpoints=checkpoints,
    )


def say(services: Services, chat: str, turns: tuple[tuple[str, str], ...]) -> list[str]:
    iris = []
    for turn, (role, text) in enumerate(turns):
        extra: dict[str, Any] = {}
        if role == "tool":
            extra = {"tool_name": "crm", "tool_outcome": "success"}
        msg = MessageIn(chat=chat, turn=turn, role=role, text=text, **extra)
        iris.append(str(services.sources.ingest_message(UID, msg).iri))
    return iris


def memories(services: Services) -> dict[str, MemoryRecord]:
    """Every memory of alice's kg and quarantine graphs, by title."""
    listing = MemoryList(services.store, services.queries)
    out: dict[str, MemoryRecord] = {}
    for status in MemoryStatus:
        for summary in listing.memories(UID, status=status):
            record = read_memory(services.store, summary.iri, [G.kg, G.quarantine])
            assert record is not None
            out[record.title] = record
    return out


def entity_named(services: Services, name: str) -> URIRef:
    found = [q.subject for q in services.store.quads(G.kg, None, KGM.name, Literal(name))]
    assert len(found) == 1, f"{name}: {found}"
    subject = found[0]
    assert isinstance(subject, URIRef)
    return subject


def types_of(services: Services, node: URIRef) -> set[URIRef]:
    return {q.object for q in services.store.quads(G.kg, node, RDF.type)} - {KGM.Entity}  # type: ignore[misc]


def session_one_reply() -> str:
    """What the model answers for session 1: four true claims and two lies (an invented
    quote, and the assistant's own words as proof)."""
    s1 = "S1"
    return claims_reply(
        claim(
            "user",
            "currentJobAt",
            quote(s1, "I work at Acme"),
            object="Acme",
            statement="Alice works at Acme",
        ),
        claim(
            "user",
            "foaf:knows",
            quote(s1, "My friend Robert"),
            object="Robert",
            statement="Alice knows Robert",
        ),
        claim(
            "Robert",
            "schema:homeLocation",
            quote(s1, "Robert lives in Paris"),
            object="Paris",
            statement="Robert lives in Paris",
        ),
        claim(
            "user",
            "schema:birthDate",
            quote(s1, "My birthday is 12 March 1990"),
            value="1990-03-12",
            statement="Alice was born on 1990-03-12",
        ),
        # lies: an invented quote, and a quote of the assistant's own words
        claim(
            "user",
            "schema:worksFor",
            quote(s1, "I have worked at Initech"),
            object="Initech",
            statement="Alice worked at Initech",
        ),
        claim(
            "Paris",
            "schema:description",
            quote("S2", "Paris is lovely in spring"),
            value="lovely in spring",
            statement="Paris is lovely",
        ),
    )


def fingerprint(services: Services) -> tuple[frozenset[Any], frozenset[Any], tuple[Any, ...]]:
    """The user's memory without node ids: entities as (name, types); memories as (title,
    status, pinned, graph, claims by names, evidence quotes and spans); and the refusals in
    the decisions feed as (draft title, kind, reason), each as often as it is there."""
    store = services.store
    names = {q.subject: str(q.object) for q in store.quads(G.kg, None, KGM.name)}
    entities = frozenset(
        (name, frozenset(types_of(services, node)))
        for node, name in names.items()
        if isinstance(node, URIRef)
    )
    found = frozenset(
        (
            m.title,
            m.status,
            m.pinned,
            m.graph,
            frozenset(
                (
                    names.get(c.subject, str(c.subject)),
                    c.predicate,
                    names.get(c.object, str(c.object)) if c.object else str(c.value),
                    c.negated,
                )
                for c in m.claims
            ),
            frozenset((e.quote, e.span) for e in m.evidence),
        )
        for m in memories(services).values()
    )
    refusals = tuple(
        sorted(
            (d.draft.title, d.draft.kind.value, d.reason)
            for d in services.gate.decisions.feed(UID, 1000)
            if d.draft is not None
        )
    )
    return entities, found, refusals


def known_hiker(services: Services) -> tuple[str, dict[str, Any]]:
    """Nora Lind says she loves hiking; her memory of it, drafted at the gate and active.
    Returns the message's IRI and the draft (to retype: a clash a pass must refuse)."""
    message = MessageIn(
        chat="c1", turn=0, role="user", text="I love hiking in the Alps.", speaker="Nora Lind"
    )
    said = str(services.sources.ingest_message(UID, message).iri)
    known = {
        "kind": "semantic",
        "title": "Nora Lind loves hiking",
        "confidence": 0.9,
        "claims": [{"subject": "Nora Lind", "predicate": "schema:description", "value": "hiking"}],
        "entities": [{"name": "Nora Lind", "types": ["schema:Person"]}],
        "evidence": [{"source": said, "quote": "I love hiking"}],
    }
    [person] = services.gate.draft(UID, [known]).items
    assert person.outcome.value == "active", person.reasons
    return said, known
