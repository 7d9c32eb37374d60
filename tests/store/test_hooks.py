"""Commit hooks: extra quads in the same atomic write, and word once the writer is done."""

from __future__ import annotations

import logging
import threading

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import StoreOperationFailed
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM

ALICE = UserGraphs("alice")
M1 = URIRef("urn:x:m1")
LOG = URIRef("urn:x:log")


class Recorder:
    """Writes one ``kgm:changedNode`` quad per committed subject into the ops graph, and
    records each announcement with whether the store's lock was free at the time."""

    def __init__(self, store: OxigraphStore) -> None:
        self.store = store
        self.seen: list[Changeset] = []
        self.lock_free: list[bool] = []

    def before_commit(self, changes: Changeset) -> Changeset:
        subjects = {q.subject for q in changes.add if q.graph == ALICE.kg}
        return Changeset.of(Quad(LOG, KGM.changedNode, s, ALICE.ops) for s in subjects)

    def after_commit(self, changes: Changeset) -> None:
        self.seen.append(changes)
        # another thread can take the write lock only if this one released it
        got: list[bool] = []
        probe = threading.Thread(target=lambda: got.append(self._try_lock()))
        probe.start()
        probe.join()
        self.lock_free.append(got[0])

    def _try_lock(self) -> bool:
        lock = self.store._lock
        taken = lock.acquire(timeout=1)
        if taken:
            lock.release()
        return taken


def test_a_hook_writes_in_the_same_commit_and_hears_of_it_after(store: OxigraphStore) -> None:
    hook = Recorder(store)
    store.add_hook(hook)
    change = Changeset.of([Quad(M1, KGM.title, Literal("t"), ALICE.kg)])
    store.commit(change)
    assert set(store.quads(ALICE.ops)) == {Quad(LOG, KGM.changedNode, M1, ALICE.ops)}
    assert hook.seen == [change] and hook.lock_free == [True]


def test_a_transaction_is_announced_once_the_outermost_writer_ends(
    store: OxigraphStore,
) -> None:
    hook = Recorder(store)
    store.add_hook(hook)
    with store.transaction() as outer:
        outer.add(Quad(M1, KGM.title, Literal("a"), ALICE.kg))
        with store.transaction() as inner:
            inner.add(Quad(M1, KGM.body, Literal("b"), ALICE.kg))
        assert hook.seen == []  # the inner commit is done, but the lock is still held
    assert len(hook.seen) == 2 and hook.lock_free == [True, True]
    assert store.count(ALICE.ops) == 1  # one subject, logged by both commits


def test_a_failing_hook_aborts_the_whole_commit(store: OxigraphStore) -> None:
    class Refuses(Recorder):
        def before_commit(self, changes: Changeset) -> Changeset:
            raise StoreOperationFailed("hook", "refused")

    store.add_hook(Refuses(store))
    with pytest.raises(StoreOperationFailed):
        store.commit(Changeset.of([Quad(M1, KGM.title, Literal("t"), ALICE.kg)]))
    assert store.count() == 0


def test_an_announcement_that_fails_is_logged_and_the_commit_stands(
    store: OxigraphStore, caplog: pytest.LogCaptureFixture
) -> None:
    class Fails(Recorder):
        def after_commit(self, changes: Changeset) -> None:
            raise RuntimeError("listener broke")

    store.add_hook(Fails(store))
    with caplog.at_level(logging.ERROR, logger="kgmem.store"):
        store.commit(Changeset.of([Quad(M1, KGM.title, Literal("t"), ALICE.kg)]))
    assert store.count(ALICE.kg) == 1 and store.count(ALICE.ops) == 1
    assert "listener broke" in caplog.text


def test_removed_hooks_and_named_updates_run_nothing(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    hook = Recorder(store)
    store.add_hook(hook)
    store.remove_hook(hook)
    store.commit(Changeset.of([Quad(M1, KGM.title, Literal("t"), ALICE.kg)]))
    store.add_hook(hook)
    store.update(queries["store/clear_graph"], {"graph": ALICE.kg})
    assert store.count(ALICE.kg) == 0
    assert hook.seen == [] and store.count(ALICE.ops) == 0
