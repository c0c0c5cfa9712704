"""A vector index a crash left behind its records: reported, rebuilt, or erased.

Chroma 1.5 saves a collection's vector index files, then their id map and the log
position they reflect. A process killed in between leaves index files newer than their
id map, and every later read of that collection fails inside Chroma. The state is made
here exactly as such a crash leaves it, from Chroma's own files: a home is copied after
a write, the write after it goes on, and the newer index files (not their id map) are
copied over the older home's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import python
from recallmem import Memory, MemoryConfig
from recallmem.errors import BrokenIndexError
from recallmem.store.chroma.layout import user_collection
from recallmem.store.chroma.workarounds.segments import apply_log_row, vector_index_dir
from recallmem.testing import HashingEmbeddings

ID_MAP = "index_metadata.pickle"
INDEX_FILES = ("data_level0.bin", "header.bin", "length.bin", "link_lists.bin")


def index_of(home: Path, user_id: str) -> Path:
    """The directory of the user's vector index files, saved with their id map."""
    found = vector_index_dir(home / "chroma", user_collection(MemoryConfig().collection, user_id))
    assert found is not None and (found / ID_MAP).is_file()
    return found


def open_memory(home: Path) -> Memory:
    return Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())


@pytest.fixture
def crashed(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A home whose user 'ada' (50 facts) has index files newer than their id map, and
    the facts as they were stored (id -> content); user 'grace' is intact."""
    home, later = tmp_path / "crashed", tmp_path / "later"
    with open_memory(home) as memory:
        stored = memory.remember_many(
            [{"content": f"Fact {n} about Wibblequax", "category": "context"} for n in range(50)],
            user_id="ada",
        )
        memory.remember("Grace keeps Hollowmere honey", user_id="grace", category="preference")
    shutil.copytree(home, later)
    with open_memory(later) as memory:  # the write the crash interrupts
        for fact in stored[:30]:
            memory.forget(fact.id, user_id="ada", purge=True)
    index = index_of(home, "ada")
    for name in INDEX_FILES:
        shutil.copyfile(later / "chroma" / index.name / name, index / name)
    return home, {f.id: f.content for f in stored}


def test_reading_a_broken_user_says_what_happened_and_what_to_run(
    crashed: tuple[Path, dict[str, str]],
) -> None:
    home, _ = crashed
    with open_memory(home) as memory:
        with pytest.raises(BrokenIndexError) as raised:
            memory.list(user_id="ada")
        assert "records themselves are intact" in str(raised.value)
        assert "recallmem maintain --user" in str(raised.value)
        assert [f.content for f in memory.list(user_id="grace")] == ["Grace keeps Hollowmere honey"]


def test_maintenance_rebuilds_the_user_from_the_records_and_loses_nothing(
    crashed: tuple[Path, dict[str, str]],
) -> None:
    home, stored = crashed
    broken = index_of(home, "ada")
    with open_memory(home) as memory:
        report = memory.maintain(user_id="ada")
        assert report.repaired == ("ada",)
        assert {f.id: f.content for f in memory.list(user_id="ada", limit=200)} == stored
        [hit, *_] = memory.recall("Fact 33 about Wibblequax", user_id="ada")
        assert hit.fact.content == "Fact 33 about Wibblequax"
        assert memory.maintain(user_id="ada").repaired == ()  # nothing left to rebuild
    assert not broken.exists()  # old files removed
    with open_memory(home) as memory:
        assert len(memory.list(user_id="ada", limit=200)) == 50
        assert memory.repository.store.count() == 51


def test_forget_me_erases_a_broken_user_without_reading_it(
    crashed: tuple[Path, dict[str, str]],
) -> None:
    home, _ = crashed
    broken = index_of(home, "ada")
    with open_memory(home) as memory:
        assert memory.forget(user_id="ada", purge=True) == 50
        assert memory.list(user_id="ada", status=None) == []
        assert memory.repository.store.count() == 1
        memory.remember("Ada starts again", user_id="ada", category="context")
        assert [f.content for f in memory.list(user_id="ada")] == ["Ada starts again"]
    assert not broken.exists()  # the dropped collection's index files are removed
    # (Every other file is grepped by test_purge_leaves_no_bytes.py.)
    assert b"Wibblequax" not in (home / "chroma" / "chroma.sqlite3").read_bytes()


CRASH_AFTER_DROP = """
import os, sys
from recallmem import Memory, MemoryConfig
from recallmem.store.chroma import layout
from recallmem.testing import HashingEmbeddings
drop = layout.Collections.drop
def drop_then_die(self, user_id):
    drop(self, user_id)
    os._exit(9)  # killed after the old collection is gone, before a row is written back
layout.Collections.drop = drop_then_die
Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings()).maintain(user_id="ada")
"""


def test_a_rebuild_killed_after_dropping_the_collection_completes_at_the_next_open(
    crashed: tuple[Path, dict[str, str]],
) -> None:
    home, stored = crashed
    assert python(CRASH_AFTER_DROP, str(home)).returncode == 9
    with open_memory(home) as memory:  # the journaled rows are written back on open
        assert memory.repository.recovered == 50
        assert {f.id: f.content for f in memory.list(user_id="ada", limit=200)} == stored


def test_the_log_rows_a_segment_had_not_applied_are_replayed_as_chroma_would() -> None:
    records = {"a": {"k": 1, "x": "old"}, "b": {"k": 2}}
    for operation, record_id, fields in [
        (0, "a", {"k": 9}),  # an add never overwrites
        (1, "b", {"k": 3, "x": None}),  # an update merges; None removes a key
        (1, "z", {"k": 4}),  # an update of a missing record does nothing
        (2, "c", {"k": 5}),  # an upsert adds
        (3, "a", {}),  # a delete removes
    ]:
        apply_log_row(records, operation, record_id, fields)
    assert records == {"b": {"k": 3}, "c": {"k": 5}}


SEGMENT_OF = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(db.execute("SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
                 "WHERE c.name = ? AND s.scope = 'VECTOR'", (sys.argv[2],)).fetchone()[0])
"""


@pytest.fixture
def crashed_directory(tmp_path: Path) -> tuple[Path, set[str]]:
    """A home whose id directory (shared by every user) has index files newer than their
    id map, and the ids stored. Chroma saves the directory's index every 1,000 writes:
    the home is copied with 30 deletes logged after the last save, and the copy's index
    files, saved again later with those deletes applied, are put back into the home."""
    home, later = tmp_path / "crashed", tmp_path / "later"
    with open_memory(home) as memory:
        many = [{"content": f"Fact {n} of Wibblequax", "category": "context"} for n in range(1100)]
        stored = memory.remember_many(many, user_id="ada")
        doomed = [{"content": f"Doomed {n}", "category": "context"} for n in range(30)]
        memory.remember_many(doomed, user_id="ada", thread_id="doomed")
        memory.forget(user_id="ada", thread_id="doomed", purge=True)
    shutil.copytree(home, later)
    with open_memory(later) as memory:  # enough writes for Chroma to save the index again
        more = [{"content": f"Later {n}", "category": "context"} for n in range(1000)]
        memory.remember_many(more, user_id="bob")
    found = python(SEGMENT_OF, str(home / "chroma" / "chroma.sqlite3"), "recallmem_ids")
    index = home / "chroma" / found.stdout.strip()
    assert (index / ID_MAP).is_file(), found.stderr
    for name in INDEX_FILES:
        shutil.copyfile(later / "chroma" / index.name / name, index / name)
    return home, {f.id for f in stored}


def test_opening_rebuilds_a_broken_id_directory_from_its_records(
    crashed_directory: tuple[Path, set[str]], caplog: pytest.LogCaptureFixture
) -> None:
    home, stored = crashed_directory
    with open_memory(home) as memory:
        assert "rebuilding collection recallmem_ids" in caplog.text
        assert memory.repository.store.count() == len(stored)
        some = sorted(stored)[7]
        assert memory.get(some).user_id == "ada"  # a lookup by id alone goes through it
        assert memory.repository.users() == ["ada"]
    assert list((home / "rebuilds").iterdir()) == []


CRASH_IN_REBUILD = """
import os, sys
from recallmem import Memory, MemoryConfig
from recallmem.store.chroma.workarounds import rebuild
from recallmem.testing import HashingEmbeddings
rebuild._finish = lambda client, journal: os._exit(9)  # killed after the drop
Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
"""


def test_a_rebuild_of_the_directory_killed_after_the_drop_finishes_at_the_next_open(
    crashed_directory: tuple[Path, set[str]],
) -> None:
    home, stored = crashed_directory
    assert python(CRASH_IN_REBUILD, str(home)).returncode == 9
    assert [p.name for p in (home / "rebuilds").iterdir()] == ["recallmem_ids.json"]
    with open_memory(home) as memory:
        assert memory.repository.store.count() == len(stored)
    assert list((home / "rebuilds").iterdir()) == []


def cut_id_map(index: Path) -> None:
    """The id map as a kill while Chroma writes it leaves it: cut short."""
    (index / ID_MAP).write_bytes(b"")


def test_a_user_whose_id_map_a_kill_cut_short_is_reported_then_rebuilt(tmp_path: Path) -> None:
    home = tmp_path / "mem"
    with open_memory(home) as memory:
        items = [
            {"content": f"Fact {n} about Wibblequax", "category": "context"} for n in range(20)
        ]
        stored = {f.id for f in memory.remember_many(items, user_id="ada")}
    cut_id_map(index_of(home, "ada"))
    with open_memory(home) as memory:
        with pytest.raises(BrokenIndexError, match="recallmem maintain --user"):
            memory.list(user_id="ada")
        assert memory.maintain(user_id="ada").repaired == ("ada",)
        assert {f.id for f in memory.list(user_id="ada", limit=100)} == stored


def test_opening_rebuilds_an_id_directory_whose_id_map_a_kill_cut_short(tmp_path: Path) -> None:
    home = tmp_path / "mem"
    with open_memory(home) as memory:  # past the 1,000 writes after which Chroma saves it
        many = [{"content": f"Fact {n} of Wibblequax", "category": "context"} for n in range(1100)]
        stored = {f.id for f in memory.remember_many(many, user_id="ada")}
    found = python(SEGMENT_OF, str(home / "chroma" / "chroma.sqlite3"), "recallmem_ids")
    cut_id_map(home / "chroma" / found.stdout.strip())
    with open_memory(home) as memory:
        assert memory.repository.store.count() == len(stored)
        assert memory.get(sorted(stored)[3]).user_id == "ada"
