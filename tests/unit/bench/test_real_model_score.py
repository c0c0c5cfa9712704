"""Scoring a model's stored facts against the blind labels, on hand-checked toy facts."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from recallmem.types import Fact, Status

from bench.real_model_score import extraction_table, score_conversation
from bench.record_sets import Conversation

ZONE = ZoneInfo("Asia/Shanghai")
CONVERSATION = Conversation.model_validate({
    "id": "c1", "user_id": "u", "language": "zh", "timezone": "Asia/Shanghai",
    "days": [{"date": "2026-03-10", "messages": [
        {"id": "m1", "role": "user", "content": "…", "at": "2026-03-10T21:00:00+08:00"}]}],
    "expected": {
        "facts": [
            {"id": "f1", "content": "在杭州做前端", "category": "identity", "match": [["前端"], ["杭州"]]},
            {"id": "f2", "content": "用 Vue", "category": "knowledge", "match": [["Vue"]],
             "final_status": "superseded", "kind": "change_over_days"},
            {"id": "f3", "content": "改用 React", "category": "decision", "match": [["React"]],
             "kind": "change_over_days"},
            {"id": "f4", "content": "下周五交方案", "category": "todo", "match": [["方案"]],
             "due": "2026-03-20", "kind": "todo_with_date"},
        ],
        "supersedes": [{"old": "f2", "new": "f3", "kind": "change"}],
        "must_not_store": [{"kind": "transient", "message": "m1", "forbidden": ["加班"]},
                           {"kind": "secret", "message": "m1", "forbidden": ["ghp_"]}],
    },
})  # fmt: skip


def fact(content: str, **fields: object) -> Fact:
    return Fact(content=content, category=fields.pop("category", "context"), user_id="u", **fields)  # type: ignore[arg-type]


def test_each_figure_counts_what_the_labels_say() -> None:
    react = fact("决定改用 React", keywords=("React", "switch"))
    vue = fact("用 Vue 写前端", status=Status.SUPERSEDED, superseded_by=react.id)
    due_wrong = datetime(2026, 3, 22, tzinfo=ZONE)  # 2026-03-21 held to its end: a day late
    stored = [
        fact("在杭州一家电商公司做前端", keywords=("Hangzhou", "front-end")),
        vue,
        react,
        fact("下周五前交方案", category="todo", valid_until=due_wrong),
        fact("今天加班到十点"),  # a transient state: extra, and breaks its trap
    ]
    score = score_conversation(CONVERSATION, stored)
    assert score["found"] == 4 and score["extra"] == ["今天加班到十点"]
    assert score["supersedes"] == {"change": {"n": 1, "right": 1, "retired": 1}}
    assert (score["due_right"], score["due_checked"]) == (0, 1)
    assert score["traps"] == {"transient": {"n": 1, "broken": 1}, "secret": {"n": 1, "broken": 0}}
    assert score["keywords_cross"] == 2 and score["secrets"] == 0

    table = extraction_table({"c1": score}, {"c1": "zh"})["all"]
    assert table["recall"] == 100.0 and table["precision"] == 80.0
    assert table["supersede"] == 100.0 and table["due dates"] == 0.0
    assert table["by_kind"]["change_over_days"] == {"n": 2, "recall": 100.0}


def test_a_supersede_not_linked_is_not_counted_right() -> None:
    stored = [fact("用 Vue 写前端"), fact("决定改用 React")]  # both still active
    score = score_conversation(CONVERSATION, stored)
    assert score["supersedes"] == {"change": {"n": 1, "right": 0, "retired": 0}}
    assert score["status_right"] == 1  # f3 active as expected; f2 should be superseded


def _corrected(new_day: int) -> Conversation:
    raw = CONVERSATION.model_dump()
    raw["days"] = [
        {"date": "2026-03-10", "messages": [
            {"id": "m1", "role": "user", "content": "…", "at": "2026-03-10T21:00:00+08:00"}]},
        {"date": "2026-03-12", "messages": [
            {"id": "m2", "role": "user", "content": "…", "at": "2026-03-12T21:00:00+08:00"}]},
    ]  # fmt: skip
    raw["expected"]["facts"][1]["said_in"] = ("m1",)
    raw["expected"]["facts"][2]["said_in"] = ("m1" if new_day == 0 else "m2",)
    return Conversation.model_validate(raw)


def test_a_fact_corrected_in_its_own_window_may_be_left_out() -> None:
    # Only the replacement stored: right when both were said in one window...
    stored = [fact("在杭州做前端"), fact("决定改用 React"), fact("下周五前交方案", category="todo")]
    same = score_conversation(_corrected(new_day=0), stored)
    assert same["found"] == 4 and same["supersedes"] == {
        "change": {"n": 1, "right": 1, "retired": 1}
    }
    # ... a miss when the change came on a later day (the first fact was never kept).
    later = score_conversation(_corrected(new_day=1), stored)
    assert later["found"] == 3 and later["supersedes"] == {
        "change": {"n": 1, "right": 0, "retired": 0}
    }
    # Stored and left active beside its replacement: wrong either way.
    both = score_conversation(_corrected(new_day=0), [*stored, fact("用 Vue 写前端")])
    assert both["supersedes"] == {"change": {"n": 1, "right": 0, "retired": 0}}


def test_precision_judged_counts_the_extras_a_judge_found_right_once_all_are_judged() -> None:
    stored = [fact("在杭州做前端"), fact("Works night shifts"), fact("今天加班到十点")]
    score = score_conversation(CONVERSATION, stored)
    assert extraction_table({"c1": score}, {"c1": "zh"})["all"]["precision judged"] is None
    score |= {"extra_right": 1, "extra_unjudged": 0}  # night shifts right, overtime not
    table = extraction_table({"c1": score}, {"c1": "zh"})["all"]
    assert table["precision"] == 33.3 and table["precision judged"] == 66.7


def test_a_replacement_that_names_what_it_replaced_is_not_the_old_fact_kept() -> None:
    # "改用 React，不用 Vue 了" holds both labels' words: the old one was not kept apart.
    stored = [
        fact("在杭州做前端"),
        fact("改用 React，不用 Vue 了"),
        fact("下周五前交方案", category="todo"),
    ]
    score = score_conversation(_corrected(new_day=0), stored)
    assert score["found"] == 4 and score["supersedes"] == {
        "change": {"n": 1, "right": 1, "retired": 1}
    }


def test_an_old_fact_retired_by_another_new_fact_counts_as_retired_not_as_superseded() -> None:
    other = fact("选了新的前端框架")
    vue = fact("用 Vue 写前端", status=Status.SUPERSEDED, superseded_by=other.id)
    score = score_conversation(CONVERSATION, [vue, fact("决定改用 React"), other])
    assert score["supersedes"] == {"change": {"n": 1, "right": 0, "retired": 1}}


def test_a_judge_is_asked_about_each_extra_fact_once_and_its_verdict_read(tmp_path: Path) -> None:
    from bench.real_model_judge import judged_extras

    night = fact("Works night shifts")
    old = fact("用 Vue 写前端", status=Status.SUPERSEDED)
    assert judged_extras(CONVERSATION, [night, old], tmp_path) == [None, None]
    questions = sorted((tmp_path / "extraction").glob("*.md"))
    assert len(questions) == 2
    texts = [q.read_text(encoding="utf-8") for q in questions]
    assert sum("Kept as history" in t for t in texts) == 1  # only the superseded one
    assert all("[2026-03-10 21:00] user: …" in t for t in texts)  # the whole conversation
    for question in questions:
        question.with_suffix(".verdict.json").write_text(
            json.dumps({"right": "Vue" not in question.read_text(encoding="utf-8")}),
            encoding="utf-8",
        )
    assert judged_extras(CONVERSATION, [night, old], tmp_path) == [True, False]


def test_every_change_the_labels_miss_goes_to_a_judge_with_the_memory_as_it_ends(
    tmp_path: Path,
) -> None:
    from bench.real_model_judge import judged_supersedes

    other = fact("选了新的前端框架")
    vue = fact("用 Vue 写前端", status=Status.SUPERSEDED, superseded_by=other.id)
    stored = [vue, fact("决定改用 React"), other]
    score = score_conversation(CONVERSATION, stored)
    assert score["supersede_missed"] == [{"kind": "change", "old": "用 Vue", "new": "改用 React"}]
    assert judged_supersedes(CONVERSATION, score["supersede_missed"], stored, tmp_path) == [
        ("change", None)
    ]
    assert extraction_table({"c1": score}, {"c1": "zh"})["all"]["supersede judged"] is None
    (question,) = (tmp_path / "supersede").glob("*.md")
    text = question.read_text(encoding="utf-8")
    assert "Before: 用 Vue\nAfter: 改用 React" in text
    assert (
        "1. 决定改用 React (active)\n2. 用 Vue 写前端 (replaced by note 3)\n3. 选了新的前端框架 (active)"
        in text
    )
    question.with_suffix(".verdict.json").write_text(json.dumps({"right": True}), "utf-8")
    verdicts = judged_supersedes(CONVERSATION, score["supersede_missed"], stored, tmp_path)
    assert verdicts == [("change", True)]
    score |= {"supersede_unjudged": 0, "supersede_judged": {"change": {"right": 1}}}
    table = extraction_table({"c1": score}, {"c1": "zh"})["all"]
    assert table["supersede"] == 0.0 and table["supersede judged"] == 100.0


def test_the_notes_show_a_change_still_ahead_and_a_due_date_in_local_time() -> None:
    from bench.real_model_judge import notes_at_end

    react = fact("决定改用 React")
    vue = fact(
        "用 Vue 写前端", superseded_by=react.id, valid_until=datetime(2026, 4, 1, tzinfo=ZONE)
    )
    todo = fact("交方案", category="todo", valid_until=datetime(2026, 3, 21, tzinfo=ZONE))
    done = fact("订机票", category="todo", status=Status.DONE)
    notes = notes_at_end([vue, react, todo, done], "Asia/Shanghai")
    assert notes.splitlines() == [
        "1. 交方案 (active until 2026-03-21 00:00)",
        "2. 决定改用 React (active)",
        "3. 用 Vue 写前端 (replaced by note 2 from 2026-04-01 00:00)",
        "4. 订机票 (done)",
    ]
    # The store's order is no order: the same memory is the same question, and verdict.
    assert notes_at_end([done, todo, react, vue], "Asia/Shanghai") == notes


def test_a_linked_supersede_asks_no_judge() -> None:
    react = fact("决定改用 React")
    vue = fact("用 Vue 写前端", status=Status.SUPERSEDED, superseded_by=react.id)
    assert score_conversation(CONVERSATION, [vue, react])["supersede_missed"] == []


def test_an_expected_fact_the_labels_miss_goes_to_a_judge_with_the_memory(tmp_path: Path) -> None:
    from bench.real_model_judge import judged_missed

    stored = [fact("在杭州做 web 开发"), fact("决定改用 React")]
    score = score_conversation(CONVERSATION, stored)
    assert score["missed"] == ["在杭州做前端", "用 Vue", "下周五交方案"]
    assert judged_missed(CONVERSATION, score["missed"][:1], stored, tmp_path) == [None]
    assert extraction_table({"c1": score}, {"c1": "zh"})["all"]["recall judged"] is None
    (question,) = (tmp_path / "recall").glob("*.md")
    assert "## The fact\n在杭州做前端" in question.read_text(encoding="utf-8")
    assert "1. 决定改用 React (active)\n2. 在杭州做 web 开发 (active)" in question.read_text(
        "utf-8"
    )
    question.with_suffix(".verdict.json").write_text(json.dumps({"held": True}), "utf-8")
    assert judged_missed(CONVERSATION, score["missed"][:1], stored, tmp_path) == [True]
    score |= {"missed_held": 1, "missed_unjudged": 0}
    table = extraction_table({"c1": score}, {"c1": "zh"})["all"]
    assert table["recall"] == 25.0 and table["recall judged"] == 50.0
