"""One query's scores over one user's candidates: the parts, their weights, their sum.

The one place the ranking policy is applied, so the hot index (``retrieval.index``) and
the ranking benchmarks (``bench/bilingual.py``) score exactly alike: the weights for the
query's script, lexical evidence trusted as ``ranking.lexical_trust`` says, and the
time part when the query names a window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recallmem.retrieval.evidence import coverage
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import Lexicon
from recallmem.retrieval.ranking import (
    Parts,
    Weights,
    calibrated,
    fuse,
    lexical_trust,
    score_parts,
    translation_gate,
)
from recallmem.retrieval.when import TimeWindow
from recallmem.text import mostly_cjk


@dataclass(frozen=True)
class Scope:
    """The facts in a query's scope, as arrays (``rows`` of the lexical index)."""

    cosine: np.ndarray
    cjk: np.ndarray  # bool: the fact is mostly in CJK characters
    age_days: np.ndarray
    confidence: np.ndarray
    said_at: np.ndarray  # POSIX seconds, NaN when unknown
    rows: np.ndarray  # each candidate's row in ``lexical``


@dataclass(frozen=True)
class Scored:
    """Every candidate's score, the parts it is the weighted sum of, and the weights."""

    scores: np.ndarray
    parts: Parts
    weights: Weights


def relevance(
    text: str,
    candidates: Scope,
    lexical: LexicalIndex,
    lexicon: Lexicon | None,
    weights: Weights,
    window: TimeWindow | None,
) -> Scored:
    """Score the candidates for the query ``text``; ``score = sum(weight * part)``."""
    same_script = candidates.cjk == mostly_cjk(text)
    weights = weights.for_query(text, one_script=bool(same_script.all()))
    evidence = coverage(lexical, text, lexicon, length_b=weights.length_b)[candidates.rows]
    evidence = calibrated(evidence, weights.evidence_floor)
    trust = lexical_trust(same_script, candidates.cosine, weights.trust_top)
    trust = trust * translation_gate(same_script, candidates.cosine, weights.translation_margin)
    parts = score_parts(
        candidates.cosine,
        evidence * trust,
        candidates.age_days,
        candidates.confidence,
        weights,
        said_at=candidates.said_at,
        window=window,
    )
    return Scored(fuse(parts, weights), parts, weights)
