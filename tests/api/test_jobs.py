"""Scheduled jobs in the server process: registered with the app, and what they do."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient

from kgmem.api import Jobs, Services, build_services, create_app, users_of
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.memory import MemoryKind, MemoryStatus, MessageIn
from kgmem.memory.listing import MemoryList, MemorySummary
from kgmem.pipeline.periodic import PeriodicReport

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_the_app_runs_the_sweep_and_expiry_jobs_and_stops_them(settings: Settings) -> None:
    app = create_app(replace(settings, sweep_interval_seconds=3600))
    jobs: Jobs = app.state.jobs
    with TestClient(app):
        assert jobs.scheduler is not None and jobs.scheduler.running
        found = {job.id: job.trigger.interval for job in jobs.scheduler.get_jobs()}
        hour = timedelta(hours=1)
        assert found == {"expire": hour, "sweep": hour, "periodic": hour}
    assert jobs.scheduler is None  # stopped before the store closed


def test_expiry_job_expires_due_episodes_of_every_user(settings: Settings) -> None:
    clock = FixedClock(NOW)
    services = build_services(settings, clock=clock, in_memory=True)
    try:
        for uid in ("alice", "bob"):
            msg = services.sources.ingest_message(
                uid, MessageIn(chat="c", turn=0, role="user", text="I had lunch with Ann.")
            )
            draft = {
                "kind": "episodic",
                "title": "Lunch with Ann",
                "confidence": 0.9,
                "occurred_at": NOW.isoformat(),
                "ttl": "P1D",
                "evidence": [{"source": str(msg.iri), "quote": "I had lunch with Ann"}],
            }
            [item] = services.gate.draft(uid, [draft]).items
            assert item.memory is not None
        jobs = Jobs(services)
        assert users_of(services) == ["alice", "bob"]
        assert jobs.expire() == {}
        clock.advance(timedelta(days=1))
        expired = jobs.expire()
        assert sorted(expired) == ["alice", "bob"]
        for uid, memories in expired.items():
            assert services.lifecycle.get(uid, memories[0]).status is MemoryStatus.EXPIRED
        assert jobs.expire() == {}  # nothing is expired twice
    finally:
        services.close()


def test_sweep_job_consolidates_queued_drafts_of_every_user(settings: Settings) -> None:
    services = build_services(settings, clock=FixedClock(NOW), in_memory=True)
    try:
        for uid in ("alice", "bob"):
            msg = services.sources.ingest_message(
                uid, MessageIn(chat="c", turn=0, role="user", text="I work at Acme.")
            )
            draft = {
                "kind": "semantic",
                "title": "Works at Acme",
                "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Acme"}],
                "evidence": [{"source": str(msg.iri), "quote": "I work at Acme"}],
            }
            services.consolidation.queue(uid, [draft])
        jobs = Jobs(services)
        assert jobs.sweep() == 2  # one pass per user
        for uid in ("alice", "bob"):
            [memory] = _active(services, uid)
            assert memory.title == "Works at Acme"
        assert jobs.sweep() == 0  # nothing left to take
    finally:
        services.close()


def test_periodic_job_promotes_repeated_episodes_of_every_user(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = build_services(settings, clock=FixedClock(NOW), in_memory=True)
    try:
        for uid in ("alice", "bob"):
            for day in range(3):
                text = f"Day {day}: I ran the backup routine: stop the app, copy the disk, start."
                msg = services.sources.ingest_message(
                    uid, MessageIn(chat=f"c{day}", turn=0, role="user", text=text)
                )
                draft = {
                    "kind": "episodic",
                    "title": "Ran the backup routine",
                    "body": "Backup: stop the app, copy the disk, start the app.",
                    "occurred_at": (NOW - timedelta(days=3 - day)).isoformat(),
                    "entities": [{"name": "backup routine"}],
                    "evidence": [{"source": str(msg.iri), "quote": "I ran the backup routine"}],
                }
                services.gate.draft(uid, [draft])
        jobs = Jobs(services)
        assert jobs.periodic() == 2  # one routine per user
        for uid in ("alice", "bob"):
            [routine] = MemoryList(services.store, services.queries).memories(
                uid, kind=MemoryKind.PROCEDURAL
            )
            assert routine.status is MemoryStatus.ACTIVE
        assert jobs.periodic() == 0  # nothing new: nothing written
        runs = _count_periodic(services, monkeypatch)
        assert jobs.periodic() == 0 and runs == []  # no commit since: no user is read again
        text = "Day 9: I ran the backup routine: stop the app, copy the disk, start."
        msg = services.sources.ingest_message(
            "bob", MessageIn(chat="c9", turn=0, role="user", text=text)
        )
        services.gate.draft(
            "bob",
            [
                {
                    **draft,
                    "evidence": [{"source": str(msg.iri), "quote": "I ran the backup routine"}],
                }
            ],
        )
        assert jobs.periodic() == 1 and runs == ["bob"]  # only bob, whose routine grew
    finally:
        services.close()


def _active(services: Services, uid: str) -> list[MemorySummary]:
    return MemoryList(services.store, services.queries).memories(uid, status=MemoryStatus.ACTIVE)


def _count_periodic(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    runs: list[str] = []
    read = services.consolidation.periodic

    def counted(uid: str) -> PeriodicReport:
        runs.append(uid)
        return read(uid)

    monkeypatch.setattr(services.consolidation, "periodic", counted)
    return runs


def _note(services: Services, uid: str, text: str, turn: int = 0) -> None:
    message = MessageIn(chat="c", turn=turn, role="user", text=text)
    msg = services.sources.ingest_message(uid, message)
    draft = {
        "kind": "semantic",
        "title": text,
        "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Acme"}],
        "evidence": [{"source": str(msg.iri), "quote": text}],
    }
    [item] = services.gate.draft(uid, [draft]).items
    assert item.memory is not None
    while services.feed.waiting():  # the pages it makes are written after it
        services.feed.drain_all()


def test_periodic_consolidation_remembers_across_restarts_whom_it_read(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted server does not read again the users periodic consolidation read before
    and who wrote nothing since (at 1M memories that was minutes of a core at every start);
    a user who wrote meanwhile is read; a damaged or foreign file reads everyone once."""
    services = build_services(settings, clock=FixedClock(NOW))
    try:
        for uid in ("alice", "bob"):
            _note(services, uid, "I work at Acme")
        runs = _count_periodic(services, monkeypatch)
        assert Jobs(services).periodic() == 0 and runs == ["alice", "bob"]
    finally:
        services.close()
    assert settings.periodic_path.is_file()

    services = build_services(settings, clock=FixedClock(NOW))  # a restart
    try:
        runs = _count_periodic(services, monkeypatch)
        assert Jobs(services).periodic() == 0 and runs == []  # nothing changed: no one read
        _note(services, "bob", "I still work at Acme", turn=1)
        jobs = Jobs(services)
        jobs.periodic()
        assert runs == ["bob"]
    finally:
        services.close()

    for damage in (b"{not json", b'{"rules": "other code", "seen": {"alice": 1}}', b"[]"):
        settings.periodic_path.write_bytes(damage)
        services = build_services(settings, clock=FixedClock(NOW))
        try:
            runs = _count_periodic(services, monkeypatch)
            Jobs(services).periodic()
            assert runs == ["alice", "bob"]  # read once, then remembered again
            runs.clear()
            Jobs(services).periodic()
            assert runs == []
        finally:
            services.close()


def test_the_in_memory_store_keeps_no_periodic_stamps(settings: Settings) -> None:
    services = build_services(settings, clock=FixedClock(NOW), in_memory=True)
    try:
        _note(services, "alice", "I work at Acme")
        jobs = Jobs(services)
        jobs.periodic()
        assert jobs.periodic_seen and not settings.periodic_path.exists()
    finally:
        services.close()
