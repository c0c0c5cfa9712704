"""Times in the user's timezone: days begin at the user's midnight, stored times stay UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from recallmem.errors import InvalidInputError
from recallmem.retrieval.ranking import time_match
from recallmem.retrieval.when import mentioned_window, user_zone

SHANGHAI, NEW_YORK = ZoneInfo("Asia/Shanghai"), ZoneInfo("America/New_York")


def _said(*moments: datetime) -> np.ndarray:
    return np.array([m.timestamp() for m in moments])


def test_today_at_23_30_in_utc_plus_8_is_the_local_day_not_the_utc_one() -> None:
    now = datetime(2026, 3, 10, 15, 30, tzinfo=UTC).astimezone(SHANGHAI)  # 23:30 local
    window = mentioned_window("我今天做了什么", now)
    assert window is not None and window.start is not None
    assert window.start == datetime(2026, 3, 10, tzinfo=SHANGHAI)
    # 17:00 UTC on the 9th is 01:00 on the 10th in Shanghai: said "today" there.
    said = _said(datetime(2026, 3, 9, 17, tzinfo=UTC), datetime(2026, 3, 9, 15, tzinfo=UTC))
    assert time_match(said, window, 0.0).tolist() == [1.0, 0.0]


def test_yesterday_at_00_30_in_utc_minus_5_is_the_local_day_before() -> None:
    now = datetime(2026, 1, 15, 5, 30, tzinfo=UTC).astimezone(NEW_YORK)  # 00:30 local
    window = mentioned_window("what did I say yesterday?", now)
    assert window is not None and window.start is not None and window.end is not None
    assert window.start == datetime(2026, 1, 14, tzinfo=NEW_YORK)
    assert window.end == datetime(2026, 1, 15, tzinfo=NEW_YORK)
    # In UTC "yesterday" would be the 14th UTC; 03:00 UTC on the 15th is still the 14th here.
    said = _said(datetime(2026, 1, 15, 3, tzinfo=UTC), datetime(2026, 1, 14, 3, tzinfo=UTC))
    assert time_match(said, window, 0.0).tolist() == [1.0, 0.0]


def test_last_week_and_a_month_follow_the_user_zone() -> None:
    now = datetime(2026, 3, 1, 16, 30, tzinfo=UTC).astimezone(SHANGHAI)  # Mon 2 Mar, 00:30
    window = mentioned_window("上周我去了哪里", now)
    assert window is not None and window.start == datetime(2026, 2, 23, tzinfo=SHANGHAI)
    month = mentioned_window("我三月份说过什么, 3月", now)
    assert month is not None and month.month == 3
    # 20:00 UTC on 28 February is 04:00 on 1 March in Shanghai.
    said = _said(datetime(2026, 2, 28, 20, tzinfo=UTC))
    assert time_match(said, month, 0.0).tolist() == [1.0]


def test_unknown_or_malformed_zones_are_refused_with_what_to_use() -> None:
    assert user_zone(None) is UTC and user_zone(SHANGHAI) is SHANGHAI
    with pytest.raises(InvalidInputError, match="IANA name"):
        user_zone("Mars/Olympus")
    with pytest.raises(InvalidInputError, match="IANA name"):
        user_zone(8)  # type: ignore[arg-type]
