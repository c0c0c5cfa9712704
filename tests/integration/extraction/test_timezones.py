"""Due dates in the user's timezone, counted from the day the words were said.

Real Chroma, the fake model replying the local date a careful model would: the prompt's
"Today" is the local date of the window's last message, and hygiene ends the model's
local date at midnight in the user's zone, however late the window is extracted.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import Clock, MemoryFactory, fact, reply
from langchain_core.messages import HumanMessage
from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.extraction.pipeline import ExtractionPipeline
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings

SAID = "Remember: the quarterly report is due tomorrow"


def today_in_prompt(model: FakeChatModel) -> str:
    """The prompt's "Today" date; its weekday is checked to be that date's."""
    (line,) = [x for x in model.requests[-1][-1].text.splitlines() if x.startswith("Today: ")]
    day, weekday = line.removeprefix("Today: ").split(" ")
    assert weekday == f"({date.fromisoformat(day).strftime('%A')})"
    return day


def due_tomorrow(local_day: date) -> FakeChatModel:
    """The model's reply to SAID said on ``local_day``: due the next local day."""
    due = (local_day + timedelta(days=1)).isoformat()
    return FakeChatModel(
        responses=[reply(fact("Quarterly report due", "todo", SAID, valid_until=due))]
    )


def end_of_local_day(day: date, zone: ZoneInfo) -> datetime:
    return datetime.combine(day + timedelta(days=1), datetime.min.time(), zone).astimezone(UTC)


@pytest.mark.parametrize(
    ("zone", "local"),
    [
        ("Asia/Shanghai", datetime(2026, 12, 1, 23, 30)),  # 15:30 UTC, the same date
        ("Asia/Shanghai", datetime(2026, 12, 2, 0, 30)),  # 16:30 UTC on the day before
        ("America/New_York", datetime(2026, 12, 2, 0, 30)),  # 05:30 UTC, the same date
        ("America/New_York", datetime(2026, 12, 1, 23, 30)),  # 04:30 UTC on the day after
    ],
)
def test_due_tomorrow_ends_with_the_users_next_day_at_a_day_boundary(
    memory: Memory, clock: Clock, zone: str, local: datetime
) -> None:
    tz = ZoneInfo(zone)
    clock.now = local.replace(tzinfo=tz).timestamp()
    model = due_tomorrow(local.date())
    pipeline = ExtractionPipeline(
        memory.repository, model, memory.config, clock=clock, background=False
    )
    pipeline.observe([HumanMessage(SAID, id="m1")], user_id="ada", thread_id="t1", timezone=zone)
    (report,) = pipeline.run_due()
    pipeline.close(timeout=5)
    assert today_in_prompt(model) == local.date().isoformat()
    (added,) = report.added
    assert added.fact.valid_until == end_of_local_day(local.date() + timedelta(days=1), tz)
    assert memory.get(added.fact.id).valid_until == added.fact.valid_until


def test_a_window_extracted_a_day_later_counts_from_the_day_it_was_said(
    home: Path, memory: Memory, clock: Clock
) -> None:
    tz = ZoneInfo("Asia/Shanghai")
    said = datetime(2026, 12, 1, 23, 30, tzinfo=tz)
    clock.now = said.timestamp()
    # Queued by a process without a model, extracted by another one a day and more later.
    queuing = ExtractionPipeline(memory.repository, None, memory.config, clock=clock)
    queuing.observe(
        [HumanMessage("The quarterly report is due tomorrow", id="m1")],
        user_id="ada", thread_id="t1", timezone="Asia/Shanghai",
    )  # fmt: skip
    queuing.close(timeout=1)
    clock.now += 30 * 3600
    model = FakeChatModel(responses=[reply(fact("Quarterly report due", "todo",
        "The quarterly report is due tomorrow", valid_until="2026-12-02"))])  # fmt: skip
    later = ExtractionPipeline(
        memory.repository, model, memory.config, clock=clock, background=False
    )
    (report,) = later.run_due()
    later.close(timeout=5)
    assert today_in_prompt(model) == "2026-12-01"  # not 2026-12-03, the day it ran
    assert report.added[0].fact.valid_until == datetime(2026, 12, 2, 16, tzinfo=UTC)


def test_the_facade_takes_the_timezone_by_name_or_tzinfo(make_memory: MemoryFactory) -> None:
    memory, model = make_memory([reply(fact("Flies to Berlin", "context", "I fly to Berlin",
                                            valid_until="2031-01-01"))] * 2)  # fmt: skip
    before = datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat()
    report = memory.extract([HumanMessage("I fly to Berlin", id="m1")], user_id="ada",
                            thread_id="t1", timezone="Asia/Shanghai")  # fmt: skip
    after = datetime.now(ZoneInfo("Asia/Shanghai")).date().isoformat()
    assert today_in_prompt(model) in {before, after}
    assert report.added[0].fact.valid_until == datetime(2031, 1, 1, 16, tzinfo=UTC)
    memory.observe([HumanMessage("I fly to Berlin", id="m2")], user_id="bob", thread_id="t1",
                   timezone=ZoneInfo("America/New_York"))  # fmt: skip
    (flushed,) = memory.flush(timeout=10)
    assert flushed.added[0].fact.valid_until == datetime(2031, 1, 2, 5, tzinfo=UTC)


def test_a_bad_timezone_is_refused_before_anything_is_queued(make_memory: MemoryFactory) -> None:
    memory, model = make_memory()
    with pytest.raises(InvalidInputError, match=r"unknown timezone 'Mars/Olympus'.*IANA"):
        memory.observe([HumanMessage("Due tomorrow", id="m1")], user_id="ada", thread_id="t1",
                       timezone="Mars/Olympus")  # fmt: skip
    with pytest.raises(InvalidInputError, match="IANA"):
        memory.extract([HumanMessage("Due tomorrow", id="m1")], user_id="ada", thread_id="t1",
                       timezone="")  # fmt: skip
    assert memory.queue.pending() == [] and model.calls == 0


_OLD_SCHEMA = """
CREATE TABLE threads (
  key TEXT PRIMARY KEY, user_id TEXT NOT NULL, agent_id TEXT, thread_id TEXT NOT NULL,
  next_seq INTEGER NOT NULL DEFAULT 1, watermark INTEGER NOT NULL DEFAULT 0,
  first_pending_at REAL, last_observed_at REAL,
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL, last_error TEXT,
  lease_owner TEXT, lease_until REAL, window_hi INTEGER, journal TEXT);
CREATE TABLE messages (
  key TEXT NOT NULL, seq INTEGER NOT NULL, msg_id TEXT NOT NULL, role TEXT NOT NULL,
  content TEXT, urgent INTEGER NOT NULL DEFAULT 0, observed_at REAL NOT NULL,
  PRIMARY KEY (key, seq), UNIQUE (key, msg_id));
CREATE TABLE dead_letters (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, user_id TEXT NOT NULL,
  agent_id TEXT, thread_id TEXT NOT NULL, messages TEXT NOT NULL, reason TEXT NOT NULL,
  attempts INTEGER NOT NULL, at REAL NOT NULL);
"""


def _write_old_queue(path: Path, said_at: float) -> None:
    """A queue file as the release before zones wrote it: one pending message, one dead letter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(_OLD_SCHEMA)
    key = '["ada", null, "t1"]'
    db.execute(
        "INSERT INTO threads (key, user_id, agent_id, thread_id, next_seq, watermark, "
        "first_pending_at, last_observed_at) VALUES (?, 'ada', NULL, 't1', 2, 0, ?, ?)",
        (key, said_at, said_at),
    )
    db.execute("INSERT INTO messages VALUES (?, 1, 'm1', 'user', ?, 0, ?)",
               (key, "The report is due tomorrow", said_at))  # fmt: skip
    db.execute(
        "INSERT INTO dead_letters (key, user_id, agent_id, thread_id, messages, reason, "
        "attempts, at) VALUES (?, 'ada', NULL, 't0', ?, 'model down', 5, ?)",
        (key, '[{"id": "d1", "role": "user", "content": "I use Vim"}]', said_at),
    )
    db.commit()
    db.close()


def test_an_old_queue_file_opens_gains_the_column_and_its_windows_extract_in_utc(
    home: Path, clock: Clock
) -> None:
    config = MemoryConfig(home=home)
    said = datetime(2026, 12, 1, 23, 30, tzinfo=UTC)
    _write_old_queue(config.queue_path, said.timestamp())
    clock.now = said.timestamp() + 3600
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        model = FakeChatModel(responses=[reply(fact("Report due", "todo",
            "The report is due tomorrow", valid_until="2026-12-02"))])  # fmt: skip
        pipeline = ExtractionPipeline(memory.repository, model, config, clock=clock,
                                      background=False)  # fmt: skip
        (report,) = pipeline.run_due()
        assert today_in_prompt(model) == "2026-12-01"
        assert report.added[0].fact.valid_until == datetime(2026, 12, 3, tzinfo=UTC)
        (letter,) = pipeline.backlog.dead_letters()
        pipeline.backlog.retry_dead_letter(letter.id)
        assert [m.content for e in pipeline.backlog.pending() for m in e.messages] == ["I use Vim"]
        pipeline.close(timeout=0)  # the retried letter stays queued
    columns = {
        table: {row[1] for row in sqlite3.connect(config.queue_path).execute(
            f"PRAGMA table_info({table})")}
        for table in ("messages", "dead_letters")
    }  # fmt: skip
    assert "timezone" in columns["messages"] and "timezone" in columns["dead_letters"]
    assert "said_at" in columns["messages"]
