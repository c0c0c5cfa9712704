"""Canary of store/chroma/workarounds/sqlite_indexes.py.

chromadb 1.5.9's embedded database has no index on ``segments(collection)`` nor on
``embeddings_queue(topic)``, which every read and each first touch of a collection look
rows up by. If this fails, Chroma indexes them itself: delete the workaround (and the
operator's step in docs/deployment.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from upstream import plain_client, run_python

INDEXED_COLUMNS = """
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
found = {}
for table in ("segments", "embeddings_queue"):
    for _, name, *_ in db.execute(f"PRAGMA index_list({table})"):
        columns = [row[2] for row in db.execute(f"PRAGMA index_info('{name}')")]
        found.setdefault(table, []).append(columns)
print(json.dumps(found))
"""


def test_chroma_looks_segments_and_log_rows_up_without_an_index(tmp_path: Path) -> None:
    with plain_client(tmp_path) as client:
        client.create_collection("canary", embedding_function=None).add(
            ids=["a"], embeddings=[[1.0, 0.0]]
        )
    indexes = json.loads(run_python(INDEXED_COLUMNS, str(tmp_path / "chroma.sqlite3")))
    assert not [c for c in indexes.get("segments", []) if c[:1] == ["collection"]]
    assert not [c for c in indexes.get("embeddings_queue", []) if c[:1] == ["topic"]]
