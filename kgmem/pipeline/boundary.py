"""The error boundary around stage code (after dagster's ``user_code_error_boundary``).

Any ``Exception`` a stage raises becomes a :class:`StageFailure` naming the stage; the
boundary hands it to ``on_failure`` (which parks the pass) and swallows it, so one bad stage
never takes the worker down. ``BaseException``s that are not ``Exception``s (a
``KeyboardInterrupt``, ``SystemExit``, a cancelled worker) pass through untouched: the pass
stays as its last commit left it and is resumed from there. So does
:class:`~kgmem.errors.PassLost`: the pass is another worker's now, and not this one's to park.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kgmem.errors import PassLost
from kgmem.pipeline.stages import StageName

__all__ = ["BoundaryOutcome", "StageFailure", "stage_boundary"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StageFailure:
    stage: StageName
    error_type: str
    message: str

    def describe(self) -> str:
        """``"ground: ValueError: no such source"``, as recorded in ``kgm:error``."""
        return f"{self.stage.value}: {self.error_type}: {self.message}"


@dataclass
class BoundaryOutcome:
    """Filled in by the boundary when the stage failed."""

    failure: StageFailure | None = None


@contextmanager
def stage_boundary(
    stage: StageName, on_failure: Callable[[StageFailure], None]
) -> Iterator[BoundaryOutcome]:
    """Run the ``with`` body as ``stage``'s code; record and swallow any failure."""
    outcome = BoundaryOutcome()
    try:
        yield outcome
    except PassLost:
        raise
    except Exception as exc:
        failure = StageFailure(stage, type(exc).__name__, str(exc) or repr(exc))
        # the stage, the model and the reason; the traceback only for a debug log
        _log.warning("consolidation stage failed: %s", failure.describe())
        _log.debug("the failure of stage %s", stage.value, exc_info=exc)
        outcome.failure = failure
        on_failure(failure)
