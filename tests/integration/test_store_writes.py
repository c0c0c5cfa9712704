"""How facts reach Chroma: each user's collection and its vector index settings, and the
id directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import pytest
from recallmem import Memory, MemoryConfig
from recallmem.store.client import chroma_settings
from recallmem.store.layout import USER_HNSW, user_collection
from recallmem.testing import HashingEmbeddings


def _client(config: MemoryConfig) -> Any:
    return chromadb.PersistentClient(path=str(config.chroma_path), settings=chroma_settings())


def test_a_users_facts_are_a_collection_of_their_own_with_a_cheap_vector_index(
    memory: Memory,
) -> None:
    ada = memory.remember("Likes green tea", user_id="ada", category="preference")
    bob = memory.remember("Likes coffee", user_id="bob", category="preference")
    client = _client(memory.config)
    prefix = memory.config.collection
    collection = client.get_collection(user_collection(prefix, "ada"))
    assert collection.get(include=[])["ids"] == [ada.id]
    hnsw = collection.configuration_json["hnsw"]
    assert (hnsw["ef_construction"], hnsw["max_neighbors"], hnsw["space"]) == (
        USER_HNSW["ef_construction"], USER_HNSW["max_neighbors"], "cosine"
    )  # fmt: skip
    assert hnsw["sync_threshold"] == USER_HNSW["sync_threshold"]  # no replay at cold open
    directory = client.get_collection(f"{prefix}_ids").get(include=["metadatas"])
    assert dict(zip(directory["ids"], [m["user_id"] for m in directory["metadatas"]],
                    strict=True)) == {ada.id: "ada", bob.id: "bob"}  # fmt: skip
    assert memory.store.count() == 2


def test_a_user_who_never_wrote_gets_no_collection_from_a_read(memory: Memory) -> None:
    assert memory.recall("tea", user_id="carol") == []
    assert memory.list(user_id="carol") == []
    names = {c.name for c in _client(memory.config).list_collections()}
    assert user_collection(memory.config.collection, "carol") not in names


def _counting(monkeypatch: pytest.MonkeyPatch, memory: Memory, method: str) -> list[str]:
    """Record each call of a store method; the real method still runs."""
    calls: list[str] = []
    real = getattr(memory.store, method)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(method)
        return real(*args, **kwargs)

    monkeypatch.setattr(memory.store, method, counted)
    return calls


def test_a_cold_recall_reads_the_revision_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    reopened = Memory(memory.config, embeddings=HashingEmbeddings())
    reads = _counting(monkeypatch, reopened, "revision")
    assert len(reopened.recall("tea", user_id="ada")) == 1  # loads ada
    assert reads == ["revision"]
    reopened.recall("tea", user_id="ada")  # cached: checks the revision again
    assert reads == ["revision", "revision"]


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

    monkeypatch.setattr(chroma, "_READ_PAGE", 10)  # the user's collection read in pages
    writer = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    texts = [f"Fact {n} zebra{n} okapi{n * 7}" for n in range(27)]
    writer.remember_many([{"content": t, "category": "context"} for t in texts], user_id="ada")
    writer.remember("Someone else's fact", user_id="bob", category="context")
    reader = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    nearest = reader.nearest(texts, user_id="ada", k=1)
    assert [row[0].fact.content for row in nearest] == texts
    assert all(row[0].score > 0.999 for row in nearest)


def test_isolation_does_not_rest_on_the_collection_name(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were two users' names ever to hash alike, every read still filters on user_id.
    from recallmem.store import layout

    monkeypatch.setattr(layout, "user_collection", lambda prefix, user_id: f"{prefix}_ushared")
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        ada = memory.remember("Likes green tea", user_id="ada", category="preference")
        memory.remember("Likes green tea a lot", user_id="bob", category="preference")
        assert [f.id for f in memory.list(user_id="ada")] == [ada.id]
        memory.repository._indexes.drop("ada")  # reload ada from Chroma
        assert [h.fact.id for h in memory.recall("green tea", user_id="ada", k=5)] == [ada.id]
        assert [f.id for f in memory.store.get([ada.id], user_id="bob")] == []
        assert ada.id not in memory.store.ids_where("bob", agent_id=None, thread_id=None)
