"""What a draft tells again, when its claims cannot say: episodes and claimless drafts.

The pre-pass (:mod:`kgmem.memory.prepass`) finds a restatement by its claims. Two cases need
more than claims: an episode restating facts is the same event only at the same time, and a
procedure or an event with no claims is the same memory when it is of the same kind (and
time) and quotes the same spans. A claimless note of another kind is left alone: the vault
drafts a changed line as written after its claim was found known, quoting the span that
claim's memory just took as evidence, and that line must wait for the person, not fold.
"""

from __future__ import annotations

from datetime import datetime

from rdflib import Literal, URIRef

from kgmem.memory.model import DraftMemory, MemoryKind, MemoryStatus
from kgmem.memory.records import EvidenceRecord, read_memory
from kgmem.store import TripleStore
from kgmem.vocab import KGM

__all__ = ["occurred", "told_again"]

_EPISODIC = MemoryKind.EPISODIC.iri
_TOLD = frozenset({MemoryKind.PROCEDURAL, MemoryKind.EPISODIC})


def occurred(store: TripleStore, kg: URIRef, memory: URIRef) -> datetime | None:
    """When the episode ``memory`` happened (None: it is no episode)."""
    if not any(True for _ in store.quads(kg, memory, KGM.kind, _EPISODIC)):
        return None
    for quad in store.quads(kg, memory, KGM.occurredAt):
        value = quad.object.toPython() if isinstance(quad.object, Literal) else None
        if isinstance(value, datetime):
            return value
    return None


def told_again(
    store: TripleStore, kg: URIRef, draft: DraftMemory, evidence: list[EvidenceRecord]
) -> URIRef | None:
    """The active memory in ``kg`` a claimless procedure or episode tells again: of the same
    kind (and time), quoting every span the draft quotes. Without it, a model drafting a
    procedure again (each consolidation pass, a host re-sending a session) made a copy."""
    spans = {(e.source, e.span) for e in evidence}
    if draft.kind not in _TOLD or not spans or any(span is None for _, span in spans):
        return None
    candidates: set[URIRef] = set()
    for source in {source for source, _ in spans}:
        for cite in store.quads(kg, predicate=KGM.source, obj=source):
            for use in store.quads(kg, predicate=KGM.evidence, obj=cite.subject):
                if isinstance(use.subject, URIRef):
                    candidates.add(use.subject)
    for memory in sorted(candidates):
        old = read_memory(store, memory, [kg])
        if (
            old is not None
            and old.kind is draft.kind
            and old.status is MemoryStatus.ACTIVE
            and old.occurred_at == draft.occurred_at
            and spans <= {(e.source, e.span) for e in old.evidence}
        ):
            return memory
    return None
