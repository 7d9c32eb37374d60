"""What the consolidation stages are built with: the services of the write path they reuse
(one mechanism, two entry points) and the models. Stages take these in their constructor;
the store, clock and settings reach them per run through :class:`~kgmem.pipeline.PassContext`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgmem.memory.gate import WriteGate
from kgmem.memory.sources import SourceStore
from kgmem.ontology import OntologyService, ValidationService
from kgmem.pipeline.lm import ModelSet

__all__ = ["PassPorts"]


@dataclass(frozen=True)
class PassPorts:
    ontology: OntologyService
    validation: ValidationService
    sources: SourceStore
    gate: WriteGate
    models: ModelSet = field(default_factory=ModelSet)
