"""The services one kgmem process builds once and passes down."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from kgmem.clock import Clock, SystemClock
from kgmem.config import Settings
from kgmem.memory import Lifecycle, ShortMemoryPolicy, SourceStore, WriteGate
from kgmem.ontology import (
    LoadReport,
    OntologyService,
    ValidationService,
    bundled_files,
    check_bundled,
    ensure_bundled,
)
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.lm import ModelSet
from kgmem.pipeline.ports import PassPorts
from kgmem.store import OxigraphStore, QueryRegistry, TripleStore

__all__ = ["Services", "build_services"]


@dataclass
class Services:
    settings: Settings
    store: TripleStore
    queries: QueryRegistry
    clock: Clock
    bundled: LoadReport
    ontology: OntologyService
    validation: ValidationService
    sources: SourceStore
    gate: WriteGate
    lifecycle: Lifecycle
    models: ModelSet
    consolidation: Consolidation
    started_at: datetime = field(default_factory=lambda: SystemClock().now())

    def close(self) -> None:
        self.store.close()


def build_services(
    settings: Settings,
    *,
    clock: Clock | None = None,
    in_memory: bool = False,
    store: TripleStore | None = None,
) -> Services:
    """Parse every query and shape file, then open the store: nothing is written to disk
    unless all the inputs are sound.

    ``store``, when given, is an already-open store the caller owns (the CLI opens one with
    :func:`kgmem.cli.common.local_store`); it is not closed if start-up fails.
    """
    queries = QueryRegistry.load()
    files = bundled_files(settings.shapes_dir)
    check_bundled(files)
    owned = store is None
    if store is None:
        store = _open_store(settings, in_memory)
    try:
        report = ensure_bundled(store, queries, files)
    except Exception:
        if owned:
            store.close()
        raise
    clock = clock or SystemClock()
    ontology = OntologyService(store, queries)
    validation = ValidationService(store, queries, ontology)
    sources = SourceStore(store, queries, clock, policy=ShortMemoryPolicy.from_settings(settings))
    gate = WriteGate(store, queries, settings, clock, sources, ontology, validation)
    lifecycle = Lifecycle(store, queries, clock, validation)
    models = ModelSet.from_settings(settings)
    ports = PassPorts(ontology, validation, sources, gate, models)
    consolidation = Consolidation(store, queries, clock, settings, ports)
    return Services(
        settings,
        store,
        queries,
        clock,
        report,
        ontology,
        validation,
        sources,
        gate,
        lifecycle,
        models,
        consolidation,
        clock.now(),
    )


def _open_store(settings: Settings, in_memory: bool) -> TripleStore:
    if in_memory:
        return OxigraphStore()
    settings.store_dir.parent.mkdir(parents=True, exist_ok=True)
    return OxigraphStore(settings.store_dir)
