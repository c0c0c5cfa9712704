"""The record of what reached a model: durable, bounded per user, read without side
effects, erased by purges, shared by the processes of one home, never in a turn's way."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from recallmem.config import MemoryConfig
from recallmem.durability.owed_scrub import OwedScrub
from recallmem.memory import Memory
from recallmem.persistence.forget_ledger import outside_work, work_began
from recallmem.persistence.retrieval_records import RetrievalRecords
from recallmem.retrieval.shown import DroppedFact, RetrievalRecord, ShownFact
from recallmem.testing import HashingEmbeddings
from recallmem.types import ScoreParts

SAID = "Which Zorblatt-QX7 cat food did I order?"  # a distinctive query: grep finds it


def record(user: str = "ada", thread: str = "t1", query: str = SAID, *ids: str) -> RetrievalRecord:
    shown = tuple(ShownFact(fact_id=i, role="relevant", score=0.5, parts=ScoreParts(dense=0.6))
                  for i in ids)  # fmt: skip
    return RetrievalRecord(user_id=user, thread_id=thread, turn_id="m1", trigger="block",
                           query=query, shown=shown, tokens=42)  # fmt: skip


def open_memory(home: Path, **settings: object) -> Memory:
    return Memory(MemoryConfig(home=home, **settings), embeddings=HashingEmbeddings())  # type: ignore[arg-type]


def files_holding(home: Path, text: str) -> list[str]:
    return [str(p.relative_to(home)) for p in home.rglob("*")
            if p.is_file() and text.encode() in p.read_bytes()]  # fmt: skip


def test_a_record_survives_a_restart_newest_first(home: Path) -> None:
    with open_memory(home) as memory:
        first = record("ada", "t1", "first", "f1")
        second = record("ada", "t2", "second", "f2")
        memory.record_retrieval(first)
        memory.record_retrieval(second)
    with open_memory(home) as reopened:
        assert reopened.retrievals("ada") == [second, first]  # every field, as written
        assert reopened.retrievals("ada", thread_id="t1") == [first]
        assert reopened.retrievals("ada", limit=1) == [second]
        assert reopened.retrievals("bob") == []


async def test_the_async_twins(memory: Memory) -> None:
    await memory.arecord_retrieval(record())
    assert [r.query for r in await memory.aretrievals("ada")] == [SAID]


def test_reading_creates_nothing(home: Path) -> None:
    with open_memory(home) as memory:
        assert memory.retrievals("ada") == []
        assert not memory.config.retrievals_path.exists()


def test_bad_arguments_are_refused_with_how_to_fix_them(memory: Memory) -> None:
    from recallmem.errors import InvalidInputError, MissingScopeError

    with pytest.raises(MissingScopeError, match="user_id"):
        memory.retrievals("ada lovelace")
    with pytest.raises(InvalidInputError, match="limit must be an integer from 1"):
        memory.retrievals("ada", limit=0)
    with pytest.raises(ValueError, match="user_id"):
        RetrievalRecord(user_id="a/b", trigger="tool")


def test_the_record_is_bounded_per_user(home: Path) -> None:
    with open_memory(home, retrievals_per_user=3) as memory:
        for n in range(5):
            memory.record_retrieval(record("ada", query=f"ada {n}"))
        for n in range(2):
            memory.record_retrieval(record("bob", query=f"bob {n}"))
        assert [r.query for r in memory.retrievals("ada")] == ["ada 4", "ada 3", "ada 2"]
        assert [r.query for r in memory.retrievals("bob")] == ["bob 1", "bob 0"]
    assert files_holding(home, "ada 0") == []  # the dropped rows' bytes are zeroed


def test_zero_records_nothing(home: Path) -> None:
    with open_memory(home, retrievals_per_user=0) as memory:
        memory.record_retrieval(record())
        assert memory.retrievals("ada") == []
        assert not memory.config.retrievals_path.exists()


def test_a_query_is_cut_to_the_query_limit() -> None:
    from recallmem.limits import MAX_QUERY_CHARS

    assert len(record(query="x" * (MAX_QUERY_CHARS + 50)).query) == MAX_QUERY_CHARS


def test_a_secret_in_a_query_never_reaches_the_file(home: Path) -> None:
    """A block's query is the user's first message: redacted, as the queue's words are."""
    with open_memory(home) as memory:
        memory.record_retrieval(record(query="remember my email password is hunter2"))
        [kept] = memory.retrievals("ada")
        assert kept.query == "remember my email password is [REDACTED]"
    assert files_holding(home, "hunter2") == []


def test_forget_me_leaves_no_byte_of_the_users_records(home: Path) -> None:
    with open_memory(home) as memory:
        memory.remember("Has a cat", user_id="ada", category="identity")
        memory.record_retrieval(record("ada", "t1", SAID))
        memory.record_retrieval(record("bob", "t1", "Bob's Hollowmere honey"))
        assert files_holding(home, "Zorblatt-QX7")
        memory.forget(user_id="ada", purge=True)
        assert memory.retrievals("ada") == []
        assert files_holding(home, "Zorblatt-QX7") == []
        assert [r.query for r in memory.retrievals("bob")] == ["Bob's Hollowmere honey"]
    with open_memory(home) as reopened:
        assert reopened.retrievals("ada") == []


def test_a_fact_purge_erases_the_records_that_name_it(home: Path) -> None:
    """A record that showed (or dropped) a purged fact goes whole: its query is what
    brought that fact up, and likely quotes it."""
    with open_memory(home) as memory:
        gone = memory.remember("Owns a Frobnitz toaster", user_id="ada", category="context")
        kept = memory.remember("Owns a kettle", user_id="ada", category="context")
        memory.record_retrieval(record("ada", "t1", "my Frobnitz toaster", gone.id, kept.id))
        dropped = DroppedFact(fact_id=gone.id, reason="budget")
        memory.record_retrieval(record("ada", "t1", "Frobnitz again").model_copy(
            update={"dropped": (dropped,)}))  # fmt: skip
        memory.record_retrieval(record("ada", "t2", "kettle", kept.id))
        memory.forget(kept.id, user_id="ada")  # a soft forget keeps every record
        assert len(memory.retrievals("ada")) == 3
        memory.forget(gone.id, user_id="ada", purge=True)
        assert [r.query for r in memory.retrievals("ada")] == ["kettle"]
        assert files_holding(home, "Frobnitz") == []
        # nor is its id in the record's files (Chroma's log keeps ids, with no text)
        assert [f for f in files_holding(home, gone.id) if "retrievals" in f] == []


def test_a_thread_purge_erases_that_threads_records(memory: Memory) -> None:
    memory.remember("Plans a trip to Kyoto", user_id="ada", category="goal", thread_id="trip")
    memory.record_retrieval(record("ada", "trip", "where do I travel"))
    memory.record_retrieval(record("ada", "work", "which report"))
    memory.forget(user_id="ada", thread_id="trip")  # soft: kept
    assert len(memory.retrievals("ada")) == 2
    memory.forget(user_id="ada", thread_id="trip", purge=True)
    assert [r.thread_id for r in memory.retrievals("ada")] == ["work"]


def test_a_record_that_cannot_be_written_is_logged_not_raised(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with open_memory(home) as memory:
        memory.config.retrievals_path.mkdir(parents=True)  # no database can be opened there
        with caplog.at_level(logging.WARNING, logger="recallmem.store"):
            memory.record_retrieval(record())
        assert "a retrieval record was not kept (the turn goes on)" in caplog.text
        with pytest.raises(Exception, match="could not read the retrieval records"):
            memory.retrievals("ada")  # a read says so: it is not the agent's turn


WRITER = """
import sys
from recallmem.config import MemoryConfig
from recallmem.persistence.retrieval_records import RetrievalRecords
from recallmem.retrieval.shown import RetrievalRecord
records = RetrievalRecords(MemoryConfig(home=sys.argv[1], retrievals_per_user=150))
for n in range(120):
    records.add(RetrievalRecord(user_id="ada", trigger="tool", query=f"{sys.argv[2]} {n}"))
print(len(records.latest("ada", limit=1000)))
"""


def test_two_processes_share_one_file(home: Path) -> None:
    """The workers of one host share a home on a Chroma server: each writes the file."""
    writers = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(home), name],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("one", "two")
    ]  # fmt: skip
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        assert "was not kept" not in err
    records = RetrievalRecords(MemoryConfig(home=home, retrievals_per_user=150))
    kept = records.latest("ada", limit=1000)
    assert len(kept) == 150  # 240 written, the bound held across both
    assert {r.query.split()[0] for r in kept} == {"one", "two"}
    records.close()


def test_a_scrub_owed_by_a_crash_also_scrubs_the_records(home: Path) -> None:
    with open_memory(home) as memory:
        memory.record_retrieval(record("ada", query=SAID))
    # A crash after the rows were deleted but before the file was rewritten: delete as a
    # plain connection does (no secure_delete), so the bytes stay in a free page.
    db = sqlite3.connect(MemoryConfig(home=home).retrievals_path)
    db.execute("PRAGMA secure_delete=OFF")
    db.execute("DELETE FROM retrievals")
    db.commit()
    db.close()
    OwedScrub(home).owe()
    assert files_holding(home, "Zorblatt-QX7")
    with open_memory(home):
        assert files_holding(home, "Zorblatt-QX7") == []


def test_a_record_of_a_turn_begun_before_forget_me_is_not_kept(home: Path) -> None:
    # A turn in flight when the user is purged (a hedge's forced recall, a tool answer)
    # records what its model saw after the purge: that record would quote the user.
    with open_memory(home) as memory, work_began(user_id="ada", thread_id="t1"):
        memory.record_retrieval(record("ada", "t1", "before the purge"))
        with outside_work():
            memory.forget(user_id="ada", purge=True)
        memory.record_retrieval(record("ada", "t1", SAID))
        memory.record_retrieval(record("bob", "t1", "another user's turn"))
        assert memory.retrievals("ada") == []
        assert [r.query for r in memory.retrievals("bob")] == ["another user's turn"]
    assert files_holding(home, SAID) == []
