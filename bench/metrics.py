"""Retrieval metrics: recall@k over cited evidence, per category, and latency percentiles.

A search result is a ranked list of *hits*; a hit stands for one or more documents (a
system that merges near-duplicates returns one hit for several), and cites the union of
their evidence ids.

>>> recall_at_k(gold={"D1:3", "D2:1"}, cited=[{"D1:3"}, {"D9:9"}, {"D2:1"}], k=2)
0.5
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

OVERALL = "overall"


def recall_at_k(gold: Iterable[str], cited: Sequence[Iterable[str]], k: int) -> float:
    """Share of ``gold`` ids cited by the first ``k`` hits (0.0 when gold is empty)."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    found: set[str] = set()
    for hit in cited[:k]:
        found.update(hit)
    return len(wanted & found) / len(wanted)


@dataclass(frozen=True)
class ScoredQuery:
    """One query's outcome: its category and recall at each k."""

    category: str
    recall: Mapping[int, float]


def score_query(
    category: str, gold: Iterable[str], cited: Sequence[Iterable[str]], ks: Sequence[int]
) -> ScoredQuery:
    """Recall at every k for one ranked result."""
    gold_set = set(gold)
    return ScoredQuery(category, {k: recall_at_k(gold_set, cited, k) for k in ks})


def recall_table(scored: Sequence[ScoredQuery], ks: Sequence[int]) -> dict[str, dict[int, float]]:
    """Mean recall in percent, per category and ``overall`` (the mean over all queries).

    >>> rows = [ScoredQuery("a", {1: 1.0}), ScoredQuery("b", {1: 0.0}), ScoredQuery("b", {1: 0.5})]
    >>> recall_table(rows, [1])
    {'overall': {1: 50.0}, 'a': {1: 100.0}, 'b': {1: 25.0}}
    """
    groups: dict[str, list[ScoredQuery]] = defaultdict(list)
    for row in scored:
        groups[row.category].append(row)
    table = {OVERALL: _mean_recall(scored, ks)}
    for category in sorted(groups):
        table[category] = _mean_recall(groups[category], ks)
    return table


def _mean_recall(rows: Sequence[ScoredQuery], ks: Sequence[int]) -> dict[int, float]:
    if not rows:
        return dict.fromkeys(ks, 0.0)
    return {k: round(100.0 * sum(r.recall[k] for r in rows) / len(rows), 2) for k in ks}


def percentiles_ms(seconds: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of durations given in seconds, in milliseconds (linear interpolation).

    >>> percentiles_ms([0.001, 0.002, 0.003])
    {'p50': 2.0, 'p95': 2.9}
    """
    if not seconds:
        return {"p50": 0.0, "p95": 0.0}
    values = np.asarray(seconds, dtype=np.float64) * 1000.0
    return {
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
    }


def ratio(value: float, reference: float) -> float | None:
    """``value / reference``, or None when the reference is zero."""
    return round(value / reference, 2) if reference else None
