"""Users of few facts stay readable after Chroma evicts their vector index from memory.

Chroma keeps ``CHROMA_OPEN_INDEXES`` collections' vector indexes in memory and loads an
evicted one back from disk; an index never saved there cannot be loaded, and before
``store/chroma/workarounds/saved_index.py`` every recall of such a user failed ("Nothing found on disk")
until the process restarted. These tests touch more users than the cache holds, then
read every one of them again in the same process.
"""

from __future__ import annotations

from pathlib import Path

from recallmem import Memory, MemoryConfig
from recallmem.store.chroma.layout import user_collection
from recallmem.store.chroma.workarounds.bounded_cache import CHROMA_OPEN_INDEXES
from recallmem.store.chroma.workarounds.saved_index import SAVED_EVERY, USER_HNSW
from recallmem.testing import HashingEmbeddings

USERS = CHROMA_OPEN_INDEXES + 36  # more than Chroma keeps open, so most are evicted


def facts_of(n: int) -> list[str]:
    return [f"Keeps a bicycle numbered {n}", f"Reads poetry on evening {n}", f"Lives in town {n}"]


def open_memory(home: Path) -> Memory:
    # A tiny hot-index cache: every recall below loads the user from Chroma again.
    config = MemoryConfig(home=home, index_cache_facts=3)
    return Memory(config, embeddings=HashingEmbeddings())


def write_users(memory: Memory) -> None:
    for n in range(USERS):
        items = [{"content": text, "category": "context"} for text in facts_of(n)]
        memory.remember_many(items, user_id=f"user{n}")


def recalled(memory: Memory, n: int) -> set[str]:
    return {h.fact.content for h in memory.recall("bicycle", user_id=f"user{n}", k=10)}


def test_every_small_user_is_recalled_after_its_index_was_evicted(tmp_path: Path) -> None:
    with open_memory(tmp_path / "mem") as memory:
        write_users(memory)
        for _ in range(2):  # the second pass meets the indexes the first one evicted
            for n in range(USERS):
                assert recalled(memory, n) == set(facts_of(n))


def test_a_reopened_store_reads_whole_and_the_healed_indexes_save_at_every_write(
    tmp_path: Path,
) -> None:
    home = tmp_path / "mem"
    with open_memory(home) as memory:
        write_users(memory)
    with open_memory(home) as memory:
        client = memory.repository.store.collections.client
        names = [
            user_collection(memory.repository.store.collections.prefix, f"user{n}")
            for n in range(USERS)
        ]
        assert {client.get_collection(n).configuration_json["hnsw"]["sync_threshold"]
                for n in names} == {USER_HNSW["sync_threshold"]}  # fmt: skip
        for _ in range(2):
            for n in range(USERS):
                assert recalled(memory, n) == set(facts_of(n))
        # The reads that met an unsaved index had it saved, and now save at every write.
        settings = [client.get_collection(n).configuration_json["hnsw"] for n in names]
        assert any(s["sync_threshold"] == SAVED_EVERY for s in settings)


def test_a_user_who_forgot_everything_and_wrote_again_stays_readable(tmp_path: Path) -> None:
    with open_memory(tmp_path / "mem") as memory:
        write_users(memory)
        for fact in memory.list(user_id="user0"):  # one by one: the collection stays
            memory.forget(fact.id, user_id="user0", purge=True)
        memory.remember("Started learning the cello", user_id="user0", category="context")
        memory.forget(user_id="user1", purge=True)
        for _ in range(2):
            for n in range(2, USERS):
                assert recalled(memory, n) == set(facts_of(n))
            assert [h.fact.content for h in memory.recall("cello", user_id="user0")] == [
                "Started learning the cello"
            ]
            assert memory.recall("bicycle", user_id="user1") == []


def test_a_user_who_forgot_every_fact_one_by_one_reads_as_empty(tmp_path: Path) -> None:
    # The collection stays, with no record to rewrite: its index can be saved only by
    # a write that leaves nothing behind.
    with open_memory(tmp_path / "mem") as memory:
        write_users(memory)
        for fact in memory.list(user_id="user0"):
            memory.forget(fact.id, user_id="user0", purge=True)
        for _ in range(2):  # the second pass meets user0's evicted, never-saved index
            for n in range(1, USERS):
                assert recalled(memory, n) == set(facts_of(n))
            assert memory.recall("bicycle", user_id="user0") == []
            assert memory.list(user_id="user0") == []
        memory.remember("Started learning the cello", user_id="user0", category="context")
        assert [h.fact.content for h in memory.recall("cello", user_id="user0")] == [
            "Started learning the cello"
        ]


def test_a_probe_a_crash_left_in_a_collection_is_no_fact(tmp_path: Path) -> None:
    # What saving an emptied collection leaves if the process dies between its add and
    # its delete: a record with a vector and nothing else.
    with open_memory(tmp_path / "mem") as memory:
        fact = memory.remember("Keeps bees on the roof", user_id="ada", category="context")
        name = user_collection(memory.repository.store.collections.prefix, "ada")
        collection = memory.repository.store.collections.client.get_collection(name)
        dimension = len(memory.repository.store.load_user("ada")[1][0])
        collection.add(ids=["unsaved-index-probe-0"], embeddings=[[1.0] * dimension])
        assert [f.id for f in memory.list(user_id="ada")] == [fact.id]
        assert [h.fact.id for h in memory.recall("bees", user_id="ada")] == [fact.id]
        assert [f.id for f in memory.repository.store.salvage("ada")] == [fact.id]
