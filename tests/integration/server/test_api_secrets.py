"""The API goes through the library's secret detector: a client error, nothing stored."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from recallmem.memory import Memory

KEY = "AKIAIOSFODNN7EXAMPLE"


def test_a_secret_is_refused_with_a_client_error_and_never_stored(
    ada: TestClient, memory: Memory, home: Path
) -> None:
    refused = ada.post(
        "/v1/users/me/facts", json={"content": f"{KEY} is my key", "category": "knowledge"}
    )
    assert refused.status_code == 400, refused.text
    assert "cloud access key" in refused.text and KEY not in refused.text
    stored = ada.post("/v1/users/me/facts", json={"content": "Uses AWS", "category": "context"})
    assert stored.status_code == 201, stored.text
    patched = ada.patch(
        f"/v1/users/me/facts/{stored.json()['id']}", json={"content": f"AWS key {KEY}"}
    )
    assert patched.status_code == 400, patched.text
    assert [f.content for f in memory.list(user_id="ada")] == ["Uses AWS"]
    memory.close()
    files = [p for p in home.rglob("*") if p.is_file()]
    assert files and not any(KEY.encode() in p.read_bytes() for p in files)
