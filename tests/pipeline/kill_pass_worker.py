"""A worker process for the real-pipeline kill -9 test: consolidates session 1, stops once a
stage's checkpoint is committed, and waits to be killed.

    python -m tests.pipeline.kill_pass_worker HOME_DIR STAGE

Prints ``pass <id>`` once the pass is recorded and ``boundary <stage>`` at the boundary.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.pipeline import ExtractClaims, StageName
from tests.pipeline.faults import PausingCheckpoints
from tests.pipeline.passes import (
    SESSION_1,
    T1,
    UID,
    consolidation,
    open_services,
    say,
    session_one_reply,
)
from tests.pipeline.scripted import ScriptedEngine


def main(home: str, stage: str) -> None:
    clock = FixedClock(T1)
    services = open_services(load_settings(env={"KGMEM_HOME": home}), clock)
    say(services, "c1", SESSION_1)
    clock.advance(timedelta(minutes=10))
    engine = ScriptedEngine({ExtractClaims: [session_one_reply()]})
    pausing = PausingCheckpoints(services.store, services.queries, StageName(stage))
    pipeline = consolidation(services, engine, pausing)
    pass_id = pipeline.start(UID)
    print(f"pass {pass_id}", flush=True)
    assert pass_id is not None
    pipeline.run(UID, pass_id)
    print("finished", flush=True)


if __name__ == "__main__":
    Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)
    main(sys.argv[1], sys.argv[2])
