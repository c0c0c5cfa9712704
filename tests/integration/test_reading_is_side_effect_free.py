"""Opening a store and reading from it calls no model, embeds nothing and starts no thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings
from recallmem.config import MemoryConfig
from recallmem.errors import EmbeddingMismatchError
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings


class CountingEmbeddings(Embeddings):
    """An embedder that, like most LangChain ones, does not declare its dimension."""

    def __init__(self, size: int = 64) -> None:
        self._inner = HashingEmbeddings(dimension=size)
        self.model_name = "counting"
        self.calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self._inner.embed_query(text)


def _conversation() -> list[dict[str, str]]:
    return [
        {"role": "user", "content": "I write TypeScript at work every day"},
        {"role": "assistant", "content": "Noted."},
    ]


def test_reopening_with_queued_windows_and_listing_has_no_side_effects(home: Path) -> None:
    config = MemoryConfig(home=home)
    with Memory(config, embeddings=CountingEmbeddings()) as first:  # no model: stays queued
        first.remember("Prefers reports in Chinese", user_id="ada", category="preference")
        first.observe(_conversation(), user_id="ada", thread_id="t1")
    embeddings, model = CountingEmbeddings(), FakeChatModel(responses=[])
    before = set(threading.enumerate())
    memory = Memory(config, embeddings=embeddings, model=model)
    try:
        listed = memory.list(user_id="ada")
        pending = memory.queue.pending(user_id="ada")
        letters = memory.queue.dead_letters(user_id="ada")
        started = set(threading.enumerate()) - before
        assert [f.content for f in listed] == ["Prefers reports in Chinese"]
        assert [len(p.messages) for p in pending] == [1] and letters == []
        assert started == set(), f"threads started by reading: {started}"
        assert embeddings.calls == 0 and model.calls == 0
    finally:
        memory.close(timeout=0)


def test_background_work_starts_only_when_asked(home: Path) -> None:
    config = MemoryConfig(home=home, debounce_seconds=0)
    with Memory(config, embeddings=HashingEmbeddings()) as first:
        first.observe(_conversation(), user_id="ada", thread_id="t1")
    model = FakeChatModel(responses=['{"facts": []}'])
    memory = Memory(config, embeddings=HashingEmbeddings(), model=model)
    try:
        assert memory.queue.pending(user_id="ada") and model.calls == 0
        memory.start_background()
        memory.flush(timeout=30)  # waits for the worker's window, if it took one
        assert memory.queue.pending(user_id="ada") == [] and model.calls == 1
    finally:
        memory.close()


def test_an_undeclared_dimension_is_learnt_from_the_first_write_then_checked(
    home: Path,
) -> None:
    config = MemoryConfig(home=home)
    with Memory(config, embeddings=CountingEmbeddings(64)) as memory:
        assert memory.recall("anything", user_id="ada") == []  # empty store: nothing to check
        memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    with Memory(config, embeddings=CountingEmbeddings(64)) as again:
        assert [h.fact.content for h in again.recall("TypeScript", user_id="ada")] == [
            "Writes TypeScript"
        ]
    with Memory(config, embeddings=CountingEmbeddings(32)) as wrong:  # same name, other size
        with pytest.raises(EmbeddingMismatchError, match="32"):
            wrong.recall("TypeScript", user_id="ada")
        with pytest.raises(EmbeddingMismatchError):
            wrong.remember("Uses Vue", user_id="ada", category="knowledge")


def _accessed_at_in_chroma(config: MemoryConfig, fact_id: str) -> object:
    import chromadb
    from recallmem.store.chroma.client import chroma_settings
    from recallmem.store.chroma.layout import user_collection

    client = chromadb.PersistentClient(path=str(config.chroma_path), settings=chroma_settings())
    got = client.get_collection(user_collection(config.collection, "ada")).get(ids=[fact_id])
    return got["metadatas"][0].get("accessed_at")


def test_recall_writes_nothing_until_the_users_next_write_or_close(home: Path) -> None:
    config = MemoryConfig(home=home)
    memory = Memory(config, embeddings=HashingEmbeddings())
    fact = memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    before = _accessed_at_in_chroma(config, fact.id)
    assert memory.recall("TypeScript", user_id="ada")[0].fact.last_accessed_at is not None
    assert _accessed_at_in_chroma(config, fact.id) == before  # recall stayed a read
    memory.remember("Uses Vue", user_id="ada", category="knowledge")  # the next write...
    written = _accessed_at_in_chroma(config, fact.id)
    assert written is not None and written != before  # ...carries the access time
    memory.recall("TypeScript", user_id="ada")
    memory.close()  # and close writes what is left
    assert _accessed_at_in_chroma(config, fact.id) not in (None, written)
