"""What the catalogue reports: install outcomes, progress events, and the listing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from kgmem.ontology.records import CatalogueOrigin, InstalledFile

__all__ = [
    "CatalogueInfo",
    "InstallProgress",
    "InstallReport",
    "InstallStatus",
    "OntologyOutcome",
    "ProgressCallback",
    "Tracker",
]


class InstallStatus(StrEnum):
    LOADED = "loaded"
    UNCHANGED = "unchanged"
    BUNDLED = "bundled"  # loaded at start-up, not by install
    KEPT_ADDED = "kept-added"  # an admin-added file holds this id; name it in `only` to replace


@dataclass(frozen=True)
class OntologyOutcome:
    ontology_id: str
    status: InstallStatus
    triples: int
    files: int
    seconds: float = 0.0
    origin: CatalogueOrigin | None = None


@dataclass(frozen=True)
class InstallReport:
    outcomes: tuple[OntologyOutcome, ...]
    seconds: float

    def ids(self, status: InstallStatus) -> tuple[str, ...]:
        return tuple(o.ontology_id for o in self.outcomes if o.status is status)

    @property
    def loaded(self) -> tuple[str, ...]:
        return self.ids(InstallStatus.LOADED)

    @property
    def unchanged(self) -> tuple[str, ...]:
        return self.ids(InstallStatus.UNCHANGED)


@dataclass(frozen=True)
class InstallProgress:
    """One unit of install work finished (a file fetched and verified, an ontology written),
    or an ontology's fetch or load begun (``done`` does not count it yet)."""

    ontology_id: str
    step: str  # finished: "fetch" | "load"; begun: "fetching" | "loading"
    item: str
    done: int
    total: int


ProgressCallback = Callable[[InstallProgress], None]


@dataclass(frozen=True)
class CatalogueInfo:
    ontology_id: str
    title: str
    release: str
    origin: CatalogueOrigin
    triples: int
    classes: int
    properties: int
    files: tuple[InstalledFile, ...]


class Tracker:
    """Counts finished units of work and tells the caller's progress callback."""

    def __init__(self, callback: ProgressCallback | None, total: int) -> None:
        self._callback = callback
        self._total = total
        self._done = 0

    def __call__(self, ontology_id: str, step: str, item: str) -> None:
        self._done += 1
        if self._callback is not None:
            self._callback(InstallProgress(ontology_id, step, item, self._done, self._total))

    def begin(self, ontology_id: str, step: str) -> None:
        """The work on ``ontology_id`` begins (``"fetching"``, ``"loading"``): a display
        names what is under way, not only what last finished."""
        if self._callback is not None:
            self._callback(InstallProgress(ontology_id, step, "", self._done, self._total))
