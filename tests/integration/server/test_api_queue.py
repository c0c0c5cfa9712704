"""The extraction backlog through the API: pending windows, dead letters, retry, costs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel, HashingEmbeddings
from serverkit import ADA, BOB, JSON, client_for, token_settings

TURN = [
    {"role": "user", "content": "I moved to the product team last week"},
    {"role": "assistant", "content": "Congratulations on the move."},
]


@pytest.fixture
def flaky(tmp_path: Path) -> Iterator[Memory]:
    """A memory whose extraction model fails once, then answers; one attempt per window."""
    model = FakeChatModel(responses=[RuntimeError("provider is down"), '{"facts": []}'])
    config = MemoryConfig(home=tmp_path / "mem", max_attempts=1, debounce_seconds=3600)
    with Memory(config, embeddings=HashingEmbeddings(), model=model) as memory:
        yield memory


def wait_for(condition: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_pending_windows_are_listed_per_user(memory: Memory) -> None:
    client = client_for(create_app(memory, token_settings()), ADA)
    memory.observe(TURN, user_id="ada", thread_id="t-job")
    memory.observe([{"role": "user", "content": "Bob's secret plan"}], user_id="bob", thread_id="b")
    queue = client.get("/v1/users/me/queue").json()
    assert [p["thread_id"] for p in queue["pending"]] == ["t-job"]
    assert [m["content"] for m in queue["pending"][0]["messages"]] == [t["content"] for t in TURN]
    assert queue["dead_letters"] == []
    assert "secret" not in str(queue)


def test_a_dead_letter_is_listed_retried_and_then_extracted(flaky: Memory) -> None:
    app = create_app(flaky, token_settings())
    ada, bob = client_for(app, ADA), client_for(app, BOB)
    flaky.observe(TURN, user_id="ada", thread_id="t-job")
    failed = flaky.flush(timeout=10)
    assert [r.error for r in failed if r.error]
    wait_for(lambda: ada.get("/v1/users/me/queue").json()["dead_letters"])
    letter = ada.get("/v1/users/me/queue").json()["dead_letters"][0]
    assert letter["thread_id"] == "t-job"
    assert "provider is down" in letter["reason"]
    assert [m["content"] for m in letter["messages"]] == [t["content"] for t in TURN]

    refused = bob.post(f"/v1/users/me/queue/dead-letters/{letter['id']}/retry", headers=JSON)
    assert refused.status_code == 404
    assert ada.get("/v1/users/me/queue").json()["dead_letters"] == [letter]

    retried = ada.post(f"/v1/users/me/queue/dead-letters/{letter['id']}/retry", headers=JSON)
    assert retried.status_code == 200
    assert retried.json()["dead_letters"] == []
    flaky.flush(timeout=10)
    wait_for(lambda: not ada.get("/v1/users/me/queue").json()["pending"])

    extractions = ada.get("/v1/users/me/extractions").json()
    done = [e for e in extractions if e["error"] is None]
    assert done and done[0]["thread_id"] == "t-job"
    assert done[0]["input_tokens"] > 0 and done[0]["model_calls"] == 1
    assert bob.get("/v1/users/me/extractions").json() == []
    usage = ada.get("/v1/users/me/metrics").json()["extraction"]
    assert usage["calls"] >= 1 and usage["input_tokens"] >= done[0]["input_tokens"]


def test_an_unknown_dead_letter_is_404(ada: TestClient) -> None:
    response = ada.post("/v1/users/me/queue/dead-letters/424242/retry", headers=JSON)
    assert response.status_code == 404
    assert "GET .../queue" in response.json()["detail"]


def test_a_dead_letter_is_discarded_only_by_its_user(flaky: Memory) -> None:
    app = create_app(flaky, token_settings())
    ada, bob = client_for(app, ADA), client_for(app, BOB)
    flaky.observe(TURN, user_id="ada", thread_id="t-job")
    flaky.flush(timeout=10)
    (letter,) = ada.get("/v1/users/me/queue").json()["dead_letters"]
    assert bob.delete(f"/v1/users/me/queue/dead-letters/{letter['id']}").status_code == 404
    dropped = ada.delete(f"/v1/users/me/queue/dead-letters/{letter['id']}")
    assert dropped.status_code == 200 and dropped.json()["dead_letters"] == []
    assert (
        flaky.queue.dead_letters() == [] and flaky.queue.pending() == []
    )  # gone, not queued again
    assert ada.delete(f"/v1/users/me/queue/dead-letters/{letter['id']}").status_code == 404
