"""A corrupt extraction queue does not stop the memory: facts work, the fault is named."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from recallmem import Memory, MemoryConfig
from recallmem.errors import QueueUnavailableError
from recallmem.server.app import create_app
from recallmem.testing import HashingEmbeddings


@pytest.fixture
def corrupt_home(home: Path) -> Path:
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
        memory.observe([{"role": "user", "content": "I moved to Lyon"}], user_id="ada",
                       thread_id="t1")  # fmt: skip
    queue = home / "queue.sqlite3"
    queue.write_bytes(b"this is not a database " * 400)
    return home


def test_memory_opens_and_recalls_with_a_corrupt_queue(corrupt_home: Path) -> None:
    memory = Memory(MemoryConfig(home=corrupt_home), embeddings=HashingEmbeddings())
    assert [f.content for f in memory.list(user_id="ada")] == ["Writes TypeScript"]
    assert memory.recall("TypeScript", user_id="ada")[0].fact.content == "Writes TypeScript"
    with pytest.raises(QueueUnavailableError, match=r"queue\.sqlite3 cannot be used.*move that"):
        memory.observe([{"role": "user", "content": "hi"}], user_id="ada", thread_id="t2")
    with pytest.raises(QueueUnavailableError, match="recall and listing still work"):
        memory.queue.pending()
    memory.close()


def test_health_reports_the_queue_fault(corrupt_home: Path) -> None:
    memory = Memory(MemoryConfig(home=corrupt_home), embeddings=HashingEmbeddings())
    health = TestClient(create_app(memory), base_url="http://localhost").get("/v1/health")
    assert health.status_code == 200
    body = health.json()
    assert body["status"] == "degraded"
    assert len(body["problems"]) == 1 and "move that file aside" in body["problems"][0]
    memory.close()


def test_moving_the_file_aside_brings_a_new_queue(corrupt_home: Path) -> None:
    (corrupt_home / "queue.sqlite3").rename(corrupt_home / "queue.sqlite3.corrupt")
    with Memory(MemoryConfig(home=corrupt_home), embeddings=HashingEmbeddings()) as memory:
        observed = memory.observe([{"role": "user", "content": "I moved to Berlin"}], user_id="ada",
                                  thread_id="t2")  # fmt: skip
        assert observed.queued == 1


def test_health_is_503_when_the_store_cannot_be_read(home: Path) -> None:
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    client = TestClient(create_app(memory), base_url="http://localhost")
    assert client.get("/v1/health").json()["status"] == "ok"
    memory.repository.store.close()  # the Chroma client is gone: nothing can be read any more
    health = client.get("/v1/health")
    assert health.status_code == 503, health.text
    assert health.headers["content-type"].startswith("application/problem+json")
    assert "could not" in health.json()["detail"]
