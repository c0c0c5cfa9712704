"""The user's timezone as the queue stores it, and the window it comes back with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from recallmem.errors import InvalidInputError
from recallmem.extraction.threads import Utterance, stored_zone, zone_name
from recallmem.extraction.window_queue import QueueStore, ThreadScope, Timing

MOMENT = datetime(2026, 3, 8, 6, 30, tzinfo=UTC)  # New York springs forward that day


@pytest.mark.parametrize(
    "zone",
    ["Asia/Shanghai", ZoneInfo("America/New_York"), UTC, timezone(timedelta(hours=-3.5)),
     timezone(timedelta(hours=5, minutes=45)), "UTC"],
)  # fmt: skip
def test_a_stored_zone_reads_back_as_the_same_offsets(zone: str | tzinfo) -> None:
    given = ZoneInfo(zone) if isinstance(zone, str) else zone
    back = stored_zone(zone_name(zone))
    for hours in range(0, 48, 5):
        at = MOMENT + timedelta(hours=hours)
        assert at.astimezone(back).utcoffset() == at.astimezone(given).utcoffset()


def test_a_zone_that_cannot_be_named_is_refused_with_what_to_pass() -> None:
    class Odd(tzinfo):
        def utcoffset(self, dt: datetime | None) -> timedelta:
            return timedelta(hours=1)

    with pytest.raises(InvalidInputError, match="IANA name such as 'Asia/Shanghai'"):
        zone_name(Odd())
    with pytest.raises(InvalidInputError, match="unknown timezone"):
        zone_name("Nowhere/Atlantis")


def test_a_window_has_its_last_messages_zone_and_time(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    queue = QueueStore(tmp_path / "q.sqlite3", Timing(), clock=lambda: now[0])
    scope = ThreadScope(user_id="u1", thread_id="t1")
    queue.add(scope, [Utterance(id="a", role="user", content="in Paris")])
    now[0] += 60
    moved = ThreadScope(user_id="u1", thread_id="t1", timezone="Asia/Tokyo")
    queue.add(moved, [Utterance(id="b", role="user", content="landed in Tokyo")])
    now[0] += 3600
    window = queue.claim(force=True)
    assert window is not None and window.scope.key == scope.key
    assert window.scope.timezone == "Asia/Tokyo" and window.said_at == 1_800_000_060.0
    assert window.said == datetime.fromtimestamp(1_800_000_060.0, ZoneInfo("Asia/Tokyo"))
    queue.close()
