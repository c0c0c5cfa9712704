"""The lookup indexes an embedded store adds to Chroma's SQLite (store/chroma/workarounds/sqlite_indexes.py)."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.store.chroma.workarounds.scrub import CHROMA_FILE
from recallmem.store.chroma.workarounds.sqlite_indexes import INDEXES, add_lookup_indexes
from recallmem.testing import HashingEmbeddings

# Run in a child: Chroma's own SQLite and Python's must never share a process on one file.
_PLANS = """
import json, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")]
plan = lambda sql, *args: " ".join(r[3] for r in db.execute("EXPLAIN QUERY PLAN " + sql, args))
print(json.dumps({"indexes": names,
    "segments": plan("SELECT id FROM segments WHERE collection = ?", "c"),
    "log": plan("SELECT seq_id FROM embeddings_queue WHERE topic = ? AND seq_id > ?"
                " ORDER BY seq_id", "t", 0),
    "purge": plan("DELETE FROM embeddings_queue WHERE topic = ? AND seq_id < ?", "t", 9)}))
"""
_DROP = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
for name in sys.argv[2:]:
    db.execute(f"DROP INDEX {name}")
"""


def _plans(home: Path) -> dict[str, object]:
    database = home / "chroma" / CHROMA_FILE
    done = subprocess.run([sys.executable, "-c", _PLANS, str(database)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    plans: dict[str, object] = json.loads(done.stdout)
    return plans


def _write_and_close(home: Path) -> None:
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.remember("Drinks green tea", user_id="ada", category="preference")
        memory.remember("Rides a bike to work", user_id="ben", category="behavior")


def test_an_embedded_store_looks_segments_and_log_rows_up_by_index(home: Path) -> None:
    _write_and_close(home)
    plans = _plans(home)
    assert set(INDEXES) <= set(plans["indexes"])  # type: ignore[arg-type]
    assert "recallmem_segments_collection" in str(plans["segments"])
    assert "recallmem_embeddings_queue_topic (topic=? AND seq_id>?)" in str(plans["log"])
    assert "recallmem_embeddings_queue_topic (topic=? AND seq_id<?)" in str(plans["purge"])


def test_a_store_without_the_indexes_gets_them_when_opened_and_keeps_its_facts(
    home: Path,
) -> None:
    _write_and_close(home)
    subprocess.run([sys.executable, "-c", _DROP, str(home / "chroma" / CHROMA_FILE), *INDEXES],
                   check=True)  # fmt: skip
    assert not set(INDEXES) & set(_plans(home)["indexes"])  # type: ignore[arg-type]
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        assert [h.fact.content for h in memory.recall("tea", user_id="ada", k=3)] == [
            "Drinks green tea"
        ]
        assert [f.content for f in memory.list(user_id="ben")] == ["Rides a bike to work"]
    assert set(INDEXES) <= set(_plans(home)["indexes"])  # type: ignore[arg-type]


def test_failing_to_add_them_is_logged_and_creates_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="recallmem.store"):
        assert add_lookup_indexes(tmp_path) is False  # no database: none is made
        assert not (tmp_path / CHROMA_FILE).exists()
        (tmp_path / CHROMA_FILE).write_bytes(b"not a database, " * 512)
        assert add_lookup_indexes(tmp_path) is False
    assert (tmp_path / CHROMA_FILE).read_bytes() == b"not a database, " * 512
    messages = [r.getMessage() for r in caplog.records]
    assert any("no database file" in m for m in messages)
    assert any("file is not a database" in m and "works without them" in m for m in messages)


def test_the_command_adds_them_to_a_directory_another_process_serves(
    home: Path, tmp_path: Path
) -> None:
    _write_and_close(home)
    database = home / "chroma" / CHROMA_FILE
    subprocess.run([sys.executable, "-c", _DROP, str(database), *INDEXES], check=True)
    command = [sys.executable, "-m", "recallmem.store.chroma.workarounds.sqlite_indexes"]
    assert subprocess.run([*command, str(tmp_path)], capture_output=True).returncode == 2
    assert subprocess.run([*command, str(home / "chroma")], capture_output=True).returncode == 0
    assert set(INDEXES) <= set(_plans(home)["indexes"])  # type: ignore[arg-type]
