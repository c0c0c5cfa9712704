"""Canary of store/chroma/workarounds/scrub.py.

chromadb 1.5.9 keeps a deleted record's metadata and document in its file (its log,
its full-text index, free pages) until something rewrites them. If this fails, a delete
leaves no text behind: delete the workaround's SQL (keep the scrub of recallmem's own
queue, durability/sqlite_scrub.py) and ``python -m ...workarounds.scrub`` from the docs.
"""

from __future__ import annotations

from pathlib import Path

from upstream import plain_client


def test_a_deleted_record_leaves_its_text_in_chromas_file(tmp_path: Path) -> None:
    with plain_client(tmp_path) as client:
        records = client.create_collection("canary", embedding_function=None)
        records.add(ids=["gone"], embeddings=[[1.0, 0.0]], documents=["Quorvath document"],
                    metadatas=[{"note": "Quorvath metadata"}])  # fmt: skip
        records.delete(ids=["gone"])
    left = b"".join(p.read_bytes() for p in tmp_path.glob("chroma.sqlite3*"))
    assert b"Quorvath metadata" in left and b"Quorvath document" in left
