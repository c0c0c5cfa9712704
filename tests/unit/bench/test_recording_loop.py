"""The recording loop on a toy blind set: render, answer, import, render again, measure.

MACHINERY TESTS: the replies are written by this test (a fixture "model"), to check that
requests are rendered by the product's code day by day and turn by turn, filed, replayed
and scored; nothing here says how a real model behaves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from recallmem.testing import HashingEmbeddings

from bench import record
from bench.real_model import measure_extraction, measure_turns

DAY1 = [("user", "组长让我下周五之前交一份性能优化方案", "2026-03-10T21:20:00+08:00"),
        ("assistant", "好的，我帮你列个提纲。", "2026-03-10T21:21:00+08:00")]  # fmt: skip
DAY2 = [("user", "性能优化方案周五交了，组长很满意", "2026-03-16T20:00:00+08:00"),
        ("assistant", "恭喜！", "2026-03-16T20:01:00+08:00")]  # fmt: skip


def _conversation() -> dict[str, Any]:
    days = [
        {"date": said[0][2][:10], "messages": [
            {"id": f"c1-d{d}-m{n}", "role": role, "content": text, "at": at}
            for n, (role, text, at) in enumerate(said, 1)]}
        for d, said in enumerate((DAY1, DAY2), 1)
    ]  # fmt: skip
    todo = {"id": "c1-f1", "content": "下周五前要交性能优化方案", "category": "todo",
            "match": [["性能优化方案"]], "said_in": ["c1-d1-m1"], "due": "2026-03-20",
            "final_status": "done", "kind": "todo_done_or_overtaken"}  # fmt: skip
    return {"id": "c1", "user_id": "u1", "language": "zh", "timezone": "Asia/Shanghai",
            "days": days, "expected": {"facts": [todo], "supersedes": [], "must_not_store": []}}  # fmt: skip


@pytest.fixture
def blind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "blind"
    (folder / "extract").mkdir(parents=True)
    (folder / "planner").mkdir()
    (folder / "extract" / "conversations.json").write_text(json.dumps([_conversation()]))
    planner = {"name": "toy", "users": [{
        "user_id": "p1", "language": "en", "timezone": "Europe/London",
        "facts": [{"id": "p1-f1", "content": "Takes oat milk in coffee", "category": "preference",
                   "said_at": "2026-11-02T09:00:00+00:00"}],
        "items": [{"id": "p1-i1", "kind": "cue", "at": "2026-12-01T09:00:00+00:00",
                   "history": [{"role": "user", "content": "hi"},
                               {"role": "assistant", "content": "Hello!"}],
                   "turn": "Order my usual coffee, as last time", "needs": ["p1-f1"]}]}]}  # fmt: skip
    (folder / "planner" / "turns.json").write_text(json.dumps(planner))
    monkeypatch.setenv("RECALLMEM_BLIND", str(folder))
    return folder


def _answer(out: Path, kind: str, reply: dict[str, Any]) -> dict[str, Any]:
    """Answer the one request of ``kind`` still without a reply; returns that request."""
    waiting = [p for p in (out / kind).glob("*.json")
               if p.name != "manifest.json" and p.name.count(".") == 1
               and not p.with_name(f"{p.stem}.reply.json").exists()]  # fmt: skip
    assert len(waiting) == 1, waiting
    (waiting[0].with_name(f"{waiting[0].stem}.reply.json")).write_text(
        json.dumps({"model": "fixture-model", **reply}, ensure_ascii=False), encoding="utf-8"
    )
    return json.loads(waiting[0].read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def _extraction_reply(**fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "record_extraction", "arguments": fields}]}


def test_extraction_is_rendered_day_by_day_and_scored(blind: Path, tmp_path: Path) -> None:
    out, recorded, embeddings = tmp_path / "requests", tmp_path / "recorded", HashingEmbeddings()

    def render() -> tuple[int, int]:
        return record.render(["extraction"], out, recorded=recorded, embeddings=embeddings)[
            "extraction"
        ]

    assert render() == (1, 1)  # day 1 only: day 2 depends on what day 1 stores
    day1 = _answer(out, "extraction", _extraction_reply(facts=[{
        "content": "下周五前要交性能优化方案", "category": "todo", "confidence": 0.95,
        "evidence": "组长让我下周五之前交一份性能优化方案", "message_ids": ["m1"],
        "valid_until": "2026-03-20", "keywords": ["performance", "plan"]}]))  # fmt: skip
    assert "Today: 2026-03-10 (Tuesday)" in day1["messages"][-1]["content"]
    assert day1["tool_choice"]["function"]["name"] == "record_extraction"
    assert record.file_replies(out, recorded) == (1, [])

    assert render() == (2, 1)  # day 1 answered from its recording, day 2 written
    day2 = _answer(out, "extraction", _extraction_reply(facts=[], todos_done=["F1"]))
    shown = day2["messages"][-1]["content"]
    assert (
        "Today: 2026-03-16 (Monday)" in shown
        and "[F1] (todo, 0.95, until 2026-03-20) 下周五前要交性能优化方案" in shown
    )
    assert record.file_replies(out, recorded)[0] == 1
    assert render() == (2, 0)
    assert record.status(out, recorded)["extraction"] == {
        "requests": 2,
        "replies": 2,
        "recorded": 2,
    }

    measured = measure_extraction(embeddings, recorded)
    assert measured["complete"] == 1 and measured["waiting"] == 0
    figures = measured["table"]["all"]
    assert figures["recall"] == 100.0 and figures["precision"] == 100.0
    assert figures["due dates"] == 100.0 and figures["final status"] == 100.0
    assert figures["keywords cross"] == 100.0 and figures["secrets"] == 0


def test_a_planner_turn_is_rendered_call_by_call_and_scored(blind: Path, tmp_path: Path) -> None:
    out, recorded, embeddings = tmp_path / "requests", tmp_path / "recorded", HashingEmbeddings()

    def render() -> tuple[int, int]:
        return record.render(["planner"], out, recorded=recorded, embeddings=embeddings)["planner"]

    assert render() == (1, 1)
    first = _answer(
        out,
        "planner",
        {"tool_calls": [{"name": "recall", "arguments": {"query": "usual coffee order"}}]},
    )
    assert first["messages"][0]["content"].startswith('<memory source="recallmem"')
    assert "Current date: 2026-12-01 (Tuesday)" in first["messages"][0]["content"]
    record.file_replies(out, recorded)
    assert render() == (2, 1)  # the tool's result goes back to the model
    follow = _answer(out, "planner", {"content": "Ordering an oat-milk coffee, as usual."})
    assert (
        follow["messages"][-1]["role"] == "tool" and "oat milk" in follow["messages"][-1]["content"]
    )
    record.file_replies(out, recorded)
    assert render() == (2, 0)

    judge = tmp_path / "judge"
    measured = measure_turns("planner", embeddings, recorded, judge, ["hybrid"])
    assert measured["waiting"] == 0
    row = measured["modes"]["hybrid"]["cue / all"]
    assert row["replayed"] == 1 and row["recall called"] == 100.0 and row["memory reached"] == 100.0
    # Per model, as the recording of the turn's first request names it.
    assert measured["by_model"]["hybrid"]["cue / fixture-model"]["recall called"] == 100.0
    # A second session judges whether the reply used the fact; it sees only this file.
    question = (judge / "planner" / "hybrid" / "p1-i1.md").read_text(encoding="utf-8")
    assert "- Takes oat milk in coffee" in question and "Ordering an oat-milk coffee" in question
    assert row["judged"] == 0 and row["uses the fact"] is None
    (judge / "planner" / "hybrid" / "p1-i1.verdict.json").write_text('{"uses": true}')
    measured = measure_turns("planner", embeddings, recorded, judge, ["hybrid"])
    assert measured["modes"]["hybrid"]["cue / all"]["uses the fact"] == 100.0


def test_no_recordings_yet_is_said_not_failed(blind: Path, tmp_path: Path) -> None:
    measured = measure_extraction(HashingEmbeddings(), tmp_path / "nothing")
    assert measured["complete"] == 0 and measured["waiting"] == 1
    assert measured["table"] == {}
