"""A running pass's heartbeat: a background thread that tells the store its owner lives.

Each beat records the time (from the injected clock) and pushes back the moment the pass is
presumed dead; it stops when the run ends, or at the first beat that finds the claim taken
over. A store error skips one beat: the next one may land, and if none does the pass is
taken over when the last one ages out (the run's own writes are fenced, so it then stops).
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from types import TracebackType

from kgmem.clock import Clock
from kgmem.errors import KgmemError
from kgmem.pipeline.claims import Claim, Claims

__all__ = ["Heartbeat"]

_log = logging.getLogger(__name__)


class Heartbeat:
    """``with Heartbeat(...):`` beats for ``claim`` every ``every`` while the body runs."""

    def __init__(
        self, claims: Claims, claim: Claim, clock: Clock, every: timedelta, alive_for: timedelta
    ) -> None:
        self._claims, self._claim, self._clock = claims, claim, clock
        self._every, self._alive_for = every.total_seconds(), alive_for
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"kgmem-heartbeat-{claim.pass_id[:8]}", daemon=True
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                if not self._claims.beat(self._claim, self._clock.now(), self._alive_for):
                    return  # taken over: the run finds out at its next write
            except KgmemError:
                _log.warning("heartbeat of pass %s failed", self._claim.pass_id, exc_info=True)
