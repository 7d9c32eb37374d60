"""A worker process for the kill -9 test: runs a pass, stops at a stage boundary and waits.

    python -m tests.pipeline.kill_worker STORE_DIR HOME_DIR STAGE

Prints ``pass <id>`` once the pass is recorded and ``boundary <stage>`` once that stage's
checkpoint is committed, then blocks on stdin until the test kills it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kgmem.pipeline import StageName
from kgmem.store import OxigraphStore, QueryRegistry
from tests.pipeline.fakes import CONTRIBUTIONS, UID, Rig, settings_for
from tests.pipeline.faults import PausingCheckpoints


def main(store_dir: str, home: str, stage: str) -> None:
    store = OxigraphStore(Path(store_dir))
    queries = QueryRegistry.load()
    checkpoints = PausingCheckpoints(store, queries, StageName(stage))
    rig = Rig(store, queries, settings_for(Path(home)), checkpoints=checkpoints)
    runner = rig.runner()
    pass_id = runner.start(UID, CONTRIBUTIONS)
    print(f"pass {pass_id}", flush=True)
    runner.run(UID, pass_id)
    print("finished", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
