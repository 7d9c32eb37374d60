"""Consolidation: stages, checkpoints, the pass runner and the model programs (DSPy) that propose.

Names whose modules import DSPy (signatures, the strict adapter) load on first use, so
importing this package, like importing kgmem, does not load DSPy.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from kgmem.pipeline.boundary import BoundaryOutcome, StageFailure, stage_boundary
from kgmem.pipeline.checkpoints import Checkpoints
from kgmem.pipeline.claims import Claim, Claims, fence
from kgmem.pipeline.consolidation import (
    Consolidation,
    ConsolidationStatus,
    PassReport,
    default_stages,
)
from kgmem.pipeline.contributions import Contributions
from kgmem.pipeline.heartbeat import Heartbeat
from kgmem.pipeline.liveness import PassCondition, Verdict, judge
from kgmem.pipeline.lm import ModelGroup, ModelSet, ModelSpec
from kgmem.pipeline.periodic import Periodic, PeriodicReport
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.processes import LocalProcesses, Processes, ProcessIdentity
from kgmem.pipeline.proposals import (
    NEW_ENTITY,
    NO_TERM,
    EntityCandidate,
    EntityChoice,
    ExtractedClaim,
    ExtractedEvidence,
    ExtractedProcedure,
    PageFact,
    PageMemory,
    SchemaPatch,
    TermCandidate,
    TermChoice,
    TermDecision,
    UndeclaredTerm,
)
from kgmem.pipeline.records import (
    CheckpointRecord,
    OutboxRecord,
    PassRecord,
    PassRef,
    PassStatus,
    pass_iri,
    stage_iri,
)
from kgmem.pipeline.runner import (
    MAX_RECOVERIES,
    MISSED_HEARTBEATS,
    PassRunner,
    RecoverFn,
    rebuild_from_contributions,
)
from kgmem.pipeline.segment import ExcludedSource, ExclusionReason, RenderedSegment, Segment
from kgmem.pipeline.stages import (
    AnyStage,
    CommitPlan,
    CommitStage,
    ItemKey,
    ItemResult,
    ItemStage,
    PassContext,
    PassState,
    Stage,
    StageName,
)
from kgmem.pipeline.stages.assemble import AssembleStage, delta_patch
from kgmem.pipeline.stages.author import AuthorStage, render_page
from kgmem.pipeline.stages.classify import ClassifyStage
from kgmem.pipeline.stages.commit import PassCommitStage
from kgmem.pipeline.stages.extract import (
    EXTRACT_STAGE,
    DroppedClaim,
    DropReason,
    ExtractedDraft,
    ExtractionResult,
    ExtractStage,
    GroundedDraft,
    extract_claims,
    ground_extraction,
    to_drafts,
)
from kgmem.pipeline.stages.ground import GroundStage
from kgmem.pipeline.stages.reconcile import ReconcileStage
from kgmem.pipeline.stages.resolve import PassResolver, ResolveStage
from kgmem.pipeline.stages.validate import ValidateStage
from kgmem.pipeline.worklist import (
    Dropped,
    EntityBinding,
    PassDraft,
    Undeclared,
    Worklist,
    worklist,
)

if TYPE_CHECKING:
    from kgmem.pipeline.programs import StrictChatAdapter, run_signature
    from kgmem.pipeline.signatures import (
        AssembleTerms,
        AuthorPage,
        ClassifyTerm,
        ExtractClaims,
        ResolveTieBreak,
    )

__all__ = [
    "EXTRACT_STAGE",
    "MAX_RECOVERIES",
    "MISSED_HEARTBEATS",
    "NEW_ENTITY",
    "NO_TERM",
    "AnyStage",
    "AssembleStage",
    "AssembleTerms",
    "AuthorPage",
    "AuthorStage",
    "BoundaryOutcome",
    "CheckpointRecord",
    "Checkpoints",
    "Claim",
    "Claims",
    "ClassifyStage",
    "ClassifyTerm",
    "CommitPlan",
    "CommitStage",
    "Consolidation",
    "ConsolidationStatus",
    "Contributions",
    "DropReason",
    "Dropped",
    "DroppedClaim",
    "EntityBinding",
    "EntityCandidate",
    "EntityChoice",
    "ExcludedSource",
    "ExclusionReason",
    "ExtractClaims",
    "ExtractStage",
    "ExtractedClaim",
    "ExtractedDraft",
    "ExtractedEvidence",
    "ExtractedProcedure",
    "ExtractionResult",
    "GroundStage",
    "GroundedDraft",
    "Heartbeat",
    "ItemKey",
    "ItemResult",
    "ItemStage",
    "LocalProcesses",
    "ModelGroup",
    "ModelSet",
    "ModelSpec",
    "OutboxRecord",
    "PageFact",
    "PageMemory",
    "PassCommitStage",
    "PassCondition",
    "PassContext",
    "PassDraft",
    "PassPorts",
    "PassRecord",
    "PassRef",
    "PassReport",
    "PassResolver",
    "PassRunner",
    "PassState",
    "PassStatus",
    "Periodic",
    "PeriodicReport",
    "ProcessIdentity",
    "Processes",
    "ReconcileStage",
    "RecoverFn",
    "RenderedSegment",
    "ResolveStage",
    "ResolveTieBreak",
    "SchemaPatch",
    "Segment",
    "Stage",
    "StageFailure",
    "StageName",
    "StrictChatAdapter",
    "TermCandidate",
    "TermChoice",
    "TermDecision",
    "Undeclared",
    "UndeclaredTerm",
    "ValidateStage",
    "Verdict",
    "Worklist",
    "default_stages",
    "delta_patch",
    "extract_claims",
    "fence",
    "ground_extraction",
    "judge",
    "pass_iri",
    "rebuild_from_contributions",
    "render_page",
    "run_signature",
    "stage_boundary",
    "stage_iri",
    "to_drafts",
    "worklist",
]

_LAZY = {
    "AssembleTerms": "kgmem.pipeline.signatures",
    "AuthorPage": "kgmem.pipeline.signatures",
    "ClassifyTerm": "kgmem.pipeline.signatures",
    "ExtractClaims": "kgmem.pipeline.signatures",
    "ResolveTieBreak": "kgmem.pipeline.signatures",
    "StrictChatAdapter": "kgmem.pipeline.programs",
    "run_signature": "kgmem.pipeline.programs",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
