"""Stores of the single-collection layout move to a collection per user: on open (an
embedded store), with ``recallmem migrate`` (a server's), and safely when killed midway."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from recallmem import Memory, MemoryConfig
from recallmem.cli import main
from recallmem.embedders import embedder_name
from recallmem.errors import StoreError
from recallmem.store.chroma.client import chroma_settings, open_client
from recallmem.store.chroma.codec import encode
from recallmem.store.chroma.layout import user_collection
from recallmem.store.chroma.workarounds.bounded_cache import CHROMA_OPEN_INDEXES
from recallmem.testing import HashingEmbeddings
from recallmem.types import Category, Fact

CHROMA_URL = os.environ.get("RECALLMEM_TEST_CHROMA_URL")
EMBEDDINGS = HashingEmbeddings()


def _facts(users: int, per_user: int) -> list[Fact]:
    return [
        Fact(content=f"Fact {n} of user {u}: likes kayak{n} and tea{u}",
             category=Category.CONTEXT, user_id=f"user-{u}")
        for u in range(users) for n in range(per_user)
    ]  # fmt: skip


def write_legacy_store(client: Any, prefix: str, facts: list[Fact]) -> None:
    """A store as recallmem wrote it before: every user's facts in ``<prefix>_facts``."""
    old = client.create_collection(
        f"{prefix}_facts", embedding_function=None,
        metadata={"embedding_model": embedder_name(EMBEDDINGS), "embedding_dim": 256},
        configuration={"hnsw": {"space": "cosine", "ef_construction": 10, "max_neighbors": 4}},
    )  # fmt: skip
    vectors = np.asarray(EMBEDDINGS.embed_documents([f.content for f in facts]), np.float32)
    for start in range(0, len(facts), 2000):
        batch = facts[start : start + 2000]
        old.upsert(  # schema 1: the content was the document (store/chroma/codec.py)
            ids=[f.id for f in batch], embeddings=vectors[start : start + 2000],
            documents=[f.content for f in batch],
            metadatas=[{**encode(f), "record": f.model_dump_json(exclude={"content"})}
                       for f in batch],
        )  # fmt: skip
    old.update(ids=[facts[0].id], metadatas=[{"accessed_at": 1_700_000_000.0}])


def _legacy_home(home: Path, facts: list[Fact]) -> MemoryConfig:
    config = MemoryConfig(home=home)
    client = open_client(config)
    write_legacy_store(client, config.collection, facts)
    client.close()
    return config


def _collection_names(config: MemoryConfig) -> set[str]:
    client = chromadb.PersistentClient(str(config.chroma_path), settings=chroma_settings())
    try:
        return {c.name for c in client.list_collections()}
    finally:
        client.close()


def assert_every_fact_once(memory: Memory, facts: list[Fact]) -> None:
    users = {f.user_id for f in facts}
    stored = [s for user in users for s in memory.list(user_id=user, status=None, limit=1000)]
    assert sorted(s.id for s in stored) == sorted(f.id for f in facts)  # all, none twice
    by_id = {f.id: f for f in facts}
    assert all(s.content == by_id[s.id].content and s.user_id == by_id[s.id].user_id
               for s in stored)  # fmt: skip
    assert memory.repository.store.count() == len(facts)


def test_opening_an_old_embedded_store_migrates_it(home: Path) -> None:
    facts = _facts(users=3, per_user=40)
    config = _legacy_home(home, facts)
    with Memory(config, embeddings=EMBEDDINGS) as memory:
        assert memory.repository.store.migrated == len(facts)
        assert_every_fact_once(memory, facts)
        assert memory.get(facts[0].id).last_accessed_at is not None  # access times kept
        assert memory.get(facts[-1].id).user_id == "user-2"  # by id, without the user
        hits = memory.recall("kayak3", user_id="user-1", k=5)
        assert hits and {h.fact.user_id for h in hits} == {"user-1"}  # isolation holds
    names = _collection_names(config)
    assert f"{config.collection}_facts" not in names
    assert user_collection(config.collection, "user-0") in names
    with Memory(config, embeddings=EMBEDDINGS) as again:
        assert again.repository.store.migrated == 0
        assert_every_fact_once(again, facts)


def test_a_migrated_store_of_many_small_users_reads_whole_after_evictions(home: Path) -> None:
    # More users than Chroma keeps indexes open, each under ten facts: every user's new
    # collection must be readable again after Chroma evicted it (store/chroma/workarounds/saved_index.py).
    facts = _facts(users=CHROMA_OPEN_INDEXES + 20, per_user=3)
    config = _legacy_home(home, facts)
    with Memory(
        config.model_copy(update={"index_cache_facts": 3}), embeddings=EMBEDDINGS
    ) as memory:
        assert memory.repository.store.migrated == len(facts)
        for _ in range(2):
            for user in sorted({f.user_id for f in facts}):
                assert len(memory.recall("kayak", user_id=user, k=10, min_score=0.0)) == 3


def _migrate_in_a_child(config: MemoryConfig) -> subprocess.Popen[str]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    return subprocess.Popen(
        [sys.executable, "-m", "recallmem.cli", "--home", str(config.home), "migrate"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("resume", ["recallmem migrate", "open"])
def test_a_migration_killed_midway_loses_nothing_and_resumes(home: Path, resume: str) -> None:
    facts = _facts(users=50, per_user=100)  # 5 pages of MIGRATION_PAGE
    config = _legacy_home(home, facts)
    child = _migrate_in_a_child(config)
    first = child.stdout.readline()  # type: ignore[union-attr]
    assert first.startswith("copied 1,000/5,000"), first + child.stderr.read()  # type: ignore[union-attr]
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=30)
    assert f"{config.collection}_facts" in _collection_names(config)  # killed midway
    if resume == "recallmem migrate":
        out = subprocess.run(
            [sys.executable, "-m", "recallmem.cli", "--home", str(home), "migrate"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "migrated 5,000 facts" in out
    with Memory(config, embeddings=EMBEDDINGS) as memory:
        assert_every_fact_once(memory, facts)
        assert memory.recall("kayak7", user_id="user-9", k=3)[0].fact.user_id == "user-9"
    assert f"{config.collection}_facts" not in _collection_names(config)


def test_migrate_says_when_there_is_nothing_to_do(home: Path, capsys: Any) -> None:
    with Memory(MemoryConfig(home=home), embeddings=EMBEDDINGS) as memory:
        memory.remember("Likes tea", user_id="ada", category="preference")
    assert main(["--home", str(home), "migrate"]) == 0
    assert "nothing to migrate" in capsys.readouterr().out


@pytest.fixture
def server_prefix() -> Iterator[str]:
    yield f"migrate_{uuid.uuid4().hex[:12]}"
    from tests.conformance.stores import close_chroma_http_sessions

    close_chroma_http_sessions()


@pytest.mark.chroma_server
@pytest.mark.skipif(not CHROMA_URL, reason="set RECALLMEM_TEST_CHROMA_URL (scripts/test.sh)")
def test_an_old_store_on_a_server_is_refused_until_migrated(
    home: Path, server_prefix: str, capsys: Any
) -> None:
    config = MemoryConfig(home=home, chroma_url=CHROMA_URL, collection=server_prefix)
    facts = _facts(users=4, per_user=30)
    write_legacy_store(open_client(config), server_prefix, facts)
    with pytest.raises(StoreError, match="recallmem migrate --chroma-url"):
        Memory(config, embeddings=EMBEDDINGS)
    argv = ["--home", str(home), "migrate", "--chroma-url", str(CHROMA_URL)]
    assert main([*argv, "--collection", server_prefix]) == 0
    assert "migrated 120 facts" in capsys.readouterr().out
    with Memory(config, embeddings=EMBEDDINGS) as memory:
        assert_every_fact_once(memory, facts)
        hits = memory.recall("kayak2", user_id="user-3", k=5)
        assert hits and {h.fact.user_id for h in hits} == {"user-3"}
        memory.forget(user_id="user-3", purge=True)
        assert memory.repository.store.count() == 90
        assert memory.repository.store.get([facts[-1].id]) == []
