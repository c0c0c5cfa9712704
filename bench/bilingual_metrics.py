"""Scores of the evaluation matrix: per question, then per set, split, kind and size.

A system's answer to a question is a ranked list of hits, each citing some ids and
carrying a score. Over answerable questions: top-1 (the first hit cites a gold id),
R@5 and R@10 (share of the gold ids cited by the first 5 or 10 hits), and MRR (one
over the rank of the first hit citing a gold id, 0 past rank 10), all in percent.

The no-answer trade-off: with a floor on scores, a question gets nothing when its top
score is below the floor; a no-answer question is then answered right, and an
answerable question's gold hits below the floor are lost.

>>> hits = Ranked([frozenset({"b"}), frozenset({"a"})], [0.9, 0.5])
>>> o = outcome("s", "default", Question("q", "?", "en_en", frozenset({"a"})), "~15", "en", hits)
>>> o.rank, o.recall5, o.gold_scores
(2, 1.0, (0.5,))
>>> summarize([o])
{'n': 1, 'top1': 0.0, 'R@5': 100.0, 'R@10': 100.0, 'MRR': 50.0}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.bilingual_data import NOANSWER, SIZE_BUCKETS, Question

K_MAX = 10
FLOORS = tuple(round(step * 0.02, 2) for step in range(51))
MAX_GOLD_LOSS = 2.0  # percent of answerable gold hits a floor may lose (issue 10, item 3)
GROUPINGS = ("kind", "size", "languages")


@dataclass(frozen=True)
class Ranked:
    """What a system returned for one question: ids each hit cites, and its score."""

    cited: Sequence[frozenset[str]]
    scores: Sequence[float]


@dataclass(frozen=True)
class Outcome:
    """One system's result on one question, with what it is grouped by."""

    set: str
    system: str
    split: str
    kind: str
    size: str
    languages: str
    answerable: bool
    noanswer: bool
    rank: int | None  # 1-based rank of the first hit citing a gold id, within K_MAX
    recall5: float
    recall10: float
    top_score: float | None  # None: nothing returned
    gold_scores: tuple[float, ...]  # scores of the hits (within K_MAX) citing a gold id


def outcome(
    set_name: str, system: str, question: Question, size: str, languages: str, ranked: Ranked
) -> Outcome:
    """Score one ranked answer."""
    cited = list(ranked.cited)[:K_MAX]
    gold = question.gold
    rank = next((n + 1 for n, ids in enumerate(cited) if ids & gold), None) if gold else None
    return Outcome(
        set=set_name,
        system=system,
        split=question.split,
        kind=question.kind,
        size=size,
        languages=languages,
        answerable=question.answerable,
        noanswer=question.labelled and question.kind == NOANSWER,
        rank=rank,
        recall5=_recall(gold, cited, 5),
        recall10=_recall(gold, cited, 10),
        top_score=float(ranked.scores[0]) if ranked.scores else None,
        gold_scores=tuple(
            float(s) for ids, s in zip(cited, ranked.scores, strict=False) if ids & gold
        ),
    )


def _recall(gold: frozenset[str], cited: Sequence[frozenset[str]], k: int) -> float:
    if not gold:
        return 0.0
    found: set[str] = set().union(*cited[:k]) if cited[:k] else set()
    return len(gold & found) / len(gold)


def summarize(outcomes: Iterable[Outcome]) -> dict[str, float]:
    """top-1, R@5, R@10 and MRR in percent over the answerable outcomes, and their count."""
    rows = [o for o in outcomes if o.answerable]
    if not rows:
        return {"n": 0, "top1": 0.0, "R@5": 0.0, "R@10": 0.0, "MRR": 0.0}
    n = len(rows)

    def percent(values: Iterable[float]) -> float:
        return round(100.0 * sum(values) / n, 2)

    return {
        "n": n,
        "top1": percent(1.0 if o.rank == 1 else 0.0 for o in rows),
        "R@5": percent(o.recall5 for o in rows),
        "R@10": percent(o.recall10 for o in rows),
        "MRR": percent(1.0 / o.rank if o.rank else 0.0 for o in rows),
    }


def group(outcomes: Iterable[Outcome], key: Callable[[Outcome], str]) -> dict[str, list[Outcome]]:
    """Outcomes by ``key``, keys sorted."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for row in outcomes:
        groups[key(row)].append(row)
    return dict(sorted(groups.items()))


def breakdown(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The overall summary and one per kind, size bucket and memory language."""
    table: dict[str, Any] = {"overall": summarize(outcomes)}
    for grouping in GROUPINGS:
        by_value = group(outcomes, lambda o, field=grouping: str(getattr(o, field)))
        if grouping == "size":
            by_value = dict(sorted(by_value.items(), key=lambda item: _size_rank(item[0])))
        table[grouping] = {
            value: summarize(rows)
            for value, rows in by_value.items()
            if any(r.answerable for r in rows)
        }
    return table


def _size_rank(bucket: str) -> int:
    return SIZE_BUCKETS.index(bucket) if bucket in SIZE_BUCKETS else len(SIZE_BUCKETS)


def worst_kind(default: dict[str, Any], cosine: dict[str, Any]) -> dict[str, Any] | None:
    """The kind where the default's top-1 minus plain cosine's is lowest, with both values."""
    kinds = sorted(set(default["kind"]) & set(cosine["kind"]))
    if not kinds:
        return None
    gaps = {k: default["kind"][k]["top1"] - cosine["kind"][k]["top1"] for k in kinds}
    kind = min(kinds, key=lambda k: (gaps[k], k))
    return {
        "kind": kind,
        "default_top1": default["kind"][kind]["top1"],
        "cosine_top1": cosine["kind"][kind]["top1"],
        "n": default["kind"][kind]["n"],
    }


def floor_curve(outcomes: Sequence[Outcome], floors: Sequence[float] = FLOORS) -> dict[str, Any]:
    """For each floor, the share (percent) of no-answer questions given nothing and of
    answerable gold hits lost, with the counts they are shares of."""
    blanks = [o.top_score for o in outcomes if o.noanswer]
    gold = [s for o in outcomes if o.answerable for s in o.gold_scores]
    rows = []
    for floor in floors:
        empty = sum(1 for top in blanks if top is None or top < floor)
        lost = sum(1 for score in gold if score < floor)
        rows.append(
            {
                "floor": floor,
                "noanswer_empty": round(100.0 * empty / len(blanks), 2) if blanks else None,
                "gold_lost": round(100.0 * lost / len(gold), 2) if gold else None,
            }
        )
    return {"n_noanswer": len(blanks), "n_gold": len(gold), "rows": rows}


def highest_floor(curve: dict[str, Any], max_loss: float = MAX_GOLD_LOSS) -> float | None:
    """The highest floor losing at most ``max_loss`` percent of the answerable gold hits.

    >>> highest_floor({"rows": [{"floor": 0.0, "gold_lost": 0.0},
    ...                         {"floor": 0.5, "gold_lost": 1.5}, {"floor": 0.6, "gold_lost": 9.0}]})
    0.5
    """
    allowed = [
        r["floor"]
        for r in curve["rows"]
        if r["gold_lost"] is not None and r["gold_lost"] <= max_loss
    ]
    return max(allowed) if allowed else None
