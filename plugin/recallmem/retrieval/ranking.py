"""Pure scoring: dense and lexical relevance fused with recency and confidence.

Every part is mapped to [0, 1] before the weighted sum, so the weights mean what they
say and the parts shown to users are comparable. The weights are measured on the
development splits of the benchmarks (docs/benchmarks.md), not guessed.

>>> import numpy as np
>>> parts = score_parts(np.array([0.9, 0.2]), np.array([0.0, 4.0]),
...                     np.array([0.0, 0.0]), np.array([0.9, 0.9]), Weights())
>>> int(np.argmax(fuse(parts, Weights())))
0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Weights:
    """How much each part counts; they need not sum to one."""

    dense: float = 0.8
    lexical: float = 0.12
    recency: float = 0.04
    confidence: float = 0.04
    half_life_days: float = 30.0


@dataclass(frozen=True)
class Parts:
    """The per-candidate parts of a score, each in [0, 1]."""

    dense: np.ndarray
    lexical: np.ndarray
    recency: np.ndarray
    confidence: np.ndarray


def score_parts(
    cosine: np.ndarray,
    bm25: np.ndarray,
    age_days: np.ndarray,
    confidence: np.ndarray,
    weights: Weights,
) -> Parts:
    """Map raw signals to [0, 1]: cosine clipped, BM25 over its best, recency halved per
    half-life."""
    top = float(bm25.max()) if bm25.size else 0.0
    lexical = bm25 / top if top > 0 else np.zeros_like(bm25)
    recency = np.power(0.5, np.maximum(age_days, 0.0) / weights.half_life_days)
    return Parts(
        dense=np.clip(cosine, 0.0, 1.0),
        lexical=lexical.astype(np.float32),
        recency=recency.astype(np.float32),
        confidence=np.clip(confidence, 0.0, 1.0),
    )


def fuse(parts: Parts, weights: Weights) -> np.ndarray:
    """The weighted sum of the parts."""
    return (
        weights.dense * parts.dense
        + weights.lexical * parts.lexical
        + weights.recency * parts.recency
        + weights.confidence * parts.confidence
    )


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indexes of the ``k`` highest scores, best first (ties keep the lower index)."""
    if k <= 0 or not scores.size:
        return np.zeros(0, dtype=np.int64)
    if k < scores.size:
        candidates = np.argpartition(-scores, k - 1)[:k]
    else:
        candidates = np.arange(scores.size)
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]
