"""The kgmem exception tree.

Every error kgmem raises on purpose is a ``KgmemError``; each builds its message from typed
fields, so callers can react to the fields and people can read the message::

    KgmemError
    ├── ConfigError
    │   ├── ConfigFileError          (path, reason)        unreadable or malformed kgmem.toml
    │   ├── UnknownSetting           (name, origin)        a key no setting declares
    │   └── InvalidSetting           (name, value, reason, origin)
    ├── StoreError
    │   ├── StoreLocked              (path)                another process holds the store
    │   ├── StoreCorrupt             (path, reason)        the store directory cannot be read
    │   ├── StoreClosed              ()                    used after close()
    │   ├── QueryRefused             (reason)              a caller's query is not allowed
    │   ├── ResultLimitExceeded      (limit)               a caller's query returns too much
    │   ├── QueryTimeout             (seconds, waited)     a caller's query runs too long
    │   ├── QueryTooLarge            (megabytes)           a caller's query needs too much memory
    │   └── StoreOperationFailed     (operation, reason)   the backend refused a query or write
    ├── QueryError
    │   ├── QuerySyntaxError         (path, line, column, reason)
    │   ├── UnknownQuery             (name)
    │   ├── QueryKindMismatch        (name, expected, actual)
    │   └── BindingError             (name, variable, reason)
    ├── GraphNameError               (value, reason)       an id or graph IRI outside the scheme
    ├── SourceConflict               (source, reason)      differs from the source stored at its id
    ├── MemoryOperationError
    │   ├── UnknownMemory            (memory, reason)      no such memory or decision here
    │   ├── DecisionConflict         (decision, reason)    a revert the store no longer allows
    │   ├── LifecycleError           (memory, reason)      an action the memory's status forbids
    │   │   └── UndeclaredTerms      (memory, terms)       approval needs vocabulary decided first
    │   ├── DraftInvalid             (item, field, reason) a draft field is malformed
    │   └── BatchSizeError           (size, maximum)       a batch outside 1..maximum drafts
    ├── OntologyError
    │   ├── UnknownTerm              (term, role)          a term no ontology or delta declares
    │   ├── TermCollision            (name, existing)      a delta term duplicating a known term
    │   ├── DeltaCycle               (term, path)          a delta edge closing a subclass cycle
    │   └── DeltaConflict            (term, reason)        an operation the delta cannot take
    ├── ShapeError                   (shape, reason)       a shapes graph the validator refuses
    ├── ShapesFileError              (name, reason)        an admin's shapes file kgmem refuses
    │   ├── UnknownShapes            (name, reason)        no such shapes file of the admin's
    │   └── ProtectedShapes          (name, reason)        a bundled shapes file cannot change
    ├── ModelError
    │   ├── ModelCallError           (stage, reason)       the model could not be reached or failed
    │   └── ModelOutputError         (stage, reason)       the model answered outside its signature
    ├── PipelineError
    │   ├── PassNotFound             (uid, pass_id)        no such consolidation pass for this user
    │   ├── PassNotDue               (pass_id, next_attempt_at) a parked pass resumed before backoff
    │   ├── PassHeld                 (pass_id, owner, presumed_dead_at) a live worker runs the pass
    │   ├── PassLost                 (pass_id)             another worker took the pass over
    │   ├── StageFailed              (stage, reason)       a stage's own, expected failure
    │   └── StageOrderError          (reason)              the runner was given a wrong stage list
    ├── RetrievalError
    │   └── InvalidSearch            (field, value, reason) a search argument outside its domain
    ├── AccessError
    │   ├── Unauthenticated          (reason)              no usable API key came with a request
    │   ├── Forbidden                (reason)              not the caller's to read or do
    │   └── AccountError             (uid, reason)         no such account, or one already there
    ├── ArgumentError                (field, reason)       an API or tool argument out of its domain
    ├── ResourceError                (path, reason)        a bundled ontology/shapes file is broken
    └── CatalogueError
        ├── ManifestError            (path, reason)        catalogue.toml is unreadable or invalid
        ├── OntologyFileMissing      (path, reason)        a file is in neither mirror nor url
        ├── ChecksumMismatch         (path, expected_sha256, actual_sha256, expected_bytes,
        │                             actual_bytes)        the bytes are not the listed ones
        ├── OntologyParseError       (path, reason)        a file is not the RDF it claims to be
        ├── UnknownOntology          (ontology_id)         no such id in the manifest or store
        ├── OntologyIdError          (ontology_id, reason) an id is malformed or already taken
        └── ProtectedOntology        (ontology_id, reason) a bundled ontology cannot be removed

Third-party exceptions are wrapped only inside adapters (``raise ... from exc``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rdflib.term import Node

__all__ = [
    "AccessError",
    "AccountError",
    "ArgumentError",
    "BatchSizeError",
    "BindingError",
    "CatalogueError",
    "ChecksumMismatch",
    "ConfigError",
    "ConfigFileError",
    "DecisionConflict",
    "DeltaConflict",
    "DeltaCycle",
    "DraftInvalid",
    "Forbidden",
    "GraphNameError",
    "InvalidSearch",
    "InvalidSetting",
    "KgmemError",
    "LifecycleError",
    "ManifestError",
    "MemoryOperationError",
    "ModelCallError",
    "ModelError",
    "ModelOutputError",
    "OntologyError",
    "OntologyFileMissing",
    "OntologyIdError",
    "OntologyParseError",
    "PassHeld",
    "PassLost",
    "PassNotDue",
    "PassNotFound",
    "PipelineError",
    "ProtectedOntology",
    "ProtectedShapes",
    "QueryError",
    "QueryKindMismatch",
    "QueryRefused",
    "QuerySyntaxError",
    "QueryTimeout",
    "QueryTooLarge",
    "ResourceError",
    "ResultLimitExceeded",
    "RetrievalError",
    "ShapeError",
    "ShapesFileError",
    "SourceConflict",
    "StageFailed",
    "StageOrderError",
    "StoreClosed",
    "StoreCorrupt",
    "StoreError",
    "StoreLocked",
    "StoreOperationFailed",
    "TermCollision",
    "Unauthenticated",
    "UndeclaredTerms",
    "UnknownMemory",
    "UnknownOntology",
    "UnknownQuery",
    "UnknownSetting",
    "UnknownShapes",
    "UnknownTerm",
]


class KgmemError(Exception):
    """Root of every error kgmem raises on purpose."""


class ConfigError(KgmemError):
    """The settings could not be built."""


class ConfigFileError(ConfigError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"config file {path}: {reason}")


class UnknownSetting(ConfigError):
    def __init__(self, name: str, origin: str) -> None:
        self.name = name
        self.origin = origin
        super().__init__(f"unknown setting {name!r} in {origin}")


class InvalidSetting(ConfigError):
    def __init__(self, name: str, value: object, reason: str, origin: str) -> None:
        self.name = name
        self.value = value
        self.reason = reason
        self.origin = origin
        super().__init__(f"setting {name!r} = {value!r} from {origin}: {reason}")


class StoreError(KgmemError):
    """The triple store could not do what was asked."""


class StoreLocked(StoreError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"store {path} is locked by another process (a running kgmem server?); "
            "stop it or talk to it over HTTP"
        )


class StoreCorrupt(StoreError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"store {path} cannot be opened: {reason}")


class StoreClosed(StoreError):
    def __init__(self) -> None:
        super().__init__("the store is closed")


class QueryRefused(StoreError):
    field = "query"  # always the caller's query text

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"query refused: {reason}")


class ResultLimitExceeded(StoreError):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the result has more than {limit} rows; add LIMIT or narrow the query")


class QueryTimeout(StoreError):
    def __init__(self, seconds: float, waited: bool = False) -> None:
        self.seconds = seconds
        self.waited = waited  # the whole time went waiting for a free query slot
        why = (
            "it waited the whole time for a free query slot (earlier queries still run)"
            if waited
            else "narrow it or add LIMIT"
        )
        super().__init__(f"the query did not finish within {seconds:g} s; {why}")


class QueryTooLarge(StoreError):
    def __init__(self, memory_bytes: int) -> None:
        self.megabytes = memory_bytes // (1024 * 1024)
        super().__init__(
            f"the query was stopped: it needed more than the {self.megabytes} MB of memory one "
            "query may use; narrow it (fewer joined patterns, a LIMIT without ORDER BY)"
        )


class StoreOperationFailed(StoreError):
    def __init__(self, operation: str, reason: str) -> None:
        self.operation = operation
        self.reason = reason
        super().__init__(f"{operation} failed: {reason}")


class QueryError(KgmemError):
    """A named query is missing, malformed or misused."""


class QuerySyntaxError(QueryError):
    def __init__(self, path: str, line: int, column: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(f"{path}:{line}:{column}: {reason}")


class UnknownQuery(QueryError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no query named {name!r} in queries/")


class QueryKindMismatch(QueryError):
    def __init__(self, name: str, expected: str, actual: str) -> None:
        self.name = name
        self.expected = expected
        self.actual = actual
        super().__init__(f"query {name!r} is a {actual}, used as a {expected}")


class BindingError(QueryError):
    def __init__(self, name: str, variable: str, reason: str) -> None:
        self.name = name
        self.variable = variable
        self.reason = reason
        super().__init__(f"query {name!r}, variable ?{variable}: {reason}")


class GraphNameError(KgmemError):
    def __init__(self, value: str, reason: str) -> None:
        self.value = value
        self.reason = reason
        super().__init__(f"{value!r}: {reason}")


class ResourceError(KgmemError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class ShapeError(KgmemError):
    """The shapes are broken or use SHACL the validator does not support (not: data invalid)."""

    def __init__(self, shape: Node, reason: str) -> None:
        self.shape = shape
        self.reason = reason
        super().__init__(f"shape {shape.n3()}: {reason}")


class ShapesFileError(KgmemError):
    """A shapes file an admin uploads that does not parse or compile (nothing is stored)."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason
        super().__init__(f"shapes {name!r}: {reason}")


class UnknownShapes(ShapesFileError):
    """No shapes file of this name among the admin's."""


class ProtectedShapes(ShapesFileError):
    """A shapes file that ships with kgmem: it is reloaded at every start-up."""


class OntologyError(KgmemError):
    """A term or schema-delta operation the ontology layer refuses."""


class UnknownTerm(OntologyError):
    def __init__(self, term: str, role: str) -> None:
        self.term = term
        self.role = role
        super().__init__(f"{role} {term} is not declared by the catalogue or the schema delta")


class TermCollision(OntologyError):
    def __init__(self, name: str, existing: str) -> None:
        self.name = name
        self.existing = existing
        super().__init__(f"{name!r} duplicates the known term {existing}: align or reuse it")


class DeltaCycle(OntologyError):
    def __init__(self, term: str, path: tuple[str, ...]) -> None:
        self.term = term
        self.path = path
        super().__init__(f"{term} would become its own superclass: {' ⊑ '.join(path)}")


class DeltaConflict(OntologyError):
    def __init__(self, term: str, reason: str) -> None:
        self.term = term
        self.reason = reason
        super().__init__(f"{term}: {reason}")


class CatalogueError(KgmemError):
    """The ontology catalogue could not be read, installed or changed."""


class ManifestError(CatalogueError):
    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"catalogue manifest {path}: {reason}")


class OntologyFileMissing(CatalogueError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ontology file {path}: {reason}")


class ChecksumMismatch(CatalogueError):
    def __init__(
        self,
        path: str,
        expected_sha256: str,
        actual_sha256: str,
        expected_bytes: int,
        actual_bytes: int,
    ) -> None:
        self.path = path
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256
        self.expected_bytes = expected_bytes
        self.actual_bytes = actual_bytes
        super().__init__(
            f"ontology file {path}: sha256 {actual_sha256} ({actual_bytes} bytes) does not match "
            f"the manifest's {expected_sha256} ({expected_bytes} bytes); refusing to load it"
        )


class OntologyParseError(CatalogueError):
    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"ontology file {path}: {reason}")


class UnknownOntology(CatalogueError):
    def __init__(self, ontology_id: str) -> None:
        self.ontology_id = ontology_id
        super().__init__(f"no ontology {ontology_id!r} in the catalogue")


class OntologyIdError(CatalogueError):
    def __init__(self, ontology_id: str, reason: str) -> None:
        self.ontology_id = ontology_id
        self.reason = reason
        super().__init__(f"ontology id {ontology_id!r}: {reason}")


class ProtectedOntology(CatalogueError):
    def __init__(self, ontology_id: str, reason: str) -> None:
        self.ontology_id = ontology_id
        self.reason = reason
        super().__init__(f"ontology {ontology_id!r} cannot be changed: {reason}")


class MemoryOperationError(KgmemError):
    """A memory operation kgmem refuses."""


class UnknownMemory(MemoryOperationError):
    def __init__(self, memory: str, reason: str = "no such memory for this user") -> None:
        self.memory = memory
        self.reason = reason
        super().__init__(f"{memory}: {reason}")


class DecisionConflict(MemoryOperationError):
    def __init__(self, decision: str, reason: str) -> None:
        self.decision = decision
        self.reason = reason
        super().__init__(f"cannot revert {decision}: {reason}")


class LifecycleError(MemoryOperationError):
    def __init__(self, memory: str, reason: str) -> None:
        self.memory = memory
        self.reason = reason
        super().__init__(f"{memory}: {reason}")


class UndeclaredTerms(LifecycleError):
    """A pending memory uses terms the user's ontology does not declare, and approving it
    cannot declare them (a class, or a term outside the user's own namespace): they need a
    vocabulary decision first. Nothing was changed."""

    def __init__(self, memory: str, terms: tuple[str, ...]) -> None:
        self.terms = terms
        super().__init__(
            memory,
            "uses terms the user's ontology does not declare and approval cannot declare: "
            + ", ".join(terms)
            + "; decide them in the vocabulary first, or reject the memory",
        )


class SourceConflict(KgmemError):
    """A source sent again under the same identity (chat and turn, task, note revision) but
    different: sources are kept verbatim, so the stored one stands and nothing is written."""

    def __init__(self, source: str, reason: str) -> None:
        self.source = source
        self.reason = reason
        super().__init__(f"source {source} conflicts with the stored one: {reason}")


class DraftInvalid(MemoryOperationError):
    def __init__(self, item: int, field: str, reason: str) -> None:
        self.item = item
        self.field = field
        self.reason = reason
        super().__init__(f"draft {item}, field {field}: {reason}")


class BatchSizeError(MemoryOperationError):
    def __init__(self, size: int, maximum: int) -> None:
        self.size = size
        self.maximum = maximum
        super().__init__(f"a batch holds 1 to {maximum} drafts, got {size}")


class ModelError(KgmemError):
    """A model stage of consolidation could not produce a usable answer."""


class ModelCallError(ModelError):
    """The call itself failed (unreachable, timed out, refused): the stage may be retried."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(f"stage {stage}: the model call failed: {reason}")


class ModelOutputError(ModelError):
    """The model answered, but not in the shape its signature asks for (broken JSON, a wrong
    type, a missing field): nothing of the answer is used."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(f"stage {stage}: malformed model output: {reason}")


class PipelineError(KgmemError):
    """A consolidation pass could not be found, resumed or run as asked."""


class PassNotFound(PipelineError):
    def __init__(self, uid: str, pass_id: str) -> None:
        self.uid = uid
        self.pass_id = pass_id
        super().__init__(f"no consolidation pass {pass_id!r} for user {uid!r}")


class PassNotDue(PipelineError):
    def __init__(self, pass_id: str, next_attempt_at: datetime) -> None:
        self.pass_id = pass_id
        self.next_attempt_at = next_attempt_at
        super().__init__(
            f"pass {pass_id!r} is parked until {next_attempt_at.isoformat()}; resume it then"
        )


class PassHeld(PipelineError):
    """Another worker, alive by its process and heartbeat, runs the pass."""

    def __init__(self, pass_id: str, owner: str, presumed_dead_at: datetime) -> None:
        self.pass_id = pass_id
        self.owner = owner
        self.presumed_dead_at = presumed_dead_at
        super().__init__(
            f"pass {pass_id!r} is running in {owner}; it is taken over if that worker is "
            f"gone, or silent until {presumed_dead_at.isoformat()}"
        )


class PassLost(PipelineError):
    """This worker's claim on the pass was taken over (it was presumed dead): it stops
    without writing."""

    def __init__(self, pass_id: str) -> None:
        self.pass_id = pass_id
        super().__init__(f"pass {pass_id!r} was taken over by another worker; this one stops")


class RetryRefused(PipelineError):
    """An abandoned pass cannot be retried as asked (another pass is under way, or the pass
    named is not abandoned, or was retried already)."""

    def __init__(self, pass_id: str | None, reason: str) -> None:
        self.pass_id = pass_id
        self.reason = reason
        super().__init__(f"cannot retry {pass_id!r}: {reason}" if pass_id else reason)


class JobNotFound(KgmemError):
    def __init__(self, job_id: str) -> None:
        self.job_id = job_id
        super().__init__(f"no job {job_id[:64]!r} (jobs are kept while the server runs)")


class ResetRunning(KgmemError):
    def __init__(self, uid: str, job_id: str) -> None:
        self.uid, self.job_id = uid, job_id
        super().__init__(f"user {uid} is being reset already (job {job_id})")


class StageFailed(PipelineError):
    """Raised by stage code for a failure it understands; the runner parks the pass with it."""

    def __init__(self, stage: str, reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(f"stage {stage}: {reason}")


class StageOrderError(PipelineError):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"consolidation stages: {reason}")


class AccessError(KgmemError):
    """Who may do what: API keys, roles and accounts."""


class Unauthenticated(AccessError):
    """A request without a usable API key (missing, malformed, unknown or revoked). The
    reason never says which of these an existing key id is, beyond "not accepted"."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class Forbidden(AccessError):
    """The caller is known but may not do this: an admin-only action, or a graph (in a
    SPARQL query) that is not the caller's."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class AccountError(AccessError):
    """An account operation the registry cannot take: unknown user, existing user."""

    def __init__(self, uid: str, reason: str) -> None:
        self.uid, self.reason = uid, reason
        super().__init__(f"account {uid}: {reason}")


class ArgumentError(KgmemError):
    """An argument of an API call or agent tool that is missing, of the wrong type, outside
    its domain or unknown; ``field`` names it (``drafts[1].title``), None for the whole."""

    def __init__(self, field: str | None, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}" if field else reason)


class RetrievalError(KgmemError):
    """memory_search or memory_cite refused its input."""


class InvalidSearch(RetrievalError):
    """A search argument outside its domain: an empty or huge query, k out of range, an
    unknown kind or status, a malformed tag, entity or time range."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        shown = repr(value)
        self.field = field
        self.value = value if len(shown) <= 100 else shown[:97] + "..."
        self.reason = reason
        cut = shown[:60] + ("..." if len(shown) > 60 else "")
        super().__init__(f"search {field} {cut}: {reason}")
