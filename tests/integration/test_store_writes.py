"""How facts reach Chroma: the collection's vector index settings, and stores made before."""

from __future__ import annotations

from pathlib import Path

import chromadb
from chromadb.config import Settings
from recallmem import Memory, MemoryConfig
from recallmem.store.chroma import FACTS_HNSW
from recallmem.testing import HashingEmbeddings


def test_a_new_store_builds_chromas_vector_index_cheaply(memory: Memory) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    hnsw = memory.store._facts.configuration_json["hnsw"]
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
        assert memory.store._facts.configuration_json["hnsw"]["ef_construction"] == 100
    with Memory(config, embeddings=HashingEmbeddings()) as reopened:
        assert [h.fact.id for h in reopened.recall("tea", user_id="ada")] == [fact.id]
