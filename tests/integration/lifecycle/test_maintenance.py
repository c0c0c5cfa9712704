"""Maintenance on real Chroma: idempotent, journaled through a crash, evented, scheduled."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from recallmem import Fact, Memory, MemoryConfig, Status
from recallmem.errors import InvalidInputError
from recallmem.testing import FakeChatModel, HashingEmbeddings

PAST = datetime(2020, 1, 1, tzinfo=UTC)


class CrashError(Exception):
    """Stands for the process dying at this point."""


def seed(memory: Memory) -> tuple[Fact, Fact, Fact]:
    old = datetime.now(UTC) - timedelta(days=400)
    expired = memory.remember("Trip to Lisbon", user_id="ada", category="context",
                              valid_until=PAST)  # fmt: skip
    stale = Fact(content="Tried the Zed editor once", category="context", user_id="ada",
                 created_at=old, updated_at=old)  # fmt: skip
    pinned = stale.model_copy(update={"id": "pinned", "content": "Blood type 0", "pinned": True})
    memory.put([stale, pinned])
    return expired, stale, pinned


def history_reasons(memory: Memory, fact_id: str) -> list[str]:
    return [r.reason or "" for r in memory.get(fact_id).history]


def test_a_second_run_at_the_same_now_changes_nothing(memory: Memory) -> None:
    expired, stale, pinned = seed(memory)
    now = datetime.now(UTC)
    first = memory.maintain(now=now)
    assert (first.expired, first.faded, first.consolidated) == ((expired.id,), (stale.id,), ())
    revision = memory.revision("ada")
    second = memory.maintain(now=now)
    assert second.counts() == {"expired": 0, "faded": 0, "purged": 0, "consolidated": 0,
                               "keyed": 0}  # fmt: skip
    assert memory.revision("ada") == revision  # nothing was written
    assert memory.get(pinned.id).status is Status.ACTIVE


def test_a_crash_between_journal_and_apply_loses_nothing(
    home: Path, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    expired, stale, _ = seed(memory)
    now = datetime.now(UTC)

    def crash(*args: object, **kwargs: object) -> None:
        raise CrashError

    monkeypatch.setattr(memory.repository, "revise", crash)
    with pytest.raises(CrashError):
        memory.maintain(now=now, user_id="ada")
    assert memory.lifecycle.journal.pending("ada") is not None
    assert memory.get(expired.id).status is Status.ACTIVE  # nothing applied yet
    memory.close()

    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as again:
        report = again.maintain(now=now + timedelta(minutes=1), user_id="ada")
        assert report.replayed == 1
        assert set(report.expired) == {expired.id} and set(report.faded) == {stale.id}
        assert again.get(expired.id).status is Status.EXPIRED
        assert again.lifecycle.journal.pending("ada") is None


def test_a_crash_after_apply_applies_nothing_twice(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    expired, stale, _ = seed(memory)
    now = datetime.now(UTC)
    journal = memory.lifecycle.journal
    done = journal.done

    def crash(*args: object, **kwargs: object) -> None:
        raise CrashError

    monkeypatch.setattr(journal, "done", crash)
    with pytest.raises(CrashError):
        memory.maintain(now=now, user_id="ada")
    monkeypatch.setattr(journal, "done", done)
    replay = memory.maintain(now=now, user_id="ada")
    assert replay.replayed == 1 and replay.counts()["expired"] == 0
    assert [r for r in history_reasons(memory, expired.id) if r.startswith("expired")] == [
        "expired: valid until 2020-01-01T00:00:00+00:00"
    ]
    assert len([r for r in history_reasons(memory, stale.id) if r.startswith("faded")]) == 1


def test_every_change_is_an_event(memory: Memory, caplog: pytest.LogCaptureFixture) -> None:
    expired, stale, _ = seed(memory)
    with caplog.at_level(logging.INFO, logger="recallmem.events"):
        memory.maintain(user_id="ada")
        memory.maintain(user_id="ada")
    events = [r.data for r in caplog.records if getattr(r, "event", "") == "memory_maintenance"]
    assert events == [
        {"user_id": "ada", "expired": [expired.id], "faded": [stale.id], "purged": [],
         "consolidated": [], "replayed": False}
    ]  # fmt: skip


def test_without_a_user_every_user_is_maintained(memory: Memory) -> None:
    for user in ("ada", "bob"):
        memory.remember("Trip to Lisbon", user_id=user, category="context", valid_until=PAST)
    report = memory.maintain()
    assert report.users == ("ada", "bob") and len(report.expired) == 2


def test_now_must_be_timezone_aware(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="timezone-aware"):
        memory.maintain(now=datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("now", "says"),
    [
        (datetime(9000, 1, 1, tzinfo=UTC), "days ahead of the current time"),
        (datetime.now(UTC) - timedelta(days=3), "3 days behind the current time"),
        (datetime(1, 1, 1, tzinfo=UTC), "out of range"),
        (datetime(9999, 12, 31, tzinfo=UTC), "out of range"),
    ],
)
def test_a_now_far_from_the_clock_is_refused_and_changes_nothing(
    memory: Memory, now: datetime, says: str
) -> None:
    _, stale, _ = seed(memory)
    revision = memory.revision("ada")
    with pytest.raises(InvalidInputError, match=says):
        memory.maintain(now=now, user_id="ada")
    assert memory.revision("ada") == revision
    assert memory.get(stale.id).status is Status.ACTIVE


def test_a_simulated_clock_may_run_ahead_but_stays_in_the_calendar(memory: Memory) -> None:
    _, stale, pinned = seed(memory)
    ahead = datetime.now(UTC) + timedelta(days=200)
    report = memory.maintain(now=ahead, user_id="ada", simulated_clock=True)
    assert stale.id in report.faded and memory.get(pinned.id).status is Status.ACTIVE
    with pytest.raises(InvalidInputError, match="out of range"):
        memory.maintain(now=datetime(9999, 12, 31, tzinfo=UTC), simulated_clock=True)
    with pytest.raises(InvalidInputError, match="simulated_clock must be True or False"):
        memory.maintain(now=ahead, simulated_clock="yes")  # type: ignore[arg-type]


def test_the_worker_maintains_active_users_about_once_a_day(memory: Memory) -> None:
    memory.observe([{"role": "user", "content": "I am in Lisbon"}], user_id="ada",
                   thread_id="t1")  # fmt: skip
    memory.remember("Trip to Lisbon", user_id="ada", category="context", valid_until=PAST)
    memory.remember("Trip to Porto", user_id="idle", category="context", valid_until=PAST)
    maintainer = memory.lifecycle
    now = datetime.now(UTC)
    assert maintainer.run_due(now).users == ("ada",)  # "idle" never talked
    assert maintainer.run_due(now + timedelta(hours=1)).users == ()
    assert maintainer.run_due(now + timedelta(days=2)).users == ()  # nothing said since
    memory.observe([{"role": "user", "content": "Back home"}], user_id="ada", thread_id="t1")
    assert maintainer.run_due(now + timedelta(hours=2)).users == ()  # not a day yet
    assert maintainer.run_due(now + timedelta(days=1, hours=1)).users == ("ada",)


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("[" * 10_000, "Error"),
        ("Sorry, I cannot help with that.", "ExtractionError: "),
        (TimeoutError("read timed out"), "TimeoutError: read timed out"),
    ],
    ids=["nested", "prose", "provider-error"],
)
def test_one_users_failed_consolidation_stops_no_one_elses_maintenance(
    home: Path, reply: str | Exception, error: str
) -> None:
    model = FakeChatModel(responses=[reply] * 4)
    # Consolidation alone: the keying step would ask the same model (lifecycle/keying.py).
    config = MemoryConfig(home=home, consolidation_similarity=0.2, keying_max_facts=0)
    with Memory(config, embeddings=HashingEmbeddings(), model=model) as memory:
        memory.remember("Uses React for the front end", user_id="aaa", category="knowledge")
        memory.remember("Works on the front end team", user_id="aaa", category="knowledge")
        trip = memory.remember("In Lisbon this week", user_id="zed", category="context",
                               valid_until=PAST)  # fmt: skip
        report = memory.maintain()
        assert report.expired == (trip.id,) and memory.get(trip.id).status is Status.EXPIRED
        [failed] = report.unconsolidated
        assert failed.user_id == "aaa" and error in failed.error
        assert len(model.requests) == 1  # zed had nothing to merge: one call, aaa's
        again = memory.maintain()  # aaa's consolidation is owed: tried again, still failing
        assert [u.user_id for u in again.unconsolidated] == ["aaa"]
        assert len(memory.list(user_id="aaa")) == 2  # nothing merged, nothing lost
