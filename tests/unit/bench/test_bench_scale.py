from __future__ import annotations

from bench.scale import measure, render
from bench.synthetic import synthetic_fact, synthetic_query


def test_synthetic_corpus_is_distinct_and_deterministic() -> None:
    facts = [synthetic_fact(i) for i in range(5000)]
    assert len(set(facts)) == 5000
    assert synthetic_fact(4321) == facts[4321]
    assert synthetic_query(3).startswith("What did ")


def test_scale_measures_a_tiny_corpus_end_to_end() -> None:
    result = measure(200, 2, queries=5)
    assert result["size"] == 200
    assert result["users"] == 2
    assert result["stored_first_user"] == 100  # synthetic facts are distinct: none merged
    assert result["remember_per_second"] > 0
    assert set(result["recall_random_user_ms"]) == {"p50", "p95"}
    cold = {"import_ms": 1.0, "open_ms": 2.0, "first_recall_ms": 3.0, "total_ms": 6.0}
    text = render({"spread": [result], "single_user": [result], "cold_start": cold})
    assert "| 200 | 2 |" in text
    assert "first recall (loads the embedder) 3 ms" in text
