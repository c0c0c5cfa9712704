"""The learned fusion (issue 10): train, cross-validate, report. ``python -m bench.bilingual_learned``.

Features are ``recallmem.retrieval.learned.FEATURES``, read from what the default
ranking computes per (question, fact) (``bench.bilingual_tuning.score_with``: the
nearest cosine, the calibrated, trusted, gated lexical evidence, the time part). The
model is a pairwise logistic regression without intercept: each gold fact against the
top ``NEGATIVES`` non-gold facts by cosine and the top ``NEGATIVES // 2`` by the default
score, each question weighing 1, weights kept non-negative, every weight but the dense
one shrunk by an L2 penalty ``L2`` (fixed beforehand, not tuned on the held-out sets).
Weights are rescaled so the dense weight is the default's (0.8), so scores stay on the
scale the injection floor was measured on.

Choosing honestly: leave one blind set out (train on the other two, their padded
variants and the dev splits of LoCoMo fact, MADial and MemoryBank-CN; score the held-out
set and its padded variant, every question), and the public test splits with a model
trained on all three blind sets. The shipped model is trained on all of it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from recallmem.retrieval.ranking import Weights
from recallmem.text.words import mostly_cjk

from bench.bilingual import DEFAULT_CACHE, _prepared, ranked_by
from bench.bilingual_cache import Candidates
from bench.bilingual_data import Question
from bench.bilingual_features import FEATURES, LearnedModel, closeness, lexical_features
from bench.bilingual_metrics import Outcome, breakdown, outcome
from bench.bilingual_tuning import save_vectors, score_with
from bench.report import markdown_table, save_results, write_section

BLIND = ("set_a", "set_b", "set_c")
PUBLIC_TRAIN = ("locomo-fact", "madial", "memorybank-cn")  # their dev splits
PUBLIC_TEST = ("locomo-fact", "madial")  # their test splits
NEGATIVES = 20
L2 = 0.003
DENSE_SCALE = Weights().dense
SYSTEMS = ("learned", "default", "cosine")


@dataclass
class Case:
    """One question over one user: every fact's features, default score and cosine."""

    set: str
    question: Question
    candidates: Candidates
    features: np.ndarray  # (n, len(FEATURES))
    default: np.ndarray
    cosine: np.ndarray
    gold: np.ndarray  # bool per fact


def _case(set_name: str, candidates: Candidates, asked: Any, now: datetime) -> Case:
    scoring = score_with(Weights(), candidates, asked, now)
    parts = scoring.scored.parts
    text = asked.question.text
    lexical = lexical_features(
        parts.lexical,
        scoring.cosine,
        scoring.same_script,
        cjk_query=mostly_cjk(text),
        one_line=scoring.one_line,
    )
    time = parts.time if parts.time is not None else np.zeros(len(candidates.texts))
    features = np.column_stack([parts.dense, closeness(scoring.cosine), lexical, time]).astype(
        np.float32
    )
    gold = np.fromiter(
        (bool(c & asked.question.gold) for c in candidates.cites), bool, len(candidates.cites)
    )
    return Case(
        set_name, asked.question, candidates, features, scoring.scored.scores, scoring.cosine, gold
    )


def collect() -> list[Case]:
    """Every case of the blind sets, their padded variants and the public sets used."""
    now = datetime.now(UTC)
    wanted = {*BLIND, *(f"{b}+pad" for b in BLIND), *PUBLIC_TRAIN}
    cases = []
    for eval_set, users in _prepared(None, True, True, DEFAULT_CACHE):
        if eval_set.name not in wanted:
            continue
        for candidates, asked_all in users:
            cases.extend(_case(eval_set.name, candidates, a, now) for a in asked_all)
    save_vectors()
    return cases


def _pairs(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """Difference rows (gold minus negative) and their weights (the question sums to 1)."""
    gold = np.flatnonzero(case.gold)
    if not gold.size:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    others = np.flatnonzero(~case.gold)
    by_cosine = others[np.argsort(-case.cosine[others], kind="stable")[:NEGATIVES]]
    by_default = others[np.argsort(-case.default[others], kind="stable")[: NEGATIVES // 2]]
    negatives = np.union1d(by_cosine, by_default)
    if not negatives.size:
        return np.zeros((0, len(FEATURES))), np.zeros(0)
    diff = (case.features[gold][:, None, :] - case.features[negatives][None, :, :]).reshape(
        -1, len(FEATURES)
    )
    return diff, np.full(diff.shape[0], 1.0 / diff.shape[0])


def training_cases(cases: Iterable[Case], blind: Sequence[str]) -> list[Case]:
    """The blind sets named (and their padded variants, every question) and the public
    sets' dev splits."""
    sets = {*blind, *(f"{b}+pad" for b in blind)}
    return [
        c for c in cases if c.set in sets or (c.set in PUBLIC_TRAIN and c.question.split == "dev")
    ]


def train(cases: Sequence[Case], l2: float = L2, steps: int = 100) -> LearnedModel:
    """Pairwise logistic regression, non-negative weights, by projected Newton steps."""
    rows, weights = zip(*(_pairs(c) for c in cases), strict=True)
    diff = np.concatenate(rows).astype(np.float64)
    weight = np.concatenate(weights)
    weight = weight / weight.sum()
    penalty = np.full(len(FEATURES), l2)
    penalty[0] = 1e-6  # the dense weight sets the scale; only the others are shrunk

    def loss(w: np.ndarray) -> float:
        margin = np.clip(diff @ w, -50, 50)
        return float(weight @ np.log1p(np.exp(-margin)) + 0.5 * penalty @ (w * w))

    w = np.zeros(len(FEATURES))
    w[0] = 1.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(np.clip(diff @ w, -50, 50)))  # P(wrong order)
        grad = -(diff * (weight * p)[:, None]).sum(axis=0) + penalty * w
        hess = (diff * (weight * p * (1 - p))[:, None]).T @ diff + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        size, before = 1.0, loss(w)
        new = np.maximum(w - step, 0.0)
        while loss(new) > before and size > 1e-4:  # projected Newton, backtracking
            size /= 2
            new = np.maximum(w - size * step, 0.0)
        if np.abs(new - w).max() < 1e-7 * max(1.0, float(np.abs(w).max())):
            w = new
            break
        w = new
    scaled = w * (DENSE_SCALE / w[0])
    return LearnedModel.from_mapping(
        {n: round(float(v), 4) for n, v in zip(FEATURES, scaled, strict=True)}
    )


def learned_scores(model: LearnedModel, case: Case) -> np.ndarray:
    """The learned score (recency and confidence equal for every benchmark fact: left out)."""
    scores: np.ndarray = case.features @ np.array(model.weights, dtype=np.float32)
    return scores


def outcomes(cases: Iterable[Case], model: LearnedModel) -> list[Outcome]:
    """Each case ranked by the learned model, the default and plain cosine."""
    rows = []
    for case in cases:
        user = case.candidates.user
        for system, scores in (
            ("learned", learned_scores(model, case)),
            ("default", case.default),
            ("cosine", case.cosine),
        ):
            ranked = ranked_by(scores, case.candidates)
            rows.append(outcome(case.set, system, case.question, user.size, user.languages, ranked))
    return rows


def _tables(rows: Sequence[Outcome]) -> dict[str, Any]:
    """set -> system -> breakdown."""
    result: dict[str, Any] = {}
    for set_name in dict.fromkeys(r.set for r in rows):
        result[set_name] = {
            s: breakdown([r for r in rows if r.set == set_name and r.system == s]) for s in SYSTEMS
        }
    return result


def cross_validate(cases: Sequence[Case]) -> dict[str, Any]:
    """Leave-one-blind-set-out and the public test splits; the models trained for each."""
    folds: dict[str, Any] = {}
    for held in BLIND:
        model = train(training_cases(cases, [b for b in BLIND if b != held]))
        scored = [c for c in cases if c.set in (held, f"{held}+pad")]
        folds[held] = {"model": model.as_mapping(), "tables": _tables(outcomes(scored, model))}
    model = train(training_cases(cases, BLIND))
    test = [c for c in cases if c.set in PUBLIC_TEST and c.question.split == "test"]
    folds["public-test"] = {"model": model.as_mapping(), "tables": _tables(outcomes(test, model))}
    return folds


def kinds_below_cosine(tables: dict[str, Any], system: str) -> list[str]:
    """``set/kind`` where ``system``'s top-1 is below plain cosine's."""
    below = []
    for set_name, by_system in tables.items():
        for kind, m in by_system[system]["kind"].items():
            if m["top1"] < by_system["cosine"]["kind"][kind]["top1"]:
                below.append(f"{set_name}/{kind}")
    return below


def verdict(folds: dict[str, Any]) -> dict[str, Any]:
    """Whether the learned model may ship as the default (the rule set in issue 10's brief)."""
    every = {s: t for f in folds.values() for s, t in f["tables"].items()}
    worse = [
        f"{s} {metric}"
        for s, t in every.items()
        for metric in ("top1", "R@10")
        if t["learned"]["overall"][metric] < t["default"]["overall"][metric]
    ]
    public = folds["public-test"]["tables"]
    floors = {"locomo-fact": 65.0, "madial": 77.2}
    short = [s for s, f in floors.items() if public[s]["learned"]["overall"]["R@10"] < f]
    blind_tables = {s: t for f in BLIND for s, t in folds[f]["tables"].items()}
    learned_below = kinds_below_cosine(blind_tables, "learned")
    default_below = kinds_below_cosine(blind_tables, "default")
    ships = not worse and not short and len(learned_below) < len(default_below)
    return {
        "ships": ships,
        "worse_than_default": worse,
        "public_below_floor": short,
        "kinds_below_cosine": {"learned": learned_below, "default": default_below},
    }


def report(folds: dict[str, Any], check: dict[str, Any], final: LearnedModel) -> str:
    """The markdown section: per held-out set and kind, learned vs default vs cosine."""
    rows = []
    for fold, data in folds.items():
        for set_name, t in data["tables"].items():
            for kind, m in [("overall", t["learned"]["overall"]), *t["learned"]["kind"].items()]:
                d = t["default"]["overall"] if kind == "overall" else t["default"]["kind"][kind]
                c = t["cosine"]["overall"] if kind == "overall" else t["cosine"]["kind"][kind]
                rows.append(
                    [
                        fold,
                        set_name,
                        kind,
                        m["n"],
                        m["top1"],
                        d["top1"],
                        c["top1"],
                        m["R@10"],
                        d["R@10"],
                        c["R@10"],
                    ]
                )
    table = markdown_table(
        [
            "held out",
            "set",
            "kind",
            "n",
            "learned top-1",
            "default top-1",
            "cosine top-1",
            "learned R@10",
            "default R@10",
            "cosine R@10",
        ],
        rows,
    )
    weights = ", ".join(f"{n} {w}" for n, w in final.as_mapping().items())
    below = check["kinds_below_cosine"]
    return "\n".join(
        [
            "Learned fusion, cross-validated (`python -m bench.bilingual_learned`): "
            "leave one blind set out (every question of it and of its padded variant), "
            "and the public test splits with a model trained on all three blind sets.",
            "",
            table,
            "",
            f"Kinds below cosine (top-1, held-out blind sets): learned {len(below['learned'])} "
            f"({', '.join(below['learned']) or 'none'}); default {len(below['default'])} "
            f"({', '.join(below['default']) or 'none'}).",
            f"Worse than the default overall: {', '.join(check['worse_than_default']) or 'none'}; "
            f"public R@10 below the floor: {', '.join(check['public_below_floor']) or 'none'}.",
            f"Ships as the default: {'yes' if check['ships'] else 'no'}.",
            f"Model trained on all the training data: {weights}.",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Train, cross-validate, write the figures, the section and the final model."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    cases = collect()
    folds = cross_validate(cases)
    check = verdict(folds)
    final = train(training_cases(cases, BLIND))
    body = report(folds, check, final)
    print(body)
    if not args.no_write:
        payload = {"folds": folds, "verdict": check, "final": final.as_mapping(), "l2": L2}
        save_results("bilingual_learned", payload)
        write_section("bilingual-learned", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
