"""A small world for memory tests: a real store, the bundled ontology, sources and a gate."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rdflib import URIRef

from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.memory.gate import WriteGate
from kgmem.memory.lifecycle import Lifecycle
from kgmem.memory.records import read_memory
from kgmem.memory.source_inputs import MessageIn
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
from kgmem.store import OxigraphStore, QueryRegistry, UserGraphs
from kgmem.vocab import SDO

REPO = Path(__file__).resolve().parents[2]
ALICE = UserGraphs("alice")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class World:
    def __init__(self, store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> None:
        ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
        self.store, self.clock = store, FixedClock(NOW)
        self.sources = SourceStore(store, queries, self.clock)
        ontology = OntologyService(store, queries)
        # a single-valued relation of alice's own, so a new employer contradicts the old one
        ontology.apply_delta(
            "alice",
            DeltaPatch(
                (
                    DeclareProperty(
                        "currentJobAt",
                        "current job at",
                        SDO.Person,
                        SDO.Organization,
                        functional=True,
                    ),
                ),
                Provenance("user:alice", NOW),
            ),
        )
        validation = ValidationService(store, queries, ontology)
        self.lifecycle = Lifecycle(store, queries, self.clock, validation, ontology=ontology)
        self.gate = WriteGate(
            store,
            queries,
            settings,
            self.clock,
            self.sources,
            ontology,
            ValidationService(store, queries, ontology),
        )
        self.turn = 0

    def say(self, role: str, text: str, chat: str = "c1", **extra: Any) -> str:
        msg = MessageIn(chat=chat, turn=self.turn, role=role, text=text, **extra)
        self.turn += 1
        return str(self.sources.ingest_message("alice", msg).iri)

    def draft(self, *drafts: dict[str, Any], **kw: Any) -> list[Any]:
        return list(self.gate.draft("alice", list(drafts), account_name="Alice", **kw).items)

    def memory(self, iri: URIRef) -> Any:
        return read_memory(self.store, iri, [ALICE.kg, ALICE.quarantine])

    def memory_count(self) -> int:
        """Quads outside the ops graph: what a refusal (recorded only in ops) leaves alone."""
        return self.store.count() - self.store.count(ALICE.ops)


EMPLOYER = delta_term("alice", "currentJobAt")


def works_at(
    source: str,
    company: str = "Acme",
    quote: str | None = None,
    predicate: str = "schema:worksFor",
    **extra: Any,
) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": f"Alice works at {company}",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": predicate, "object": company}],
        "entities": [{"name": company, "types": ["schema:Organization"]}],
        "evidence": [{"source": source, "quote": quote or f"I work at {company}"}],
        **extra,
    }


def claim_draft(
    source: str,
    quote: str,
    subject: str,
    predicate: str,
    *,
    types: dict[str, str],
    **target: str,
) -> dict[str, Any]:
    """A one-claim semantic draft, ``subject predicate`` ``object=`` or ``value=``, citing
    ``quote`` of ``source``; ``types``: each named entity's class."""
    said = target.get("object") or target.get("value")
    return {
        "kind": "semantic",
        "title": f"{subject} {predicate} {said}",
        "confidence": 0.9,
        "claims": [{"subject": subject, "predicate": predicate, **target}],
        "entities": [{"name": name, "types": [t]} for name, t in types.items()],
        "evidence": [{"source": source, "quote": quote}],
    }
