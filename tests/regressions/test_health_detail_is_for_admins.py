"""Regression: an unauthenticated ``GET /health?detail=1`` listed every user's graph names
and triple counts. Liveness stays open; the detail takes an admin's key."""

from __future__ import annotations

from starlette.testclient import TestClient

from kgmem.config import Settings


def test_health_detail_needs_an_admin_key(client: TestClient, settings: Settings) -> None:
    alice = client.app.state.accounts.add("alice").token  # type: ignore[attr-defined]
    admin = (settings.home / "api-key").read_text().strip()
    assert client.get("/health").status_code == 200
    for spelling in ("1", "true", "0", ""):
        anonymous = client.get("/health", params={"detail": spelling})
        assert anonymous.status_code == 401, spelling
        assert "urn:kgmem:" not in anonymous.text
        user = client.get(
            "/health", params={"detail": spelling}, headers={"Authorization": f"Bearer {alice}"}
        )
        assert user.status_code == 403 and "urn:kgmem:" not in user.text
    detail = client.get(
        "/health", params={"detail": "1"}, headers={"Authorization": f"Bearer {admin}"}
    )
    assert detail.status_code == 200 and "urn:kgmem:accounts" in detail.json()["store"]["graphs"]
