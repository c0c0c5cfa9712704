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


def test_a_chat_turn_with_a_secret_queues_neither_it_nor_a_digest_of_it(
    memory: Memory, home: Path
) -> None:
    import hashlib

    from recallmem.server.app import create_app
    from recallmem.server.chat_schemas import history_message_id as message_id
    from recallmem.testing import FakeChatModel
    from serverkit import ADA, client_for, token_settings

    said = "remember my email password is hunter2"
    client = client_for(create_app(memory, token_settings(), model=FakeChatModel(
        responses=["I won't store passwords."])), ADA)  # fmt: skip
    response = client.post("/v1/chat/stream", json={"message": said, "thread_id": "t"})
    assert response.status_code == 200, response.text
    (pending,) = memory.queue.pending(user_id="ada")
    assert pending.messages[0].content == "remember my email password is [REDACTED]"
    assert pending.messages[0].id == message_id("t", 0, "user", pending.messages[0].content)
    raw_digest = hashlib.sha256(f"t\0{0}\0user\0{said}".encode()).hexdigest()[:24]
    memory.close()
    for path in (p for p in home.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert b"hunter2" not in data and raw_digest.encode() not in data, path
