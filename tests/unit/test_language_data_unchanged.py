"""Moving the language data into ``prompts/`` changed no reading of any text.

``tests/data/language/before.json`` was written by the in-code tables this data replaced
(``when.py``'s month names and phrases, ``text.py``'s stopwords and negations): the time
window every corpus text names at three moments, and the meaningful units of each. The
corpus is the blind bilingual sets' facts and questions plus a grid of date phrases in
every form ``when.py`` reads, so a word dropped or added in the data shows up here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from recallmem.retrieval.when import mentioned_window
from recallmem.text.words import NEGATIONS, content_units

ROOT = Path(__file__).resolve().parents[2]
BEFORE = ROOT / "tests/data/language/before.json"
NOWS = [
    datetime(2024, 3, 15, 12, tzinfo=UTC),
    datetime(2024, 1, 10, 23, 30, tzinfo=ZoneInfo("Asia/Shanghai")),
    datetime(2024, 3, 10, 1, 30, tzinfo=ZoneInfo("America/New_York")),
]
MONTHS = ["January", "Feb", "march", "Apr.", "MAY", "june", "Jul", "aug", "Sept", "sep",
          "October", "nov", "December", "dec."]  # fmt: skip
FORMS = ["on {d} {mon} {y}", "the {d}th of {mon}, {y}", "{mon} {d}, {y}", "{mon} {y}",
         "in {mon} of {y}", "in {mon}", "since {mon}", "last {mon}", "during {mon}",
         "this {mon}", "{mon}", "in {y}", "before {y}", "{y}年", "{y}年{m}月", "{y} 年 {m} 月",
         "{y}年{m}月{d}日", "{y}年{m}月{d}号", "{m}月", "{m}月{d}号", "{d}st {mon} {y}"]  # fmt: skip
PHRASES = ["yesterday", "Today", "last week", "this week", "last month", "this month",
           "last year", "this year", "昨天", "今天", "上周", "上星期", "上个星期", "上礼拜",
           "这周", "本周", "这个星期", "上月", "上个月", "这个月", "本月", "去年", "今年",
           "may I ask", "I paid 2000 dollars", "year 1999", "31 February, 2023", "13月",
           "yesterdays", "todayish", "2023年13月"]  # fmt: skip


def corpus() -> Iterator[str]:
    """Every text the test reads, in a fixed order."""
    for name in ("set_a", "set_b"):
        data = json.loads((ROOT / f"bench/data/bilingual/{name}.json").read_text("utf-8"))
        for user in data["users"]:
            yield from (fact["text"] for fact in user["facts"])
            yield from (question["text"] for question in user["questions"])
    for n, form in enumerate(FORMS):
        for k, mon in enumerate(MONTHS):
            yield form.format(d=(n * 7 + k) % 31 + 1, mon=mon, y=2019 + k % 6, m=k % 12 + 1)
    yield from PHRASES


def _window(text: str, now: datetime) -> list[object] | None:
    window = mentioned_window(text, now)
    if window is None:
        return None
    start, end = (None if t is None else t.isoformat() for t in (window.start, window.end))
    return [start, end, window.month, window.utc_offset]


def readings() -> dict[str, object]:
    """What the current code reads in the corpus."""
    texts = list(corpus())
    return {
        "windows": [[_window(text, now) for now in NOWS] for text in texts],
        "content_units": [sorted(content_units(text)) for text in texts],
        "negations": sorted(NEGATIONS),
    }


def test_the_language_data_reads_every_text_as_before() -> None:
    before = json.loads(BEFORE.read_text("utf-8"))
    now = readings()
    assert len(now["windows"]) == len(before["windows"]) > 1000
    assert sum(any(w) for w in before["windows"]) > 300  # the grid names windows
    for key in ("windows", "content_units", "negations"):
        assert now[key] == before[key], key


if __name__ == "__main__":  # writes the file the test compares against
    BEFORE.write_text(json.dumps(readings(), ensure_ascii=False) + "\n", "utf-8")
