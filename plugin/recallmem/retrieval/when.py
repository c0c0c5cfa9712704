"""The time a query talks about: "on 13 October 2023", "in June", "last week", "去年".

Pure and model-free. A query naming a date, a month or a year is asking about what was
said then; ranking favours facts said in that window (``ranking.time_match``). English
and Chinese, absolute and relative to ``now`` (the words are data, in
``prompts/time_words.yaml``); anything else names no window. Days, weeks, months and
years are the user's: they start at midnight in ``now``'s timezone (give ``now`` in the
user's zone; a naive ``now`` is taken as UTC), so "yesterday" asked at 23:30 in Shanghai
is the Shanghai day before, whatever the date in UTC.

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

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from recallmem.errors import InvalidInputError
from recallmem.retrieval.time_words import TIME_WORDS as _WORDS


@dataclass(frozen=True)
class TimeWindow:
    """A span of time, ``[start, end)``, or a month of any year (``month``, 1-12, in the
    zone ``utc_offset`` seconds east of UTC)."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    utc_offset: float = 0.0


def _day(year: int, month: int, day: int, zone: tzinfo) -> TimeWindow | None:
    try:
        start = datetime(year, month, day, tzinfo=zone)
    except ValueError:
        return None  # "31 February" names no day
    return TimeWindow(start, _add_days(start, 1))


def _add_days(start: datetime, days: int) -> datetime:
    # Wall-clock arithmetic, so a day across a daylight-saving change still ends at midnight.
    moved = start.replace(tzinfo=None) + timedelta(days=days)
    return moved.replace(tzinfo=start.tzinfo)


def _month(year: int, month: int, zone: tzinfo) -> TimeWindow | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=zone)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=zone)
    return TimeWindow(start, end)


def _year(year: int, zone: tzinfo) -> TimeWindow:
    return TimeWindow(datetime(year, 1, 1, tzinfo=zone), datetime(year + 1, 1, 1, tzinfo=zone))


def _relative(unit: str, offset: int, now: datetime) -> TimeWindow:
    zone = now.tzinfo or UTC
    today = datetime(now.year, now.month, now.day, tzinfo=zone)
    if unit == "day":
        start = _add_days(today, offset)
        return TimeWindow(start, _add_days(start, 1))
    if unit == "week":
        start = _add_days(today, 7 * offset - today.weekday())
        return TimeWindow(start, _add_days(start, 7))
    if unit == "month":
        index = today.year * 12 + today.month - 1 + offset
        window = _month(index // 12, index % 12 + 1, zone)
        assert window is not None  # a computed month is always valid
        return window
    return _year(today.year + offset, zone)


def _absolute(text: str, zone: tzinfo) -> TimeWindow | None:
    if match := _WORDS.day_month_year.search(text):
        day, month, year = match.groups()
        return _day(int(year), _WORDS.month_of[month], int(day), zone)
    if match := _WORDS.month_day_year.search(text):
        month, day, year = match.groups()
        return _day(int(year), _WORDS.month_of[month], int(day), zone)
    if match := _WORDS.zh_date.search(text):
        year, month, day = match.groups()
        if day:
            return _day(int(year), int(month), int(day), zone)
        return _month(int(year), int(month), zone)
    if match := _WORDS.month_year.search(text):
        month, year = match.groups()
        return _month(int(year), _WORDS.month_of[month], zone)
    return None


def _offset(now: datetime) -> float:
    delta = now.utcoffset()
    return delta.total_seconds() if delta is not None else 0.0


def mentioned_window(text: str, now: datetime) -> TimeWindow | None:
    """The first time window ``text`` names, most specific form first; None if none.

    Windows are in ``now``'s timezone (UTC for a naive ``now``)."""
    zone = now.tzinfo or UTC
    lowered = text.lower()
    window = _absolute(lowered, zone)
    if window is not None:
        return window
    for phrase in _WORDS.relative:
        if phrase.pattern.search(lowered):
            return _relative(phrase.unit, phrase.offset, now)
    if match := _WORDS.year_alone.search(lowered):
        return _year(int(match.group(1) or match.group(2)), zone)
    if match := _WORDS.in_month.search(lowered):
        return TimeWindow(month=_WORDS.month_of[match.group(1)], utc_offset=_offset(now))
    if (match := _WORDS.zh_month.search(lowered)) and 1 <= int(match.group(1)) <= 12:
        return TimeWindow(month=int(match.group(1)), utc_offset=_offset(now))
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
