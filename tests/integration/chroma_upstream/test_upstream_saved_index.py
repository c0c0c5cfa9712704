"""Canary of store/chroma/workarounds/saved_index.py.

chromadb 1.5.9 saves a collection's vector index only every ``sync_threshold`` records;
once the index of a collection that never reached its first save is evicted from the
cache of open indexes, every read of its vectors fails with "Nothing found on disk"
until the process restarts. If this fails, such reads work: delete the workaround (and
``USER_HNSW``'s reason to save often).
"""

from __future__ import annotations

from pathlib import Path

from recallmem.store.chroma.workarounds.bounded_cache import (
    CHROMA_OPEN_INDEXES,
    bounded_index_cache,
)
from recallmem.store.chroma.workarounds.saved_index import USER_HNSW, is_unsaved_index
from upstream import plain_client


def test_an_evicted_index_never_saved_cannot_be_read_again(tmp_path: Path) -> None:
    failures: list[Exception] = []
    with bounded_index_cache(), plain_client(tmp_path) as client:
        collections = [
            client.create_collection(
                f"user{n}", embedding_function=None, configuration={"hnsw": USER_HNSW}
            )
            for n in range(CHROMA_OPEN_INDEXES + 36)  # more than the cache keeps open
        ]
        for collection in collections:  # one record: far below sync_threshold
            collection.upsert(ids=["a"], embeddings=[[1.0, 0.0]], metadatas=[{"user_id": "u"}])
        for _ in range(2):  # the second pass meets the indexes the first one evicted
            for collection in collections:
                try:
                    collection.get(where={"user_id": {"$eq": "u"}},
                                   include=["embeddings"], limit=10, offset=0)  # fmt: skip
                except Exception as exc:
                    failures.append(exc)
    assert failures, "every evicted index was read back: Chroma saves or rebuilds them now"
    assert all(is_unsaved_index(exc) for exc in failures), failures[0]
