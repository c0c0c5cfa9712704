"""The planner-query comparison: variants replace only the written-for questions' text."""

from __future__ import annotations

import json
from pathlib import Path

from bench.bilingual_data import EvalSet, Fact, Question, User
from bench.planner import QUERIES, _variant


def _set() -> EvalSet:
    fact = Fact("u-f1", "Prefers reports in Chinese", frozenset({"u-f1"}))
    questions = (
        Question("u-q1", "What language do I want my reports in?", "en_en", frozenset({"u-f1"})),
        Question("u-q2", "我的报告用什么语言？", "zh_en", frozenset({"u-f1"})),
    )
    return EvalSet("s", "blind", (User("u", "mixed", (fact,), questions),))


def test_a_variant_keeps_only_written_questions_and_swaps_their_text() -> None:
    written = {
        "u-q2": {"id": "u-q2", "mono": "报告 语言", "bilingual": "报告 语言 report language"}
    }
    as_asked = _variant(_set(), written, "as asked")
    bilingual = _variant(_set(), written, "bilingual")
    assert [q.text for q in as_asked.users[0].questions] == ["我的报告用什么语言？"]
    assert [q.text for q in bilingual.users[0].questions] == ["报告 语言 report language"]
    assert bilingual.users[0].questions[0].gold == frozenset({"u-f1"})
    assert bilingual.users[0].facts == _set().users[0].facts


def test_the_shipped_planner_queries_cover_dev_questions_of_the_blind_sets() -> None:
    rows = json.loads(Path(QUERIES).read_text(encoding="utf-8"))
    assert len(rows) == 150 and all(r["mono"].strip() and r["bilingual"].strip() for r in rows)
    sets = Path(QUERIES).parent / "bilingual"
    known = {
        q["id"]
        for path in sets.glob("*.json")
        for user in json.loads(path.read_text(encoding="utf-8"))["users"]
        for q in user["questions"]
    }
    assert {r["id"] for r in rows} <= known
