"""How facts reach Chroma: the collection's vector index settings, and stores made before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import pytest
from chromadb.config import Settings
from recallmem import Memory, MemoryConfig
from recallmem.store.chroma import FACTS_HNSW
from recallmem.testing import HashingEmbeddings


def _hnsw(config: MemoryConfig) -> dict[str, Any]:
    """The facts collection's index settings, as Chroma's own client reports them."""
    client = chromadb.PersistentClient(
        path=str(config.chroma_path), settings=Settings(anonymized_telemetry=False)
    )
    settings: dict[str, Any] = client.get_collection(
        f"{config.collection}_facts"
    ).configuration_json["hnsw"]
    return settings


def test_a_new_store_builds_chromas_vector_index_cheaply(memory: Memory) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    hnsw = _hnsw(memory.config)
    assert hnsw["ef_construction"] == FACTS_HNSW["ef_construction"]
    assert hnsw["max_neighbors"] == FACTS_HNSW["max_neighbors"]
    assert hnsw["space"] == "cosine"


def test_a_store_created_with_chromas_defaults_opens_and_keeps_them(home: Path) -> None:
    # A store written before the index settings changed: Chroma's defaults, the space
    # given as legacy metadata.
    config = MemoryConfig(home=home)
    config.chroma_path.mkdir(parents=True)
    client = chromadb.PersistentClient(
        path=str(config.chroma_path), settings=Settings(anonymized_telemetry=False)
    )
    client.create_collection(
        f"{config.collection}_facts",
        embedding_function=None,
        metadata={
            "embedding_model": "HashingEmbeddings:hashing-v1",
            "embedding_dim": 256,
            "hnsw:space": "cosine",
        },
    )
    del client
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        fact = memory.remember("Likes green tea", user_id="ada", category="preference")
        assert _hnsw(config)["ef_construction"] == 100
    with Memory(config, embeddings=HashingEmbeddings()) as reopened:
        assert [h.fact.id for h in reopened.recall("tea", user_id="ada")] == [fact.id]


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, method: str) -> list[str]:
    """Record each call of a store method; the real method still runs."""
    calls: list[str] = []
    real = getattr(owner, method)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(method)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, method, counted)
    return calls


def test_a_cold_recall_reads_the_revision_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    reopened = Memory(memory.config, embeddings=HashingEmbeddings())
    revisions = reopened.store.revisions  # store/revisions.py
    loads = _counting(monkeypatch, revisions, "latest")
    checks = _counting(monkeypatch, revisions, "is_current")
    assert len(reopened.recall("tea", user_id="ada")) == 1  # loads ada
    assert (loads, checks) == (["latest"], [])
    reopened.recall("tea", user_id="ada")  # cached: checks the revision again
    assert (loads, checks) == (["latest"], ["is_current"])


def test_a_write_that_lands_during_a_load_is_seen_by_the_next_recall(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    reader = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    writer.remember("Likes green tea", user_id="ada", category="preference")
    real_load = reader.store.load_user
    late: list[str] = []

    def load_then_race(user_id: str) -> Any:
        loaded = real_load(user_id)  # the revision was read before, the facts now
        late.append(writer.remember("Drinks tea at noon", user_id="ada", category="preference").id)
        return loaded

    monkeypatch.setattr(reader.store, "load_user", load_then_race)
    assert len(reader.list(user_id="ada")) == 1  # the load missed the racing write
    monkeypatch.setattr(reader.store, "load_user", real_load)
    assert late[0] in {f.id for f in reader.list(user_id="ada")}  # the token moved: reload


def test_a_user_larger_than_a_page_loads_each_fact_with_its_own_vector(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recallmem.store import chroma

    monkeypatch.setattr(chroma, "_READ_PAGE", 10)  # a first page, then pages by id
    writer = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    texts = [f"Fact {n} zebra{n} okapi{n * 7}" for n in range(27)]
    writer.remember_many([{"content": t, "category": "context"} for t in texts], user_id="ada")
    writer.remember("Someone else's fact", user_id="bob", category="context")
    reader = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    nearest = reader.nearest(texts, user_id="ada", k=1)
    assert [row[0].fact.content for row in nearest] == texts
    assert all(row[0].score > 0.999 for row in nearest)
