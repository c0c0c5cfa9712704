"""Of two facts about one thing, the newer ranks first when it says the thing changed; facts
that add to each other, and changes the query is not near, keep their places."""

from __future__ import annotations

import numpy as np
import pytest
from recallmem.retrieval.newer_first import (
    NEWER_FIRST_TOP,
    newer_first,
    states_change,
    states_correction,
)


@pytest.mark.parametrize(
    "text",
    ["Sold the Civic and now rides an e-bike", "Switched the dashboards to Power BI",
     "Moved to Boulder in August", "No longer plays in the band", "钢琴课改到周日下午了",
     "搬到了高新区", "不再喝茶了", "更正：会议在周四", "Correction: the trip is in April",
     # Words of time where the sentence is built on the change.
     "Now goes to the gym on Tuesdays", "Decided to buy a BYD instead of a Tesla",
     "Used to cycle to work, now takes the metro", "现在会议纪要要写中文了", "以前住武侯区，现在住高新区"],
)  # fmt: skip
def test_a_change_is_read_in_either_language(text: str) -> None:
    assert states_change(text)


@pytest.mark.parametrize(
    "text",
    [
        "Pepper the beagle turned five",
        "女儿最近开始学画画",
        "Started learning to paint",
        "Changed her mind about the colour",
        # Words of time alone: nothing older is replaced (decision 0041, the losses).
        "Hurt his wrist at badminton and now wears a brace",
        "Is lactose intolerant and drinks oat milk instead",
        "左膝半月板以前受过伤",
        "每周四上午在图书馆上英语课,现在是三级",
        # A change still to come.
        "打算明年把凯美瑞换成比亚迪汉",
        "Plans to switch to Linux next year",
    ],
)
def test_additions_and_plans_are_no_change(text: str) -> None:
    assert not states_change(text)


def test_a_correction_of_a_plan_is_a_change_and_says_it_corrects() -> None:
    text = "Correction: they plan to move to Lisbon in May, not April"
    assert states_change(text) and states_correction(text)
    assert not states_correction("Switched the dashboards to Power BI")


def test_a_correction_is_not_lifted_over_another_correction() -> None:
    # Two corrections of different things read alike and are mutual nearest neighbours
    # ("更正：生日是11月12号" and "Corrected: the team has 14 people"); as plain facts the
    # same pair would be lifted.
    vectors = _unit([1, 0.1, 0], [1, 0.3, 0], [0, 1, 0])
    scores = np.array([0.8, 0.5, 0.6])
    said = np.array([1.0, 2.0, 3.0])
    changed = np.array([True, True, False])
    assert newer_first(scores, said, vectors, changed)[1] > 0
    both = np.array([True, True, False])
    assert not newer_first(scores, said, vectors, changed, corrected=both).any()
    only_new = np.array([False, True, False])
    assert newer_first(scores, said, vectors, changed, corrected=only_new)[1] > 0


def _unit(*rows: list[float]) -> np.ndarray:
    matrix = np.array(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_the_change_is_lifted_just_above_the_fact_it_replaces_and_nothing_else_moves() -> None:
    # 0: the old fact, 1: its change (mutual nearest), 2: unrelated, 3: a change far away
    vectors = _unit([1, 0.1, 0], [1, 0.3, 0], [0, 1, 0], [0, 0, 1])
    scores = np.array([0.8, 0.5, 0.6, 0.7])
    said = np.array([1.0, 2.0, 3.0, 4.0])
    lift = newer_first(scores, said, vectors, np.array([False, True, False, True]))
    final = scores + lift
    assert list(np.argsort(-final)) == [1, 0, 3, 2] and lift[[0, 2, 3]].tolist() == [0, 0, 0]
    assert final[1] == pytest.approx(0.801, abs=1e-6)
    # The same change said before the old fact, or at an unknown time, lifts nothing.
    assert not newer_first(scores, np.array([3.0, 2.0, 1.0, 4.0]), vectors,
                           np.array([False, True, False, True])).any()  # fmt: skip
    assert not newer_first(scores, np.array([1.0, np.nan, 3.0, 4.0]), vectors,
                           np.array([False, True, False, True])).any()  # fmt: skip


def test_only_mutual_nearest_neighbours_are_one_thing() -> None:
    # 1 (a change) is nearest to 0, but 0 is nearer to 2: 1 does not replace 0.
    vectors = _unit([1, 0, 0], [0.8, 0.6, 0], [1, 0.05, 0])
    scores = np.array([0.9, 0.5, 0.1])
    assert not newer_first(scores, np.array([1.0, 3.0, 2.0]), vectors,
                           np.array([False, True, False])).any()  # fmt: skip


def test_a_change_outside_the_first_candidates_is_not_lifted() -> None:
    n = NEWER_FIRST_TOP + 2
    vectors = _unit(*[[1.0 if c == r else 0.01 for c in range(n)] for r in range(n)])
    vectors[n - 1] = vectors[0] * 0.9 + vectors[n - 1] * 0.1
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = np.linspace(1.0, 0.0, n)
    changed = np.zeros(n, bool)
    changed[n - 1] = True
    said = np.arange(n, dtype=float)
    assert not newer_first(scores, said, vectors, changed).any()


def test_candidates_may_be_rows_of_the_whole_matrix() -> None:
    # Row 2 of the matrix (out of scope) is the change's nearest; among the candidates
    # (rows 0, 1, 3) the old fact is.
    matrix = _unit([1, 0.1, 0], [1, 0.3, 0], [1, 0.29, 0], [0, 0, 1])
    rows = np.array([0, 1, 3])
    scores = np.array([0.8, 0.5, 0.6])
    lift = newer_first(scores, np.array([1.0, 2.0, 3.0]), matrix, np.array([False, True, False]),
                       rows)  # fmt: skip
    assert lift[1] > 0 and lift[[0, 2]].tolist() == [0, 0]
