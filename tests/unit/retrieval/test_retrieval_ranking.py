from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest
from recallmem.retrieval.ranking import (
    Weights,
    fuse,
    lexical_trust,
    score_parts,
    time_match,
    top_k,
)
from recallmem.retrieval.when import TimeWindow

MAY_1 = TimeWindow(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 2, tzinfo=UTC))


def _at(*args: int) -> float:
    return datetime(*args, tzinfo=UTC).timestamp()


def test_time_match_is_one_inside_and_fades_over_the_days_after() -> None:
    said = np.array(
        [_at(2023, 5, 1, 9), _at(2023, 5, 2), _at(2023, 5, 9), _at(2023, 4, 30), np.nan]
    )
    assert time_match(said, MAY_1, 7.0).tolist() == pytest.approx([1.0, 1.0, 0.0, 0.0, 0.0])
    assert time_match(said, MAY_1, 0.0).tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert time_match(np.array([_at(2023, 5, 5, 12)]), MAY_1, 7.0)[0] == pytest.approx(0.5)


def test_a_month_window_matches_that_month_in_any_year() -> None:
    said = np.array([_at(2021, 6, 3), _at(2023, 6, 30, 23), _at(2023, 7, 1), np.nan])
    assert time_match(said, TimeWindow(month=6), 7.0).tolist() == [1.0, 1.0, 0.0, 0.0]


def _parts(window: TimeWindow | None, weights: Weights) -> np.ndarray:
    cosine = np.array([0.60, 0.55])
    said = np.array([_at(2023, 1, 1), _at(2023, 5, 1, 10)])
    parts = score_parts(cosine, np.zeros(2), np.zeros(2), np.full(2, 0.9), weights,
                        said_at=said, window=window)  # fmt: skip
    return fuse(parts, weights)


def test_a_fact_said_in_the_named_window_outranks_a_closer_paraphrase() -> None:
    assert np.argmax(_parts(None, Weights())) == 0
    assert np.argmax(_parts(MAY_1, Weights())) == 1
    assert np.argmax(_parts(MAY_1, Weights(time=0.0))) == 0  # switched off


def test_parts_are_in_unit_range_and_lexical_evidence_is_kept_as_given() -> None:
    parts = score_parts(np.array([1.2, -0.3]), np.array([0.25, 1.5]), np.array([0.0, 30.0]),
                        np.array([0.9, 0.5]), Weights())  # fmt: skip
    assert parts.dense.tolist() == [1.0, 0.0]
    # Calibrated evidence is not rescaled to the best match: a weak best stays weak.
    assert parts.lexical.tolist() == [0.25, 1.0]
    assert parts.recency.tolist() == pytest.approx([1.0, 0.5])
    assert parts.time is None


def test_top_k_orders_best_first_and_breaks_ties_by_position() -> None:
    assert top_k(np.array([0.1, 0.9, 0.9, 0.5]), 3).tolist() == [1, 2, 3]
    assert top_k(np.array([0.2]), 5).tolist() == [0]
    assert top_k(np.array([]), 3).tolist() == []


def test_lexical_weight_follows_the_query_script() -> None:
    weights = Weights(lexical=0.2, lexical_cjk=0.12)
    assert weights.for_query("Which TypeScript book did I like?").lexical == 0.2
    assert weights.for_query("我上次说的报告语言是什么").lexical == 0.12
    # Mostly Chinese with one English word is still a Chinese query.
    assert weights.for_query("我喜欢用 TypeScript 写前端").lexical == 0.12
    assert weights.for_query("").lexical == 0.2


def test_a_full_lexical_match_can_outrank_a_closer_paraphrase_in_english_only() -> None:
    # Same raw signals for both queries: only the script decides how much evidence counts.
    cosine, evidence = np.array([0.62, 0.50]), np.array([0.0, 1.0])

    def winner(query: str) -> int:
        weights = Weights(lexical=0.2, lexical_cjk=0.05).for_query(query)
        parts = score_parts(cosine, evidence, np.zeros(2), np.full(2, 0.9), weights)
        return int(np.argmax(fuse(parts, weights)))

    assert winner("what did Mia name her dog") == 1
    assert winner("米娅给她的狗起了什么名字") == 0


def test_a_time_every_candidate_matches_alike_counts_for_nothing() -> None:
    # "last week" over facts all said minutes ago: the window cannot tell them apart.
    said = np.array([_at(2023, 5, 1, 9), _at(2023, 5, 1, 10)])
    parts = score_parts(np.array([0.6, 0.5]), np.zeros(2), np.zeros(2), np.full(2, 0.9),
                        Weights(), said_at=said, window=MAY_1)  # fmt: skip
    assert parts.time is None
    assert fuse(parts, Weights()).tolist() == pytest.approx([0.8 * 0.6 + 0.076, 0.8 * 0.5 + 0.076])


def test_same_script_evidence_is_trusted_by_the_script_of_the_nearest_facts() -> None:
    same = np.array([True, True, False, False])
    # The nearest facts by meaning are in the other language: a same-script word match
    # is probably about something else.
    assert lexical_trust(same, np.array([0.3, 0.2, 0.9, 0.8]), 2).tolist() == [0, 0, 1, 1]
    assert lexical_trust(same, np.array([0.9, 0.8, 0.3, 0.2]), 2).tolist() == [1, 1, 1, 1]
    assert lexical_trust(np.zeros(0, dtype=bool), np.zeros(0), 3).size == 0


def test_the_nearest_fact_decides_trust_most() -> None:
    # Ranked by meaning: the query's own script first, then two facts in the other one
    # (long chatty turns sit near every query). By rank, 1 / (1 + 1/2 + 1/3) = 6/11
    # of the trust stays, where a plain share over the three would leave 1/3.
    same = np.array([True, False, False])
    trust = lexical_trust(same, np.array([0.60, 0.55, 0.50]), 3)
    assert trust.tolist() == pytest.approx([6 / 11, 1.0, 1.0])
    # The other way round, the same-script fact third: 1/3 / (11/6) = 2/11.
    trust = lexical_trust(same, np.array([0.50, 0.60, 0.55]), 3)
    assert trust.tolist() == pytest.approx([2 / 11, 1.0, 1.0])


def test_the_nearest_fact_in_the_query_language_is_not_outvoted_by_a_translation() -> None:
    # "Which school did I settle on for the MBA?": the English answer is nearest by
    # meaning; a Chinese fact that also says "MBA", and a chatty Chinese turn, follow.
    # Both facts that say MBA earn the same evidence; the nearest must stay first.
    same = np.array([True, False, False])
    cosine, evidence = np.array([0.600, 0.552, 0.55]), np.array([0.39, 0.39, 0.0])
    weights = Weights().for_query("Which school did I settle on for the MBA?")
    lexical = evidence * lexical_trust(same, cosine, weights.trust_top)
    parts = score_parts(cosine, lexical, np.zeros(3), np.full(3, 0.9), weights)
    assert int(np.argmax(fuse(parts, weights))) == 0


def test_in_a_large_memory_a_full_translated_match_ranked_second_keeps_its_place() -> None:
    # From a blind set padded with a thousand chatty turns: "What was my most recent
    # blood pressure reading?" The English answer is nearest and says half the question;
    # the short "有高血压,每天早上吃一片缬沙坦" says all of it through translations. Counting
    # the script of the facts ranked two and three halved the answer's evidence, and the
    # translation came first; in a large memory only the nearest fact decides.
    same = np.array([True, False, False])
    cosine, evidence = np.array([0.69, 0.55, 0.38]), np.array([0.5, 1.0, 0.0])
    weights = Weights().for_query("What was my most recent blood pressure reading?")

    def first(memory_facts: int) -> int:
        top = weights.trust_top_for(memory_facts)
        lexical = evidence * lexical_trust(same, cosine, top)
        parts = score_parts(cosine, lexical, np.zeros(3), np.full(3, 0.9), weights)
        return int(np.argmax(fuse(parts, weights)))

    assert first(weights.large_memory_facts) == 0
    # In a small memory the next facts are the user's own and still share the say.
    assert weights.trust_top_for(weights.large_memory_facts - 1) == 3
    assert first(weights.large_memory_facts - 1) == 1


def test_evidence_counts_more_when_every_candidate_is_in_the_query_script() -> None:
    weights = Weights()
    assert weights.for_query("Which book did I like?", one_script=True).lexical == 0.35
    assert weights.for_query("我喜欢什么书", one_script=True).lexical == 0.2
    assert weights.for_query("Which book did I like?").lexical == 0.2
    assert weights.for_query("我喜欢什么书").lexical == 0.12
