"""The time a query talks about: "on 13 October 2023", "in June", "last week", "去年".

Pure and model-free. A query naming a date, a month or a year is asking about what was
said then; ranking favours facts said in that window (``ranking.time_match``). English
and Chinese, absolute and relative to ``now``; anything else names no window. Days,
weeks, months and years are the user's: they start at midnight in ``now``'s timezone
(give ``now`` in the user's zone; a naive ``now`` is taken as UTC), so "yesterday" asked
at 23:30 in Shanghai is the Shanghai day before, whatever the date in UTC.

>>> from datetime import UTC, datetime
>>> now = datetime(2024, 3, 15, tzinfo=UTC)
>>> mentioned_window("What did Gina find on 1 February, 2023?", now).start.date()
datetime.date(2023, 2, 1)
>>> mentioned_window("When did Melanie go camping in June?", now).month
6
>>> mentioned_window("我去年去了哪里？", now).start.year
2023
>>> mentioned_window("What is my favourite colour?", now) is None
True
>>> from zoneinfo import ZoneInfo
>>> late = datetime(2024, 3, 15, 15, 30, tzinfo=UTC).astimezone(ZoneInfo("Asia/Shanghai"))
>>> mentioned_window("昨天", late).start.isoformat()
'2024-03-14T00:00:00+08:00'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from recallmem.errors import InvalidInputError

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH_OF = {name: i + 1 for i, name in enumerate(_MONTHS)} | {
    name[:3]: i + 1 for i, name in enumerate(_MONTHS) if name != "may"
}
_MON = r"(" + "|".join(sorted(_MONTH_OF, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)(?!\d)"

_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}")
_MONTH_DAY_YEAR = re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}")
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+(?:of\s+)?{_YEAR}")
_ZH_DATE = re.compile(r"((?:19|20)\d\d)\s*年\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?")
_ZH_MONTH = re.compile(r"(?<![\d年])(\d{1,2})\s*月(?:\s*\d{1,2}\s*[日号])?")
# A bare number is a year only when introduced as one: "in 2023", "2023年", not "2000 dollars".
_YEAR_ALONE = re.compile(rf"\b(?:in|since|during|of|by|before|after|year)\s+{_YEAR}|{_YEAR}\s*年")
_IN_MONTH = re.compile(rf"\b(?:in|during|since|last|this|of)\s+{_MON}\b")

_RELATIVE = (
    (re.compile(r"\byesterday\b|昨天"), "day", -1),
    (re.compile(r"\btoday\b|今天"), "day", 0),
    (re.compile(r"\blast week\b|上周|上个?星期|上个?礼拜"), "week", -1),
    (re.compile(r"\bthis week\b|这周|本周|这个?星期"), "week", 0),
    (re.compile(r"\blast month\b|上个?月"), "month", -1),
    (re.compile(r"\bthis month\b|这个月|本月"), "month", 0),
    (re.compile(r"\blast year\b|去年"), "year", -1),
    (re.compile(r"\bthis year\b|今年"), "year", 0),
)


@dataclass(frozen=True)
class Window:
    """A span of time, ``[start, end)``, or a month of any year (``month``, 1-12, in the
    zone ``utc_offset`` seconds east of UTC)."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    utc_offset: float = 0.0


def _day(year: int, month: int, day: int, zone: tzinfo) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=zone)
    except ValueError:
        return None  # "31 February" names no day
    return Window(start, _add_days(start, 1))


def _add_days(start: datetime, days: int) -> datetime:
    # Wall-clock arithmetic, so a day across a daylight-saving change still ends at midnight.
    moved = start.replace(tzinfo=None) + timedelta(days=days)
    return moved.replace(tzinfo=start.tzinfo)


def _month(year: int, month: int, zone: tzinfo) -> Window | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=zone)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=zone)
    return Window(start, end)


def _year(year: int, zone: tzinfo) -> Window:
    return Window(datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone))


def _relative(unit: str, offset: int, now: datetime) -> Window:
    zone = now.tzinfo or UTC
    today = datetime(now.year, now.month, now.day, tzinfo=zone)
    if unit == "day":
        start = _add_days(today, offset)
        return Window(start, _add_days(start, 1))
    if unit == "week":
        start = _add_days(today, 7 * offset - today.weekday())
        return Window(start, _add_days(start, 7))
    if unit == "month":
        index = today.year * 12 + today.month - 1 + offset
        window = _month(index // 12, index % 12 + 1, zone)
        assert window is not None  # a computed month is always valid
        return window
    return _year(today.year + offset, zone)


def _absolute(text: str, zone: tzinfo) -> Window | None:
    if match := _DAY_MONTH_YEAR.search(text):
        day, month, year = match.groups()
        return _day(int(year), _MONTH_OF[month], int(day), zone)
    if match := _MONTH_DAY_YEAR.search(text):
        month, day, year = match.groups()
        return _day(int(year), _MONTH_OF[month], int(day), zone)
    if match := _ZH_DATE.search(text):
        year, month, day = match.groups()
        if day:
            return _day(int(year), int(month), int(day), zone)
        return _month(int(year), int(month), zone)
    if match := _MONTH_YEAR.search(text):
        month, year = match.groups()
        return _month(int(year), _MONTH_OF[month], zone)
    return None


def _offset(now: datetime) -> float:
    delta = now.utcoffset()
    return delta.total_seconds() if delta is not None else 0.0


def mentioned_window(text: str, now: datetime) -> Window | None:
    """The first time window ``text`` names, most specific form first; None if none.

    Windows are in ``now``'s timezone (UTC for a naive ``now``)."""
    zone = now.tzinfo or UTC
    lowered = text.lower()
    window = _absolute(lowered, zone)
    if window is not None:
        return window
    for pattern, unit, offset in _RELATIVE:
        if pattern.search(lowered):
            return _relative(unit, offset, now)
    if match := _YEAR_ALONE.search(lowered):
        return _year(int(match.group(1) or match.group(2)), zone)
    if match := _IN_MONTH.search(lowered):
        return Window(month=_MONTH_OF[match.group(1)], utc_offset=_offset(now))
    if (match := _ZH_MONTH.search(lowered)) and 1 <= int(match.group(1)) <= 12:
        return Window(month=int(match.group(1)), utc_offset=_offset(now))
    return None


def user_zone(timezone: str | tzinfo | None) -> tzinfo:
    """The user's timezone from an IANA name ("Asia/Shanghai") or a ``tzinfo``; UTC if None.

    >>> str(user_zone("Asia/Shanghai")), user_zone(None)
    ('Asia/Shanghai', datetime.timezone.utc)
    """
    if timezone is None or isinstance(timezone, tzinfo):
        return timezone or UTC
    if not isinstance(timezone, str) or not timezone.strip():
        raise InvalidInputError(
            f"timezone must be an IANA name such as 'Asia/Shanghai', got {timezone!r}"
        )
    try:
        return ZoneInfo(timezone.strip())
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise InvalidInputError(
            f"unknown timezone {timezone!r}: use an IANA name such as 'Asia/Shanghai' or 'UTC'"
        ) from error
