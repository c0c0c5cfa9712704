"""Expiry on real Chroma: valid_until taken by every write, out of recall at once."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from recallmem import Memory, Status
from recallmem.errors import InvalidInputError


def recalled(memory: Memory, query: str, **kwargs: object) -> list[str]:
    return [h.fact.content for h in memory.recall(query, user_id="ada", **kwargs)]  # type: ignore[arg-type]


def test_a_fact_leaves_recall_when_its_time_passes_without_maintenance(memory: Memory) -> None:
    soon = datetime.now(UTC) + timedelta(seconds=1.5)
    memory.remember("Is in Tokyo this week", user_id="ada", category="context", valid_until=soon)
    assert recalled(memory, "Tokyo") == ["Is in Tokyo this week"]
    time.sleep(1.6)
    assert recalled(memory, "Tokyo") == []
    assert recalled(memory, "Tokyo", include_inactive=True) == ["Is in Tokyo this week"]


def test_a_past_valid_until_stores_the_fact_already_expired(memory: Memory) -> None:
    fact = memory.remember("Had a dentist appointment on Monday", user_id="ada",
                           category="todo", valid_until="2020-01-06T09:00:00+01:00")  # fmt: skip
    assert fact.valid_until == datetime(2020, 1, 6, 8, tzinfo=UTC)
    assert recalled(memory, "dentist appointment") == []
    report = memory.maintain(user_id="ada")
    assert report.expired == (fact.id,)
    assert memory.get(fact.id).status is Status.EXPIRED
    assert memory.maintain(user_id="ada").expired == ()


def test_valid_until_is_resolved_to_utc_from_any_zone(memory: Memory) -> None:
    local = datetime(2031, 3, 1, 18, tzinfo=ZoneInfo("Asia/Shanghai"))
    (fact,) = memory.remember_many(
        [{"content": "Renew the passport", "category": "todo", "valid_until": local}],
        user_id="ada",
    )
    assert fact.valid_until == datetime(2031, 3, 1, 10, tzinfo=UTC)
    assert memory.get(fact.id).valid_until == fact.valid_until  # through Chroma and back


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (datetime(2031, 3, 1, 18), "has no time zone"),
        ("2031-03-01T18:00:00", "has no time zone"),
        ("next friday", "not an ISO 8601 time"),
        (1234567890, "must be a datetime or an ISO 8601 string"),
        # In UTC, past the year 9999 and before the year 1: out of range, not an overflow.
        ("9999-12-31T23:00:00-05:00", "from 1900-01-01 up to .* 9999-01-01"),
        ("0001-01-01T00:30:00+01:00", "from 1900-01-01 up to .* 9999-01-01"),
        (datetime(9999, 12, 31, 23, tzinfo=ZoneInfo("America/New_York")), "out of range"),
    ],
)
def test_a_bad_valid_until_is_refused_with_what_to_do(
    memory: Memory, value: object, says: str
) -> None:
    with pytest.raises(InvalidInputError, match=says):
        memory.remember("Renew the passport", user_id="ada", category="todo",
                        valid_until=value)  # type: ignore[arg-type]  # fmt: skip
    assert memory.list(user_id="ada", status=None) == []


def test_saying_a_todo_again_with_a_new_date_moves_its_valid_until(memory: Memory) -> None:
    # Both dates ahead of the real clock whenever this runs: a todo whose date has passed
    # is out of the duplicate check at once, so saying it again would add a second todo.
    first = (datetime.now(UTC) + timedelta(days=90)).replace(microsecond=0)
    later = first + timedelta(days=7)
    a = memory.remember("Send the grant proposal", user_id="ada", category="todo",
                        valid_until=first)  # fmt: skip
    b = memory.remember("Send the grant proposal", user_id="ada", category="todo",
                        valid_until=later)  # fmt: skip
    assert a.id == b.id and b.valid_until == later and b.confirmations == 1


def test_exports_carry_the_new_fields_and_older_exports_still_import(memory: Memory) -> None:
    fact = memory.remember("Send the grant proposal", user_id="ada", category="todo",
                           valid_until=datetime(2020, 1, 1, tzinfo=UTC))  # fmt: skip
    memory.maintain(user_id="ada")
    exported = memory.export(user_id="ada")
    (row,) = exported["facts"]
    assert row["valid_until"] == "2020-01-01T00:00:00Z" and row["status"] == "expired"
    memory.forget(fact.id, purge=True)
    memory.import_(exported)
    assert memory.get(fact.id).status is Status.EXPIRED
    older = {**exported, "user_id": "bob", "facts": [
        {k: v for k, v in row.items() if k != "valid_until"}
        | {"id": "old-row", "user_id": "bob", "status": "active"}
    ]}  # fmt: skip
    memory.import_(older)
    assert memory.get("old-row").valid_until is None


def test_an_expired_fact_comes_back_with_a_later_valid_until(memory: Memory) -> None:
    fact = memory.remember("Trip to Lisbon", user_id="ada", category="context",
                           valid_until=datetime(2020, 1, 1, tzinfo=UTC))  # fmt: skip
    memory.maintain(user_id="ada")
    later = datetime.now(UTC) + timedelta(days=3)
    back = memory.update(fact.id, status="active", valid_until=later)
    assert back.status is Status.ACTIVE and back.valid_until == later
    assert recalled(memory, "Trip to Lisbon") == ["Trip to Lisbon"]
    assert memory.maintain(user_id="ada").expired == ()
    with pytest.raises(InvalidInputError, match="has no time zone"):
        memory.update(fact.id, valid_until="2031-01-01T00:00")


def test_an_edit_to_a_valid_until_past_the_calendar_is_refused(memory: Memory) -> None:
    fact = memory.remember("Passport renewal", user_id="ada", category="todo")
    with pytest.raises(InvalidInputError, match="holds for good takes no valid_until"):
        memory.update(fact.id, user_id="ada", valid_until="9999-12-31T23:00:00-05:00")
    assert memory.get(fact.id, user_id="ada").valid_until is None
