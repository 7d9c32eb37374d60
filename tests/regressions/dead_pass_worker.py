"""A worker process for the dead-pass regression: queues three drafts of alice's, runs a pass
over them (no model: drafts need none), and stops in the middle of STAGE, once its first item
is banked, waiting there to be killed.

    python -m tests.regressions.dead_pass_worker HOME_DIR STAGE CLOCK

CLOCK is ``fixed`` (the tests' first session time) or ``system``. Prints ``pass <id>`` once
the pass is recorded and ``item <stage>`` where it stops.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kgmem.api.services import build_services
from kgmem.clock import Clock, FixedClock, SystemClock
from kgmem.config import load_settings
from kgmem.pipeline import StageName
from tests.pipeline.faults import PausingCheckpoints
from tests.pipeline.passes import SESSION_1, T1, UID, consolidation, say


def drafts(source: str) -> list[dict[str, Any]]:
    """What an agent hands the background about session 1: three facts with their quotes."""

    def draft(title: str, claim: dict[str, str], quote: str, **more: Any) -> dict[str, Any]:
        evidence = [{"source": source, "quote": quote}]
        return {"kind": "semantic", "title": title, "claims": [claim], "evidence": evidence, **more}

    return [
        draft(
            "Alice works at Acme",
            {"subject": "I", "predicate": "schema:worksFor", "object": "Acme"},
            "I work at Acme",
            entities=[{"name": "Acme", "types": ["schema:Organization"]}],
        ),
        draft(
            "Alice knows Robert",
            {"subject": "I", "predicate": "foaf:knows", "object": "Robert"},
            "My friend Robert",
        ),
        draft(
            "Robert lives in Paris",
            {"subject": "Robert", "predicate": "schema:homeLocation", "object": "Paris"},
            "Robert lives in Paris",
        ),
    ]


def main(home: str, stage: str, clock_kind: str) -> None:
    clock: Clock = FixedClock(T1) if clock_kind == "fixed" else SystemClock()
    services = build_services(load_settings(env={"KGMEM_HOME": home}), clock=clock)
    source, _ = say(services, "c1", SESSION_1)
    pausing = PausingCheckpoints(services.store, services.queries, StageName(stage), item=True)
    pipeline = consolidation(services, None, pausing)
    pipeline.queue(UID, drafts(source))
    pass_id = pipeline.start(UID)
    print(f"pass {pass_id}", flush=True)
    assert pass_id is not None
    pipeline.run(UID, pass_id)
    print("finished", flush=True)


if __name__ == "__main__":
    Path(sys.argv[1]).mkdir(parents=True, exist_ok=True)
    main(*sys.argv[1:4])
