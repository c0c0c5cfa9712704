"""A Memory on the in-memory store: nothing of it outlives close() and nothing lands in
the configured home; its health and queue answer like any other's."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import ValidationError
from recallmem.config import MemoryConfig
from recallmem.errors import StoreError
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings


def test_a_memory_store_leaves_the_home_alone_and_its_scratch_goes_at_close(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    memory = Memory(MemoryConfig(home=home, store="memory"), embeddings=HashingEmbeddings(),
                    model=FakeChatModel(replies=["[]"]))  # fmt: skip
    scratch = memory.config.home
    memory.remember("Keeps bees on the roof", user_id="ada", category="identity")
    memory.observe([("human", "I moved to Hangzhou")], user_id="ada", thread_id="t1")
    assert memory.queue.in_use and [e.thread_id for e in memory.queue.pending()] == ["t1"]
    assert scratch != home and (scratch / "queue.sqlite3").exists()
    memory.close()
    assert not home.exists() and not scratch.exists()


def test_two_memory_stores_share_nothing() -> None:
    config = MemoryConfig(store="memory")
    with (
        Memory(config, embeddings=HashingEmbeddings()) as first,
        Memory(config, embeddings=HashingEmbeddings()) as second,
    ):
        first.remember("Drinks green tea", user_id="ada", category="preference")
        assert second.list(user_id="ada") == [] and second.count() == 0
        assert first.config.home != second.config.home


def test_a_memory_store_with_a_chroma_server_is_refused() -> None:
    with pytest.raises(ValidationError, match="store='chroma'"):
        MemoryConfig(store="memory", chroma_url="http://127.0.0.1:8000")


def test_health_gives_up_on_a_store_that_does_not_answer(memory: Memory) -> None:
    answered = threading.Event()
    memory.repository.store.probe = lambda: answered.wait(5)  # type: ignore[method-assign]
    report = memory.health(timeout=0.2)
    answered.set()
    assert not report.ok and not report.store.reachable
    assert (
        report.store.problem is not None and "did not answer within 0.2 s" in report.store.problem
    )
    assert report.queue_problems == []  # not asked while the store is down


def test_health_reports_a_store_error_and_raises_anything_else(memory: Memory) -> None:
    def refuses() -> None:
        raise StoreError("could not read a fact record in the test store")

    memory.repository.store.probe = refuses  # type: ignore[method-assign]
    report = memory.health()
    assert report.store.problem == "could not read a fact record in the test store"

    def breaks() -> None:
        raise RuntimeError("a bug, not an outage")

    memory.repository.store.probe = breaks  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="a bug"):
        memory.health()


async def test_the_queue_and_health_have_async_twins(memory: Memory) -> None:
    assert await memory.queue.apending() == []
    assert await memory.queue.ausage() == memory.queue.usage()
    assert (await memory.ahealth()).ok and await memory.acount() == 0
