""" "Forget me" through the API while a chat turn is still answering: once the purge
has answered, nothing of the turn comes back (no fact, no queued message, no retrieval
log entry), although its answer still streams to the client."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from forgetting import SAID, USER, WAIT, Gate, Running, extraction, gated, nothing_left
from recallmem import Memory, MemoryConfig
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel, HashingEmbeddings
from serverkit import ADMIN, LiveServer, token_settings


@pytest.fixture
def gate() -> Gate:
    return Gate()


def test_a_chat_stream_in_flight_leaves_nothing_after_the_purge(home: Path, gate: Gate) -> None:
    quick = MemoryConfig(home=home, debounce_seconds=0.0)
    chat = FakeChatModel(responses=[gated(gate, lambda _: "Nice to meet Zorblatt.")])
    extractor = FakeChatModel(responses=[extraction], cycle=True)
    memory = Memory(quick, embeddings=HashingEmbeddings(), model=extractor)
    memory.remember("Has a garden", user_id=USER, category="context")  # recalled, logged
    app = create_app(memory, token_settings(), model=chat)
    auth = {"Authorization": f"Bearer {ADMIN}"}
    with LiveServer(app) as url, httpx.Client(base_url=url, headers=auth, timeout=WAIT) as http:
        body = {"message": SAID, "thread_id": "c1", "user_id": USER}
        running = Running(lambda: http.post("/v1/chat/stream", json=body).text)
        gate.reached()
        purged = http.delete(f"/v1/users/{USER}/memory", params={"purge": "true"})
        assert purged.status_code == 200, purged.text
        gate.opened.set()
        assert "Nice to meet Zorblatt" in running.result()  # the answer still streams
        memory.flush(timeout=WAIT)
        assert http.get(f"/v1/users/{USER}/retrievals").json()["records"] == []
        assert http.get(f"/v1/users/{USER}/extractions").json() == []
        assert http.get(f"/v1/users/{USER}/queue").json() == {"pending": [], "dead_letters": []}
    nothing_left(memory, "Nice to meet", "Has a garden")
    assert extractor.calls == 0
    memory.close()
