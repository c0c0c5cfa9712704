from __future__ import annotations

from datetime import UTC, datetime

import pytest
from recallmem.retrieval.when import TimeWindow, mentioned_window

NOW = datetime(2024, 3, 15, 12, tzinfo=UTC)  # a Friday


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("What did Gina find on 1 February, 2023?", _day(2023, 2, 1), _day(2023, 2, 2)),
        ("the 5th of May, 2023", _day(2023, 5, 5), _day(2023, 5, 6)),
        ("painting shown on October 13, 2023?", _day(2023, 10, 13), _day(2023, 10, 14)),
        ("Dec 3, 2022", _day(2022, 12, 3), _day(2022, 12, 4)),
        ("What setback did Melanie face in October 2023?", _day(2023, 10, 1), _day(2023, 11, 1)),
        ("in December 2023", _day(2023, 12, 1), _day(2024, 1, 1)),
        ("beach trips in 2023?", _day(2023, 1, 1), _day(2024, 1, 1)),
        ("我2023年10月13日做了什么", _day(2023, 10, 13), _day(2023, 10, 14)),
        ("2023年10月的事", _day(2023, 10, 1), _day(2023, 11, 1)),
        ("2022年我在哪", _day(2022, 1, 1), _day(2023, 1, 1)),
        ("what did I eat yesterday", _day(2024, 3, 14), _day(2024, 3, 15)),
        ("上周我吃了什么", _day(2024, 3, 4), _day(2024, 3, 11)),
        ("last week", _day(2024, 3, 4), _day(2024, 3, 11)),
        ("上个月", _day(2024, 2, 1), _day(2024, 3, 1)),
        ("this year", _day(2024, 1, 1), _day(2025, 1, 1)),
        ("去年", _day(2023, 1, 1), _day(2024, 1, 1)),
    ],
)
def test_windows_named_by_dates_and_relative_phrases(
    text: str, start: datetime, end: datetime
) -> None:
    assert mentioned_window(text, NOW) == TimeWindow(start, end)


def test_last_month_in_january_is_last_december() -> None:
    window = mentioned_window("last month", datetime(2024, 1, 10, tzinfo=UTC))
    assert window == TimeWindow(_day(2023, 12, 1), _day(2024, 1, 1))


@pytest.mark.parametrize(("text", "month"), [("camping in June?", 6), ("我10月做了什么", 10)])
def test_a_month_without_a_year_is_that_month_of_any_year(text: str, month: int) -> None:
    assert mentioned_window(text, NOW) == TimeWindow(month=month)


@pytest.mark.parametrize(
    "text",
    [
        "What is my favourite colour?",
        "I paid 2000 dollars",
        "it costs 15 euros",
        "31 February, 2023",  # names no real day: nothing, rather than a wrong day
        "我最喜欢的颜色",
    ],
)
def test_no_window_where_none_is_named(text: str) -> None:
    assert mentioned_window(text, NOW) is None
