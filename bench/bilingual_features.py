"""The learned fusion's features and weights: a score as a dot product of a few named features.

The hand-tuned fusion (``recallmem.retrieval.fusion.relevance``) gives lexical evidence
one weight per query script. Here the same calibrated, trusted and gated lexical
evidence is split by a few cheap, general conditions, each a feature in [0, 1]: is the
fact near the nearest fact by meaning (``closeness``), is every candidate in the query's
script, is the fact in the other script (matched through translations only), is the
query written in words, is it one line; plus the cosine, the nearness itself and the
time part. The weights are learned pairwise by ``bench/bilingual_learned.py``.

Measured by leave-one-set-out it does not beat the hand-tuned default everywhere, so it
is not shipped (docs/benchmarks.md, "Learned fusion"); the model and its figures are
kept in ``bench/results/bilingual_learned.json``. It stays explainable in the hit's usual
parts: the lexical features fold into one lexical part ``sum(w_i * f_i) / sum(w_i)`` in
[0, 1] with weight ``sum(w_i)`` (all weights are non-negative), the dense ones likewise
into one dense part, so ``score = sum(weight * part)`` rebuilds as for the default.

>>> model = LearnedModel.from_mapping({"dense": 0.8, "lexical_close": 0.2, "time": 0.2})
>>> round(model.weight("lexical_close"), 2), model.weight("lexical_far")
(0.2, 0.0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

DENSE = "dense"
NEAR = "dense_near"  # how near the fact is to the nearest fact by meaning (``closeness``)
TIME = "time"
LEXICAL_FEATURES = (
    "lexical_close",  # lexical evidence x how near the fact is to the nearest by meaning
    "lexical_far",  # lexical evidence x (1 - that nearness)
    "lexical_one_script",  # lexical evidence, when every candidate is in the query's script
    "lexical_cross",  # lexical evidence of a fact in the other script (translations only)
    "lexical_words",  # lexical evidence, for a query written in words (not mostly CJK)
    "lexical_one_line",  # lexical evidence, for a query of one line (not a dialogue tail)
)
FEATURES = (DENSE, NEAR, *LEXICAL_FEATURES, TIME)
CLOSENESS_SPAN = 0.2  # a fact this far below the nearest fact's cosine is "far" (0 nearness)


class LearnedModelError(ValueError):
    """The learned weights are malformed; the message says which and how to fix it."""


@dataclass(frozen=True)
class LearnedModel:
    """Non-negative weights over ``FEATURES`` (a missing feature weighs 0)."""

    weights: tuple[float, ...]

    @classmethod
    def from_mapping(cls, raw: Mapping[str, object]) -> LearnedModel:
        """Validate ``{feature: weight}``: known names, finite non-negative numbers,
        a positive dense weight."""
        unknown = sorted(set(raw) - set(FEATURES))
        if unknown:
            raise LearnedModelError(
                f"unknown learned-fusion features {unknown}; known: {list(FEATURES)}"
            )
        values = []
        for name in FEATURES:
            value = raw.get(name, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise LearnedModelError(f"learned-fusion weight {name!r} must be a number")
            if not math.isfinite(value) or value < 0:
                raise LearnedModelError(
                    f"learned-fusion weight {name!r} is {value}; weights are finite and >= 0"
                )
            values.append(float(value))
        if values[0] <= 0:
            raise LearnedModelError("the learned fusion needs a positive 'dense' weight")
        return cls(tuple(values))

    def weight(self, name: str) -> float:
        """The weight of one feature."""
        return self.weights[FEATURES.index(name)]

    def as_mapping(self) -> dict[str, float]:
        """``{feature: weight}``, as saved."""
        return dict(zip(FEATURES, self.weights, strict=True))

    @property
    def lexical_weight(self) -> float:
        """The weight of the folded lexical part (the sum of the lexical weights)."""
        return sum(self.weight(n) for n in LEXICAL_FEATURES)


def load_model(text: str) -> LearnedModel:
    """A model from JSON ``text``: ``{"weights": {feature: weight}, ...}``, validated."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        raise LearnedModelError(f"learned-fusion weights are not JSON: {error}") from error
    if not isinstance(raw, dict) or not isinstance(raw.get("weights"), dict):
        raise LearnedModelError('learned-fusion file needs {"weights": {feature: number}}')
    return LearnedModel.from_mapping(raw["weights"])


def closeness(cosine: np.ndarray) -> np.ndarray:
    """1 for the nearest fact by meaning, falling to 0 at ``CLOSENESS_SPAN`` below it.

    >>> [round(float(x), 2) for x in closeness(np.array([0.8, 0.7, 0.5]))]
    [1.0, 0.5, 0.0]
    """
    if not cosine.size:
        return cosine.astype(np.float32)
    gap = float(cosine.max()) - cosine
    return np.clip(1.0 - gap / CLOSENESS_SPAN, 0.0, 1.0).astype(np.float32)


def lexical_features(
    lexical: np.ndarray,
    cosine: np.ndarray,
    same_script: np.ndarray,
    *,
    cjk_query: bool,
    one_line: bool,
) -> np.ndarray:
    """The ``LEXICAL_FEATURES`` columns, (n, 6): the trusted, gated lexical evidence
    split by the conditions named there."""
    near = closeness(cosine)
    one_script = float(bool(same_script.all()))
    return np.stack(
        [
            lexical * near,
            lexical * (1.0 - near),
            lexical * one_script,
            lexical * ~same_script,
            lexical * float(not cjk_query),
            lexical * float(one_line),
        ],
        axis=1,
    ).astype(np.float32)


def folded_lexical(model: LearnedModel, columns: np.ndarray) -> np.ndarray:
    """The one lexical part, ``sum(w_i * f_i) / sum(w_i)`` in [0, 1] (0 with no weight)."""
    total = model.lexical_weight
    if total <= 0:
        return np.zeros(columns.shape[0], dtype=np.float32)
    weights = np.array([model.weight(n) for n in LEXICAL_FEATURES], dtype=np.float32)
    return np.clip(columns @ weights / total, 0.0, 1.0).astype(np.float32)


def folded_dense(model: LearnedModel, cosine: np.ndarray, near: np.ndarray) -> np.ndarray:
    """The one dense part, the weighted mean of the clipped cosine and the nearness."""
    dense, nearness = model.weight(DENSE), model.weight(NEAR)
    folded = (dense * np.clip(cosine, 0.0, 1.0) + nearness * near) / (dense + nearness)
    return folded.astype(np.float32)


@dataclass(frozen=True)
class Folded:
    """A learned score as the hit's usual parts and weights: ``score = sum(w * part)``."""

    scores: np.ndarray
    parts: dict[str, np.ndarray]
    weights: dict[str, float]


def fold(model: LearnedModel, features: np.ndarray) -> Folded:
    """Score ``features`` (n, len(FEATURES)) and fold them into dense, lexical and time
    parts with one weight each; the scores equal ``features @ model.weights``."""
    dense_w = model.weight(DENSE) + model.weight(NEAR)
    lexical_columns = features[:, [FEATURES.index(n) for n in LEXICAL_FEATURES]]
    parts = {
        "dense": folded_dense(model, features[:, 0], features[:, FEATURES.index(NEAR)]),
        "lexical": folded_lexical(model, lexical_columns),
        "time": features[:, FEATURES.index(TIME)].astype(np.float32),
    }
    weights = {"dense": dense_w, "lexical": model.lexical_weight, "time": model.weight(TIME)}
    scores = sum(weights[name] * parts[name] for name in parts)
    return Folded(np.asarray(scores, dtype=np.float32), parts, weights)
