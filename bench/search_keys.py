"""What search keys are worth: ``python -m bench keys``.

Every measured set (``bench.keyed_sets``: the blind sets, the two-form sets when present,
LoCoMo at fact level and MADial) is stored through the public ``Memory`` API twice, in a
fresh home each time, with the default configuration: without keys, and with each fact's
keys as a model wrote them from the facts alone (``bench.keys_requests``; a fact whose
request has no reply yet has none). Every question, in each of its forms, is a
``recall(..., k=10, min_score=None)``. Beside them, on the same cached vectors, plain
cosine over the content and every way of using the keys (``bench.keyed_options``), scored
by the product's own ranking code.

Per question: the rank of the first gold fact, R@5 and R@10, whether every gold fact is
in the first five (``both@5``, for two-fact questions), whether the newer fact ranks
above the older one it replaces (``newer first``, for conflicts), the top score and the
gold scores (for the no-answer floor). The first run that has keys for ``set_i`` and
``set_j`` saves their figures to ``bench/results/keys_first_look.json``, once.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from recallmem.embedders import normalize_rows

from bench.bilingual import DEFAULT_CACHE
from bench.bilingual_cache import RunEncoder
from bench.bilingual_data import NOANSWER, EvalSet
from bench.bilingual_metrics import K_MAX, Ranked
from bench.bilingual_public import run_default
from bench.data import REPO_ROOT
from bench.keyed_options import OPTIONS, KeyedCandidates, option_rank
from bench.keyed_sets import CONFLICT, TWO_FACT, FormQuestion, keyed, keys_of, measured_sets
from bench.metrics import percentiles_ms

DEFAULT, WITH_KEYS, COSINE = "default", "default + keys", "cosine"
FIRST_LOOK = REPO_ROOT / "bench" / "results" / "keys_first_look.json"
FIRST_LOOK_SETS = ("set_i", "set_j")


@dataclass(frozen=True)
class Row:
    """One system's answer to one question in one form."""

    set: str
    system: str
    question: str
    kind: str
    form: str
    size: int  # facts of the user
    split: str
    answerable: bool
    rank: int | None  # of the first gold fact, within K_MAX
    recall5: float
    recall10: float
    both5: bool  # every gold fact in the first five
    newer_first: bool | None  # a conflict: the gold fact above the stale one
    top_score: float | None
    gold_scores: tuple[float, ...]


def _row(set_name: str, system: str, q: FormQuestion, size: int, ranked: Ranked) -> Row:
    cited = list(ranked.cited)[:K_MAX]
    gold = q.gold

    def first(ids: frozenset[str]) -> int | None:
        return next((n + 1 for n, c in enumerate(cited) if c & ids), None) if ids else None

    found5 = set().union(*cited[:5]) if cited[:5] else set()
    found10 = set().union(*cited) if cited else set()
    rank, stale = first(gold), first(q.stale)
    newer = None
    if q.kind == CONFLICT:
        newer = rank is not None and (stale is None or rank < stale)
    return Row(
        set=set_name, system=system, question=q.id, kind=q.kind, form=q.form, size=size,
        split="all" if q.form != "written" else q.split, answerable=q.answerable,
        rank=rank, recall5=len(gold & found5) / len(gold) if gold else 0.0,
        recall10=len(gold & found10) / len(gold) if gold else 0.0,
        both5=bool(gold) and gold <= found5, newer_first=newer,
        top_score=float(ranked.scores[0]) if ranked.scores else None,
        gold_scores=tuple(float(s) for c, s in zip(cited, ranked.scores, strict=False)
                          if c & gold),
    )  # fmt: skip


def _ranked(scores: np.ndarray, kc: KeyedCandidates) -> Ranked:
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores, np.float64)))[:K_MAX]
    return Ranked([kc.cites[i] for i in order], [float(scores[i]) for i in order])


def score_set(
    eval_set: EvalSet, encoder: RunEncoder, given: dict[str, Any], options: Sequence[str]
) -> list[Row]:
    """Rows of every question of the (keyed) set: the public-API runs ``given``
    (system -> user -> question id -> Ranked), plain cosine, and each option."""
    rows: list[Row] = []
    ranks = {name: option_rank(name, encoder) for name in options}
    for user in eval_set.users:
        kc = KeyedCandidates.build(user, encoder)
        vectors = normalize_rows(encoder.embed_array([q.text for q in user.questions]))
        for question, vector in zip(user.questions, vectors, strict=True):
            answers: dict[str, Ranked] = {n: g[user.user_id][question.id] for n, g in given.items()}
            answers[COSINE] = _ranked(kc.content @ vector, kc)
            for name, rank in ranks.items():
                answers[f"option: {name}"] = _ranked(rank(kc, question, vector), kc)
            size = len(user.facts)
            rows += [_row(eval_set.name, system, question, size, ranked)  # type: ignore[arg-type]
                     for system, ranked in answers.items()]  # fmt: skip
    return rows


def summary(rows: Iterable[Row]) -> dict[str, Any]:
    """top-1, R@5, R@10, MRR (percent, answerable questions), both@5 over two-fact
    questions and newer-first over conflicts, with their counts."""
    rows = list(rows)
    answerable = [r for r in rows if r.answerable]
    two = [r for r in answerable if r.kind == TWO_FACT]
    conflicts = [r for r in answerable if r.newer_first is not None]

    def percent(values: Sequence[float]) -> float | None:
        return round(100.0 * sum(values) / len(values), 1) if values else None

    return {
        "n": len(answerable),
        "top1": percent([r.rank == 1 for r in answerable]),
        "R@5": percent([r.recall5 for r in answerable]),
        "R@10": percent([r.recall10 for r in answerable]),
        "MRR": percent([1.0 / r.rank if r.rank else 0.0 for r in answerable]),
        "both@5": percent([r.both5 for r in two]),
        "n_two_fact": len(two),
        "newer_first": percent([bool(r.newer_first) for r in conflicts]),
        "n_conflict": len(conflicts),
    }


def floor_at(rows: Sequence[Row], floor: float) -> dict[str, Any]:
    """At ``floor``: the share of gold hits in the first ten lost, and of no-answer
    questions given nothing (percent)."""
    gold = [s for r in rows if r.answerable for s in r.gold_scores]
    blanks = [r.top_score for r in rows if r.kind == NOANSWER]
    return {
        "floor": floor,
        "gold_lost": round(100.0 * sum(s < floor for s in gold) / len(gold), 2) if gold else None,
        "noanswer_empty": round(100.0 * sum(t is None or t < floor for t in blanks)
                                / len(blanks), 2) if blanks else None,
        "n_gold": len(gold), "n_noanswer": len(blanks),
    }  # fmt: skip


def measure(
    public: bool = True, options: Sequence[str] = OPTIONS, only: Sequence[str] = ()
) -> dict[str, Any]:
    """Every measured set (or those named in ``only``) through every system; the payload
    saved as keys.json."""
    encoder = RunEncoder(DEFAULT_CACHE)
    rows: list[Row] = []
    sets: dict[str, Any] = {}
    latency: dict[str, Any] = {}
    started = time.perf_counter()
    for eval_set in measured_sets(public):
        if only and eval_set.name not in only:
            continue
        got = keys_of(eval_set)
        with_keys = keyed(eval_set, got["keys"])
        keyed_facts = sum(bool(got["keys"].get(f.id)) for u in eval_set.users for f in u.facts)
        print(f"  {eval_set.name}: {eval_set.n_facts} facts ({keyed_facts} keyed), "
              f"{eval_set.n_questions} questions", flush=True)  # fmt: skip
        runs = {DEFAULT: run_default(eval_set, encoder), WITH_KEYS: run_default(with_keys, encoder)}
        latency[eval_set.name] = {s: percentiles_ms(r.durations) for s, r in runs.items()}
        given = {s: r.answers for s, r in runs.items()}
        rows += score_set(with_keys, encoder, given, options)
        sets[eval_set.name] = {"source": eval_set.source, "facts": eval_set.n_facts,
                               "keyed_facts": keyed_facts, "questions": eval_set.n_questions,
                               "requests": got["requests"], "answered": got["answered"],
                               "keys": sum(map(len, got["keys"].values())),
                               "set_aside": len(got["set_aside"]),
                               "unreadable": got["unreadable"][:20]}  # fmt: skip
        encoder.save()
    return {"sets": sets, "rows": [asdict(r) for r in rows], "recall_ms": latency,
            "run_seconds": round(time.perf_counter() - started, 1)}  # fmt: skip


def rows_of(payload: dict[str, Any]) -> list[Row]:
    """The saved rows as ``Row`` objects."""
    return [Row(**{**r, "gold_scores": tuple(r["gold_scores"])}) for r in payload["rows"]]


def save_first_look(payload: dict[str, Any], commit: str) -> bool:
    """Save set_i/j's figures once, when every one of their facts' requests has a reply;
    never overwritten. True if this call saved them."""
    ready = all(payload["sets"].get(s, {}).get("answered") == payload["sets"].get(s, {})
                .get("requests", -1) for s in FIRST_LOOK_SETS)  # fmt: skip
    if FIRST_LOOK.exists() or not ready:
        return False
    chosen = [r for r in rows_of(payload) if r.set in FIRST_LOOK_SETS]
    look = {"commit": commit, "sets": {s: payload["sets"][s] for s in FIRST_LOOK_SETS},
            "summary": grouped(chosen, lambda r: r.system)}  # fmt: skip
    FIRST_LOOK.write_text(json.dumps(look, indent=1, ensure_ascii=False), encoding="utf-8")
    return True


def grouped(rows: Iterable[Row], key: Callable[[Row], str]) -> dict[str, Any]:
    """``summary`` per value of ``key``."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return {name: summary(group) for name, group in sorted(groups.items())}
