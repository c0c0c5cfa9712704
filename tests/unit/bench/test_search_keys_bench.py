"""The search-keys measurement: keying requests rendered as the product batches them and
never holding a question, replies read back through the product's reader and vetting,
the two-form sets read, and the per-question metrics (both facts in five, newer first,
the floor) right on hand-checked toy data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recallmem.limits import KEYING_FACTS_PER_CALL

from bench.bilingual_metrics import Ranked
from bench.bilingual_public import memory_item
from bench.keyed_sets import MESSAGE, QUERY, FormQuestion, keyed, load_two_form_set
from bench.keys_requests import load_keys, render
from bench.search_keys import Row, _row, floor_at, summary
from bench.search_keys_report import floors

TWO_FORM = {
    "name": "set_t",
    "users": [{
        "user_id": "t1", "languages": "mixed", "profile": "",
        "facts": [{"id": f"t1-f{n:02d}", "text": f"Fact number {n} about the garden",
                   "lang": "en", "category": "context", "said_at": f"2026-0{1 + n % 9}-01T00:00:00Z"}
                  for n in range(KEYING_FACTS_PER_CALL + 3)],
        "questions": [{"id": "t1-q01", "kind": "conflict", "message": "secret question one",
                       "query": "secret query one", "gold": ["t1-f02"], "stale": ["t1-f01"],
                       "asked_at": "2026-12-01T00:00:00Z"}],
    }],
}  # fmt: skip


@pytest.fixture
def two_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "retrieval"
    folder.mkdir()
    path = folder / "set_t.json"
    path.write_text(json.dumps(TWO_FORM), encoding="utf-8")
    monkeypatch.setattr("bench.keys_requests.NEW_BLIND", folder)
    return path


def test_requests_batch_one_user_per_call_and_never_show_a_question(
    two_form: Path, tmp_path: Path
) -> None:
    requests, replies = tmp_path / "requests", tmp_path / "replies"
    assert render(["set_t"], requests, replies) == {"set_t": 2}
    first = json.loads((requests / "set_t" / "001.json").read_text(encoding="utf-8"))
    assert len(first["refs"]) == KEYING_FACTS_PER_CALL and first["prompt"] == "keys@1"
    shown = json.dumps(first, ensure_ascii=False) + (requests / "set_t" / "001.md").read_text()
    assert "secret question" not in shown and "secret query" not in shown
    assert first["reply_to"] == str(replies / "set_t" / "001.json")


def test_replies_are_read_and_vetted_as_the_product_does(two_form: Path, tmp_path: Path) -> None:
    requests, replies = tmp_path / "requests", tmp_path / "replies"
    render(["set_t"], requests, replies)
    (replies / "set_t").mkdir(parents=True)
    reply = {"keys": [{"id": "F1", "questions": ["What is fact 0 about?", "关于花园的事？"]},
                      {"id": "F2", "questions": ["Does Ada water the garden?"]},
                      {"id": "F99", "questions": ["?"]}]}  # fmt: skip
    (replies / "set_t" / "001.json").write_text(f"Sure!\n{json.dumps(reply)}", encoding="utf-8")
    loaded = load_keys("set_t", requests, replies)
    assert (loaded.requests, loaded.answered) == (2, 1)
    assert loaded.keys["t1-f00"] == ("What is fact 0 about?", "关于花园的事？")
    assert loaded.keys["t1-f01"] == () and "Ada" in loaded.set_aside[0]  # not in the fact
    assert "F99" in loaded.unreadable[0]


def test_two_form_questions_are_asked_apart_and_keys_reach_the_items(two_form: Path) -> None:
    eval_set = load_two_form_set(two_form)
    questions = eval_set.users[0].questions
    assert [(q.id, q.form) for q in questions] == [("t1-q01@message", MESSAGE),
                                                    ("t1-q01@query", QUERY)]  # fmt: skip
    fact = keyed(eval_set, {"t1-f00": ("What is fact 0 about?",)}).users[0].facts[0]
    assert memory_item(fact)["questions"] == ["What is fact 0 about?"]


def _question(kind: str, gold: set[str], stale: set[str] = frozenset()) -> FormQuestion:  # type: ignore[assignment]
    return FormQuestion("q", "?", kind, frozenset(gold), form=MESSAGE, stale=frozenset(stale))


def test_both_facts_in_five_and_newer_first() -> None:
    cited = [frozenset({x}) for x in "abcdefg"]
    ranked = Ranked(cited, [0.9 - n / 10 for n in range(7)])
    two = _row("s", "default", _question("two_fact", {"a", "f"}), 10, ranked)
    assert (two.rank, two.recall5, two.both5) == (1, 0.5, False)
    newer = _row("s", "default", _question("conflict", {"b"}, {"c"}), 10, ranked)
    older = _row("s", "default", _question("conflict", {"c"}, {"b"}), 10, ranked)
    assert newer.newer_first is True and older.newer_first is False
    found = summary([two, newer, older])
    assert (found["both@5"], found["newer_first"], found["top1"]) == (0.0, 50.0, 33.3)


def _scored(gold: float | None, top: float, kind: str = "en_en") -> Row:
    return Row("set_a", "default", "q", kind, "written", 10, "dev", kind != "noanswer", 1,
               1.0, 1.0, False, None, top, () if gold is None else (gold,))  # fmt: skip


def test_the_floor_counts_gold_lost_and_blanks_given_nothing() -> None:
    rows = [_scored(0.1, 0.5), *[_scored(0.5, 0.5) for _ in range(99)], _scored(None, 0.15,
            "noanswer"), _scored(None, 0.3, "noanswer")]  # fmt: skip
    assert floor_at(rows, 0.2) | {"n_gold": 0} == {"floor": 0.2, "gold_lost": 1.0,
                                                   "noanswer_empty": 50.0, "n_gold": 0,
                                                   "n_noanswer": 2}  # fmt: skip
    assert floors(rows, "default")["highest_within_1pct"] == 0.5
    rows.append(_scored(0.12, 0.5))
    assert floors(rows, "default")["highest_within_1pct"] == 0.12  # 1 of 101 lost at 0.12
