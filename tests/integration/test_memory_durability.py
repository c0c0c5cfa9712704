"""Persistence, embedder identity, concurrency, and several processes on one store."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from recallmem import Memory, MemoryConfig
from recallmem.errors import EmbeddingMismatchError
from recallmem.testing import HashingEmbeddings


def _run(code: str, home: Path) -> str:
    script = textwrap.dedent(code)
    done = subprocess.run(
        [sys.executable, "-c", script, str(home)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_facts_survive_a_process_restart(home: Path) -> None:
    _run(
        """
        import sys
        from recallmem import Memory, MemoryConfig
        m = Memory(MemoryConfig(home=sys.argv[1]))
        m.remember("报告请用中文写", user_id="ada", category="preference")
        m.remember("Works on the front-end team", user_id="ada", category="identity")
        """,
        home,
    )
    out = _run(
        """
        import sys
        from recallmem import Memory, MemoryConfig
        m = Memory(MemoryConfig(home=sys.argv[1]))
        print(m.recall("which language for reports?", user_id="ada", k=1)[0].fact.content)
        """,
        home,
    )
    assert out.strip() == "报告请用中文写"


def test_opening_with_another_embedder_is_a_clear_error(home: Path) -> None:
    Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()).remember(
        "Likes tea", user_id="ada", category="preference"
    )
    with pytest.raises(EmbeddingMismatchError, match=r"hashing-v1.*256"):
        Memory(
            MemoryConfig(home=home), embeddings=HashingEmbeddings(dimension=128, model_name="other")
        )
    with pytest.raises(EmbeddingMismatchError, match="UniversalSentenceEncoder"):
        Memory(MemoryConfig(home=home))
    # The data is untouched and readable with the right embedder.
    again = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    assert [f.content for f in again.list(user_id="ada")] == ["Likes tea"]


def test_concurrent_remember_from_threads_loses_nothing(memory: Memory) -> None:
    errors: list[BaseException] = []

    def writer(worker: int) -> None:
        try:
            for n in range(25):
                memory.remember(f"Worker {worker} fact {n} zebra{worker}x{n}", user_id="ada",
                                category="context")  # fmt: skip
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(memory.list(user_id="ada", limit=1000)) == 150
    assert memory.count() == 150
    reopened = Memory(memory.config, embeddings=HashingEmbeddings())
    assert len(reopened.list(user_id="ada", limit=1000)) == 150


def test_a_second_instance_sees_writes_of_the_first(home: Path) -> None:
    first = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    second = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    assert second.recall("tea", user_id="ada") == []  # loads ada's (empty) index
    fact = first.remember("Likes green tea", user_id="ada", category="preference")
    assert [h.fact.id for h in second.recall("tea", user_id="ada")] == [fact.id]
    first.forget(fact.id)
    assert second.recall("tea", user_id="ada") == []


def test_access_times_reach_the_store_on_close(home: Path) -> None:
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as mem:
        fact = mem.remember("Likes green tea", user_id="ada", category="preference")
        assert mem.get(fact.id).last_accessed_at is None
        mem.recall("tea", user_id="ada")
    reopened = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    assert reopened.get(fact.id).last_accessed_at is not None
