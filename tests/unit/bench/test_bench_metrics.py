from __future__ import annotations

import pytest

from bench.metrics import ScoredQuery, percentiles_ms, ratio, recall_at_k, recall_table, score_query


def test_recall_counts_gold_ids_cited_within_k() -> None:
    cited = [{"D1:3"}, {"D9:9"}, {"D2:1", "D1:3"}]
    gold = {"D1:3", "D2:1"}
    assert recall_at_k(gold, cited, 1) == 0.5
    assert recall_at_k(gold, cited, 2) == 0.5
    assert recall_at_k(gold, cited, 3) == 1.0
    assert recall_at_k(gold, cited, 20) == 1.0


def test_recall_with_no_gold_or_no_hits_is_zero() -> None:
    assert recall_at_k(set(), [{"D1:1"}], 5) == 0.0
    assert recall_at_k({"D1:1"}, [], 5) == 0.0


def test_recall_table_averages_queries_not_categories() -> None:
    rows = [
        score_query("single-hop", {"a"}, [{"a"}], [1, 5]),
        score_query("multi-hop", {"a", "b"}, [{"x"}, {"b"}], [1, 5]),
        score_query("multi-hop", {"c"}, [{"x"}], [1, 5]),
    ]
    table = recall_table(rows, [1, 5])
    assert table["overall"] == {1: pytest.approx(33.33), 5: 50.0}
    assert table["single-hop"] == {1: 100.0, 5: 100.0}
    assert table["multi-hop"] == {1: 0.0, 5: 25.0}
    assert list(table) == ["overall", "multi-hop", "single-hop"]


def test_recall_table_of_nothing_is_zero() -> None:
    assert recall_table([], [10]) == {"overall": {10: 0.0}}
    assert ScoredQuery("a", {1: 1.0}).recall[1] == 1.0


def test_percentiles_are_in_milliseconds() -> None:
    durations = [i / 1000 for i in range(1, 101)]  # 1..100 ms
    assert percentiles_ms(durations) == {"p50": 50.5, "p95": 95.05}
    assert percentiles_ms([]) == {"p50": 0.0, "p95": 0.0}


def test_ratio_guards_a_zero_reference() -> None:
    assert ratio(3.0, 2.0) == 1.5
    assert ratio(3.0, 0.0) is None
