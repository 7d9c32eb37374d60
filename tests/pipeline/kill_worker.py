"""A worker process for the kill -9 test: runs a pass, stops at a stage boundary and waits.

    python -m tests.pipeline.kill_worker STORE_DIR HOME_DIR STAGE

Prints ``pass <id>`` once the pass is recorded and ``boundary <stage>`` once that stage's
checkpoint is committed, then blocks on stdin until the test kills it.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path

from kgmem.pipeline import Checkpoints, PassState, StageName
from kgmem.store import OxigraphStore, QueryRegistry
from tests.pipeline.fakes import CONTRIBUTIONS, UID, Rig, settings_for


class PausingCheckpoints(Checkpoints):
    def __init__(self, store: OxigraphStore, queries: QueryRegistry, at: StageName) -> None:
        super().__init__(store, queries)
        self._at = at

    def complete_stage(
        self, uid: str, pass_id: str, stage: StageName, state: PassState, at: datetime
    ) -> None:
        super().complete_stage(uid, pass_id, stage, state, at)
        if stage is self._at:
            print(f"boundary {stage}", flush=True)
            sys.stdin.readline()  # wait here to be killed


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
