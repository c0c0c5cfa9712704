"""The time a query talks about: "on 13 October 2023", "in June", "last week", "去年".

Pure and model-free. A query naming a date, a month or a year is asking about what was
said then; ranking favours facts said in that window (``ranking.time_match``). English
and Chinese, absolute and relative to ``now``; anything else names no window.

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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

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
    """A span of time, ``[start, end)``, or a month of any year (``month``, 1-12)."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None  # "31 February" names no day
    return Window(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Window | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return Window(start, end)


def _year(year: int) -> Window:
    return Window(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))


def _relative(unit: str, offset: int, now: datetime) -> Window:
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        start = today + timedelta(days=offset)
        return Window(start, start + timedelta(days=1))
    if unit == "week":
        start = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
        return Window(start, start + timedelta(weeks=1))
    if unit == "month":
        index = today.year * 12 + today.month - 1 + offset
        window = _month(index // 12, index % 12 + 1)
        assert window is not None  # a computed month is always valid
        return window
    return _year(today.year + offset)


def _absolute(text: str) -> Window | None:
    if match := _DAY_MONTH_YEAR.search(text):
        day, month, year = match.groups()
        return _day(int(year), _MONTH_OF[month], int(day))
    if match := _MONTH_DAY_YEAR.search(text):
        month, day, year = match.groups()
        return _day(int(year), _MONTH_OF[month], int(day))
    if match := _ZH_DATE.search(text):
        year, month, day = match.groups()
        return _day(int(year), int(month), int(day)) if day else _month(int(year), int(month))
    if match := _MONTH_YEAR.search(text):
        month, year = match.groups()
        return _month(int(year), _MONTH_OF[month])
    return None


def mentioned_window(text: str, now: datetime) -> Window | None:
    """The first time window ``text`` names, most specific form first; None if none."""
    lowered = text.lower()
    window = _absolute(lowered)
    if window is not None:
        return window
    for pattern, unit, offset in _RELATIVE:
        if pattern.search(lowered):
            return _relative(unit, offset, now)
    if match := _YEAR_ALONE.search(lowered):
        return _year(int(match.group(1) or match.group(2)))
    if match := _IN_MONTH.search(lowered):
        return Window(month=_MONTH_OF[match.group(1)])
    if (match := _ZH_MONTH.search(lowered)) and 1 <= int(match.group(1)) <= 12:
        return Window(month=int(match.group(1)))
    return None
