"""Checkpoints that die or stop at a stage boundary, for the crash and kill -9 tests."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime

from kgmem.pipeline import (
    Checkpoints,
    CommitPlan,
    ItemKey,
    ItemResult,
    PassState,
    StageName,
)
from kgmem.store import QueryRegistry, TripleStore


class Killed(KeyboardInterrupt):
    """Stands for the process dying: not an Exception, so no stage boundary catches it."""


class KillingCheckpoints(Checkpoints):
    """Dies right after a checkpoint commits: ``at`` is a stage name, ``"item"`` (the first
    banked item of any stage) or ``"item:<stage>"`` (the first of that stage)."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, at: str) -> None:
        super().__init__(store, queries)
        self._at = at

    def complete_stage(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        state: PassState,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        super().complete_stage(uid, pass_id, stage, state, at, token=token)
        if stage.value == self._at:
            raise Killed

    def commit_pass(
        self,
        uid: str,
        pass_id: str,
        build: Callable[[], CommitPlan],
        at: datetime,
        *,
        token: str | None = None,
    ) -> PassState:
        state = super().commit_pass(uid, pass_id, build, at, token=token)
        if self._at == StageName.COMMIT.value:
            raise Killed
        return state

    def bank_item(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        item: ItemKey,
        result: ItemResult,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        super().bank_item(uid, pass_id, stage, item, result, at, token=token)
        if self._at in ("item", f"item:{stage.value}"):
            raise Killed


class PausingCheckpoints(Checkpoints):
    """Prints ``boundary <stage>`` once that stage's checkpoint commits (with ``item``:
    ``item <stage>`` once the stage's first item is banked, in the middle of the stage),
    then blocks on stdin: a worker process waiting there to be killed."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, at: StageName, *, item: bool = False
    ) -> None:
        super().__init__(store, queries)
        self._at, self._item = at, item

    def bank_item(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        item: ItemKey,
        result: ItemResult,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        super().bank_item(uid, pass_id, stage, item, result, at, token=token)
        if self._item and stage is self._at:
            print(f"item {stage}", flush=True)
            sys.stdin.readline()

    def complete_stage(
        self,
        uid: str,
        pass_id: str,
        stage: StageName,
        state: PassState,
        at: datetime,
        *,
        token: str | None = None,
    ) -> None:
        super().complete_stage(uid, pass_id, stage, state, at, token=token)
        if stage is self._at and not self._item:
            print(f"boundary {stage}", flush=True)
            sys.stdin.readline()
