"""Canary of store/chroma/workarounds/segments.py.

A chromadb 1.5.9 collection whose vector index a crash left behind its records cannot be
read through Chroma, but its records are intact in Chroma's private tables (the metadata
segment's ``embeddings`` and ``embedding_metadata``, then the log rows it has not
applied), where the workaround reads them to rebuild the collection. If this fails,
those tables changed: read them where Chroma 1.5.9's successor keeps them, or rebuild
through an API Chroma offers by then.
"""

from __future__ import annotations

from pathlib import Path

from recallmem.store.chroma.workarounds.segments import (
    DOCUMENT_KEY,
    read_collection,
    vector_index_dir,
)
from upstream import plain_client, saved_canary


def test_the_records_are_where_the_rebuild_reads_them(tmp_path: Path) -> None:
    with plain_client(tmp_path) as client:
        records = client.create_collection("canary", embedding_function=None)
        records.add(ids=["a", "b"], embeddings=[[1.0, 0.0], [0.0, 1.0]],
                    metadatas=[{"user_id": "ada", "n": 1}, {"user_id": "ada", "n": 2.5}],
                    documents=["first", None])  # fmt: skip
        records.update(ids=["b"], metadatas=[{"flag": True}])
        records.delete(ids=["a"])
        records.add(ids=["c"], embeddings=[[0.5, 0.5]], metadatas=[{"user_id": "bob"}])
        expected = records.get(include=["metadatas"])
    found = read_collection(tmp_path, "canary")
    assert dict(zip(expected["ids"], expected["metadatas"], strict=True)) == {
        i: {k: v for k, v in m.items() if k != DOCUMENT_KEY} for i, m in found.items()
    }
    assert vector_index_dir(tmp_path, "canary") is not None


def test_a_dropped_collection_leaves_its_index_files_on_disk(tmp_path: Path) -> None:
    # store/chroma/workarounds/dropped_index.py removes them after delete_collection
    with plain_client(tmp_path) as client:
        saved_canary(client, 12)
        index = vector_index_dir(tmp_path, "canary")
        assert index is not None and (index / "data_level0.bin").is_file()
        client.delete_collection("canary")
    assert (index / "data_level0.bin").is_file()
