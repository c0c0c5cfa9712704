"""The bilingual evaluation matrix (issue 10): ``python -m bench bilingual``.

Every set (the blind bilingual sets in ``bench/data/bilingual/``, their mixed users
padded with 1,000 distractors, LoCoMo at fact and turn level, MADial, MemoryBank-CN) is
stored through the public ``Memory`` API with the default configuration, every fact
with the time it was said, and every question is a ``recall(..., k=10, min_score=None)``.
The same texts are also ranked by plain cosine over the same USE vectors and by BM25
alone, from one embedding of each text. Questions are split per question (sha1 of the
id: even is dev, odd is test; test is the result). ``evaluate`` runs the blind sets
through any ranking function in seconds, without Chroma, for ranking experiments.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from recallmem.retrieval.ranking import top_k

from bench.bilingual_cache import Asked, Candidates, RunEncoder, default_cache_file
from bench.bilingual_data import (
    PAD_DISTRACTORS,
    SPLITS,
    EvalSet,
    distractor_pools,
    load_blind_sets,
    load_locomo_set,
    load_madial_set,
    load_memorybank_set,
    padded_set,
)
from bench.bilingual_metrics import (
    K_MAX,
    Outcome,
    Ranked,
    breakdown,
    floor_curve,
    highest_floor,
    outcome,
    worst_kind,
)
from bench.bilingual_public import recall_takes_now, run_default
from bench.metrics import percentiles_ms

RankFn = Callable[[Candidates, Asked], np.ndarray]
SYSTEMS = ("default", "cosine", "bm25")
POOLED = "bilingual (all blind sets)"
POOLED_PAD = "bilingual+pad (all blind sets)"
FLOOR_SETS = "the blind sets (own users) and locomo-fact"  # where the floor is measured
DEFAULT_CACHE = default_cache_file()


def cosine_rank(candidates: Candidates, asked: Asked) -> np.ndarray:
    """Plain cosine over the USE vectors (a reference ``rank_fn``)."""
    return asked.cosine


def bm25_rank(candidates: Candidates, asked: Asked) -> np.ndarray:
    """BM25 alone (a reference ``rank_fn``)."""
    return asked.bm25


def ranked_by(scores: np.ndarray, candidates: Candidates) -> Ranked:
    """The first ``K_MAX`` facts by score, best first (ties keep the earlier fact)."""
    order = top_k(np.asarray(scores, dtype=np.float64), K_MAX)
    return Ranked([candidates.cites[i] for i in order], [float(scores[i]) for i in order])


# --- sets --------------------------------------------------------------------------------


def build_sets(
    quick: bool = False, folder: Path | None = None, public: bool = True
) -> list[EvalSet]:
    """Every set of the matrix, blind sets and their padded variants first (only those
    without ``public``); ``quick`` keeps one user of each public benchmark and pads with
    100 distractors."""
    locomo_fact, madial, memorybank = (
        load_locomo_set("fact"),
        load_madial_set(),
        load_memorybank_set(),
    )
    english, chinese = distractor_pools(locomo_fact, madial, memorybank)
    if quick:
        english, chinese = english[:300], chinese[:300]
    blind = load_blind_sets(folder)
    pads = [padded_set(s, english, chinese, 100 if quick else PAD_DISTRACTORS) for s in blind]
    sets = [*blind, *(p for p in pads if p.users)]
    if not public:
        return sets
    others = [locomo_fact, load_locomo_set("turn"), madial, memorybank]
    if quick:
        others = [EvalSet(s.name, s.source, s.users[:1]) for s in others]
    return [*sets, *others]


# --- scoring a set --------------------------------------------------------------------------


def score_set(
    eval_set: EvalSet,
    encoder: RunEncoder,
    systems: dict[str, RankFn],
    given: dict[str, dict[str, dict[str, Ranked]]] | None = None,
) -> list[Outcome]:
    """Outcomes of every question of the set, for each ranking function and each
    system whose answers are ``given`` (system -> user -> question id -> Ranked)."""
    outcomes: list[Outcome] = []
    for user in eval_set.users:
        candidates = Candidates.build(user, encoder)
        for question in user.questions:
            asked = candidates.ask(question, encoder)
            for name, answers in (given or {}).items():
                ranked = answers[user.user_id][question.id]
                outcomes.append(
                    outcome(eval_set.name, name, question, user.size, user.languages, ranked)
                )
            for name, rank_fn in systems.items():
                ranked = ranked_by(rank_fn(candidates, asked), candidates)
                outcomes.append(
                    outcome(eval_set.name, name, question, user.size, user.languages, ranked)
                )
    return outcomes


def tables(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """set -> system -> split -> breakdown (overall, per kind, size, languages)."""
    result: dict[str, Any] = {}
    for row in outcomes:
        result.setdefault(row.set, {}).setdefault(row.system, {})
    for set_name, by_system in result.items():
        for system in by_system:
            rows = [o for o in outcomes if o.set == set_name and o.system == system]
            by_system[system] = {s: breakdown([o for o in rows if o.split == s]) for s in SPLITS}
    return result


def pooled(
    outcomes: Sequence[Outcome], sources: dict[str, str], source: str, label: str
) -> list[Outcome]:
    """The outcomes of every set from ``source``, relabelled as one set ``label``."""
    return [replace(o, set=label) for o in outcomes if sources.get(o.set) == source]


# --- the fast hook for ranking experiments -------------------------------------------------


@cache
def _prepared(
    folder: Path | None, with_padding: bool, public: bool, cache_file: Path | None
) -> list[tuple[EvalSet, list[tuple[Candidates, list[Asked]]]]]:
    encoder = RunEncoder(cache_file)
    sets = build_sets(folder=folder, public=public)
    if not with_padding:
        sets = [s for s in sets if s.source != "blind-padded"]
    prepared = []
    for eval_set in sets:
        users = []
        for user in eval_set.users:
            candidates = Candidates.build(user, encoder)
            users.append((candidates, [candidates.ask(q, encoder) for q in user.questions]))
        prepared.append((eval_set, users))
    encoder.save()
    return prepared


def evaluate(
    rank_fn: RankFn,
    split: str = "dev",
    *,
    padded: bool = True,
    public: bool = False,
    folder: Path | None = None,
    cache_file: Path | None = DEFAULT_CACHE,
) -> dict[str, Any]:
    """Score a ranking function on the blind sets (and optionally the public benchmarks)
    from cached candidates, without Chroma.

    Args:
        rank_fn: ``rank_fn(candidates, asked) -> scores``: given one user's
            ``bench.bilingual_cache.Candidates`` (``texts``, ``vectors`` (n, 512) unit
            rows, ``said_at`` POSIX seconds (NaN unknown), ``categories``, ``cites``,
            ``user``) and one ``Asked`` question (``question`` with ``text``, ``kind``,
            ``gold``; ``vector``; ``cosine`` and ``bm25``: per-fact arrays; ``asked_at``
            POSIX seconds or NaN), a float array of one score per fact, higher first.
            ``cosine_rank`` and ``bm25_rank`` in this module are two such functions.
        split: ``dev`` (tune here), ``test`` (look once) or ``all``.
        padded: also score the padded variants (each mixed user plus 1,000 distractors).
        public: also score LoCoMo (fact and turn level), MADial and MemoryBank-CN, as in
            the full run (slower: their candidates are built on the first call).
        folder: where the blind sets are (``bench/data/bilingual`` by default).
        cache_file: where vectors are kept between calls and runs (None: in memory only).

    Returns:
        ``{set name: breakdown}`` plus the pooled ``"bilingual (all blind sets)"`` (and
        ``"bilingual+pad (all blind sets)"``); a breakdown is ``{"overall": m, "kind":
        {kind: m}, "size": {...}, "languages": {...}}`` with ``m = {"n", "top1", "R@5",
        "R@10", "MRR"}`` in percent over answerable questions, as in bilingual.json.
        The first call embeds what the vector cache lacks; later calls take seconds.
    """
    if split not in (*SPLITS, "all"):
        raise ValueError(f"unknown split {split!r}; use 'dev', 'test' or 'all'")
    prepared = _prepared(folder, padded, public, cache_file)
    outcomes: list[Outcome] = []
    for eval_set, users in prepared:
        for candidates, asked_all in users:
            for asked in asked_all:
                if split != "all" and asked.question.split != split:
                    continue
                ranked = ranked_by(rank_fn(candidates, asked), candidates)
                outcomes.append(
                    outcome(
                        eval_set.name,
                        "candidate",
                        asked.question,
                        candidates.user.size,
                        candidates.user.languages,
                        ranked,
                    )
                )
    sources = {s.name: s.source for s, _ in prepared}
    result = {name: breakdown(rows) for name, rows in _by_set(outcomes).items()}
    result[POOLED] = breakdown(pooled(outcomes, sources, "blind", POOLED))
    if padded:
        result[POOLED_PAD] = breakdown(pooled(outcomes, sources, "blind-padded", POOLED_PAD))
    return result


def _by_set(outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    groups: dict[str, list[Outcome]] = {}
    for row in outcomes:
        groups.setdefault(row.set, []).append(row)
    return groups


# --- the whole matrix ------------------------------------------------------------------------


def measure(quick: bool = False, folder: Path | None = None) -> dict[str, Any]:
    """Run every set through every system; the payload saved as bilingual.json."""
    encoder = RunEncoder(None if quick else DEFAULT_CACHE)
    sets = build_sets(quick, folder)
    sources = {s.name: s.source for s in sets}
    outcomes: list[Outcome] = []
    latency: dict[str, Any] = {}
    started = time.perf_counter()
    for eval_set in sets:
        print(
            f"  {eval_set.name}: {len(eval_set.users)} users, {eval_set.n_facts} facts, "
            f"{eval_set.n_questions} questions",
            flush=True,
        )
        run = run_default(eval_set, encoder)
        latency[eval_set.name] = {
            "facts": eval_set.n_facts,
            "merged": run.merged,
            **percentiles_ms(run.durations),
        }
        systems = {"cosine": cosine_rank, "bm25": bm25_rank}
        outcomes += score_set(eval_set, encoder, systems, {"default": run.answers})
    encoder.save()
    outcomes += pooled(outcomes, sources, "blind", POOLED)
    outcomes += pooled(outcomes, sources, "blind-padded", POOLED_PAD)
    return assemble(outcomes, sets, latency, time.perf_counter() - started)


def floors(outcomes: Sequence[Outcome], sets: Sequence[EvalSet]) -> dict[str, Any]:
    """The no-answer curves: pooled over the blind sets and LoCoMo fact level for the
    default and plain cosine, and per source for the default; the floor chosen on dev."""
    sources = {
        "blind": {s.name for s in sets if s.source == "blind"},
        "locomo-fact": {"locomo-fact"} & {s.name for s in sets},
    }
    pooled_sets = sources["blind"] | sources["locomo-fact"]

    def curve(system: str, split: str, names: set[str]) -> dict[str, Any]:
        rows = [o for o in outcomes if o.system == system and o.split == split and o.set in names]
        return floor_curve(rows)

    by_source = {
        label: {split: curve("default", split, names) for split in SPLITS}
        for label, names in sources.items()
        if names
    }
    pooled_curves = {
        system: {split: curve(system, split, pooled_sets) for split in SPLITS}
        for system in ("default", "cosine")
    }
    return {
        "sets": FLOOR_SETS,
        "curves": pooled_curves,
        "by_source": by_source,
        "chosen_dev": highest_floor(pooled_curves["default"]["dev"]),
        "chosen_dev_by_source": {label: highest_floor(c["dev"]) for label, c in by_source.items()},
    }


def assemble(
    outcomes: Sequence[Outcome], sets: Sequence[EvalSet], latency: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """The saved payload: tables, worst kinds, the floor curve and the run's facts."""
    by_set = tables(outcomes)
    worst = {
        name: {s: worst_kind(systems["default"][s], systems["cosine"][s]) for s in SPLITS}
        for name, systems in by_set.items()
        if "default" in systems and "cosine" in systems
    }
    floor = floors(outcomes, sets)
    unlabelled = [
        o
        for o in outcomes
        if o.set == "memorybank-cn" and o.kind == "unlabelled" and o.system == "default"
    ]
    return {
        "sets": {
            s.name: {
                "source": s.source,
                "users": len(s.users),
                "facts": s.n_facts,
                "questions": s.n_questions,
            }
            for s in sets
        },
        "results": by_set,
        "worst_kind": worst,
        "floor": floor,
        "memorybank_unlabelled": {
            "questions": len(unlabelled),
            "above_floor": sum(
                1
                for o in unlabelled
                if o.top_score is not None
                and floor["chosen_dev"] is not None
                and o.top_score >= floor["chosen_dev"]
            ),
            "mean_top_score": round(
                float(np.mean([o.top_score for o in unlabelled if o.top_score is not None])), 4
            )
            if unlabelled
            else None,
        },
        "recall_ms": latency,
        "asked_at_used": recall_takes_now(),
        "run_seconds": round(seconds, 1),
    }
