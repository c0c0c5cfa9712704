"""A collection's records read straight from the embedded database, without Chroma.

Chroma 1.5 saves a collection's vector index files before their id map and the log
position they reflect; a process killed in between leaves files that no longer match,
and from then on every read of the collection fails (Chroma replays its log into them
first). The records themselves are intact in Chroma's metadata segment, so maintenance
rebuilds the collection from them (docs/decisions/0009-broken-vector-index.md). This
module reads them: the metadata segment's rows, then the log rows that segment had not
applied yet.

Chroma's file is read by a short child process (store/chroma/workarounds/sqlite_child.py says why).

Upstream behaviour worked around (chromadb==1.5.9): keeping the records in the private
tables read here; tests/integration/chroma_upstream/test_upstream_segments.py fails the
day that changes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recallmem.errors import StoreError
from recallmem.store.chroma.codec import decode
from recallmem.store.chroma.workarounds.sqlite_child import ChildProcessFailedError, run_child
from recallmem.types import Fact

DOCUMENT_KEY = "chroma:document"  # where Chroma keeps a record's document among its metadata
_ADD, _UPDATE, _UPSERT, _DELETE = 0, 1, 2, 3  # Chroma's log operations
_READ_TIMEOUT_SECONDS = 600.0
_READ = """
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=60)
found = db.execute(
    "SELECT s.id, c.id FROM collections c JOIN segments s ON s.collection = c.id "
    "WHERE c.name = ? AND s.scope = 'METADATA'", (sys.argv[2],)).fetchone()
if found is None:
    print("{}")
    sys.exit()
segment, collection = found
records = {}
for rid, key, text, number, real, flag in db.execute(
        "SELECT e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, "
        "m.bool_value FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id "
        "WHERE e.segment_id = ?", (segment,)):
    record = records.setdefault(rid, {})
    if key is not None:
        record[key] = (text if text is not None else bool(flag) if flag is not None
                       else number if number is not None else real)
applied = db.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (segment,)).fetchone()
log = db.execute(
    "SELECT operation, id, metadata FROM embeddings_queue WHERE substr(topic, -36) = ? "
    "AND seq_id > ? ORDER BY seq_id", (collection, applied[0] if applied else 0)).fetchall()
print(json.dumps({"records": records, "log": log}))
"""


_VECTOR_SEGMENT = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=60)
for (segment,) in db.execute(
        "SELECT s.id FROM collections c JOIN segments s ON s.collection = c.id "
        "WHERE c.name = ? AND s.scope = 'VECTOR'", (sys.argv[2],)):
    print(segment)
"""


def vector_index_dir(chroma_path: Path, name: str) -> Path | None:
    """The directory of collection ``name``'s vector index files (None if it has none):
    Chroma 1.5 leaves it on disk when the collection is dropped."""
    try:
        printed = run_child(_VECTOR_SEGMENT, str(chroma_path / "chroma.sqlite3"), name,
                            timeout=_READ_TIMEOUT_SECONDS).split()  # fmt: skip
    except ChildProcessFailedError:
        return None
    return chroma_path / printed[0] if printed else None


def stored_facts(chroma_path: Path | None, name: str, user_id: str) -> list[Fact]:
    """The user's facts in collection ``name`` of the embedded store at ``chroma_path``."""
    if chroma_path is None:
        raise StoreError(
            "rebuilding a collection reads the embedded store's files; a Chroma server "
            "keeps its own: restore that collection from a backup or an export"
        )
    records = read_collection(chroma_path, name)
    # Records without the user's metadata are not facts (saved_index.py's probes).
    mine = {i: m for i, m in records.items() if m.get("user_id") == user_id}
    return [decode(i, m.pop(DOCUMENT_KEY, None), m) for i, m in mine.items()]


def read_collection(chroma_path: Path, name: str) -> dict[str, dict[str, Any]]:
    """Every record of collection ``name`` as Chroma last applied it or logged it, by id:
    its metadata, with the document under :data:`DOCUMENT_KEY`. Raises StoreError if the
    database cannot be read."""
    database = chroma_path / "chroma.sqlite3"
    try:
        printed = run_child(_READ, str(database), name, timeout=_READ_TIMEOUT_SECONDS)
    except ChildProcessFailedError as exc:
        raise StoreError(_unreadable(database, str(exc))) from exc
    raw = json.loads(printed)
    records: dict[str, dict[str, Any]] = raw.get("records", {})
    for operation, record_id, metadata in raw.get("log", []):
        apply_log_row(records, operation, record_id, json.loads(metadata) if metadata else {})
    return records


def apply_log_row(records: dict[str, dict[str, Any]], operation: int, record_id: str,
                  fields: dict[str, Any]) -> None:  # fmt: skip
    """Apply one of Chroma's log rows to ``records`` as Chroma applies it: an add never
    overwrites, an update only touches a record that exists, an upsert adds or updates,
    and a key set to None is removed."""
    if operation == _DELETE:
        records.pop(record_id, None)
    elif operation == _ADD and record_id not in records:
        records[record_id] = {k: v for k, v in fields.items() if v is not None}
    elif operation in (_UPDATE, _UPSERT) and (record_id in records or operation == _UPSERT):
        merged = {**records.get(record_id, {}), **fields}
        records[record_id] = {k: v for k, v in merged.items() if v is not None}


def _unreadable(database: Path, why: str) -> str:
    return (
        f"could not read the records of {database} to rebuild a collection ({why}); "
        "check that the file exists and is readable, then run maintenance again"
    )
