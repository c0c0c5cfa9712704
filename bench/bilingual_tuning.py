"""The default ranking as a ``rank_fn`` for ``bench.bilingual.evaluate``: ranking
experiments on cached vectors, in seconds, scored exactly as ``recall`` scores.

``default_rank`` runs ``recallmem.retrieval.fusion.relevance`` (what ``UserIndex.search``
runs) over a benchmark user's candidates; ``rank_with(weights)`` the same with other
weights. Recency and confidence are equal for every fact of a benchmark user (all are
stored at once, at the default confidence), so they are left at 1. A dialogue query's
last line is embedded as ``recall`` embeds it (through the run's vector cache).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
from recallmem.embedders import normalize_rows
from recallmem.retrieval.fusion import (
    Scope,
    Scored,
    centre_of,
    dialogue_tail,
    nearest_cosine,
    relevance,
)
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import Lexicon, default_lexicon
from recallmem.retrieval.ranking import Weights
from recallmem.retrieval.when import mentioned_window
from recallmem.text.words import has_cjk, mostly_cjk

from bench.bilingual_cache import Asked, Candidates, RunEncoder, default_cache_file

_INDEXES: dict[int, tuple[LexicalIndex, np.ndarray]] = {}
_ENCODER: list[RunEncoder] = []  # one, made on first need (loading USE takes seconds)


def _tail_vector(text: str) -> np.ndarray | None:
    tail = dialogue_tail(text)
    if tail is None:
        return None
    if not _ENCODER:
        _ENCODER.append(RunEncoder(default_cache_file()))
    vector: np.ndarray = normalize_rows(_ENCODER[0].embed_array([tail]))[0]
    return vector


def save_vectors() -> None:
    """Keep the dialogue tails' vectors in the run's cache for the next experiment."""
    if _ENCODER:
        _ENCODER[0].save()


def _index(candidates: Candidates) -> tuple[LexicalIndex, np.ndarray]:
    key = id(candidates)
    if key not in _INDEXES:
        cjk = np.fromiter((mostly_cjk(t) for t in candidates.texts), bool, len(candidates.texts))
        _INDEXES[key] = (LexicalIndex(candidates.texts), cjk)
    return _INDEXES[key]


def score_with(weights: Weights, candidates: Candidates, asked: Asked, now: datetime) -> Scored:
    """Score one question over one user's candidates with ``weights``, asked at ``now``,
    as ``recall`` scores it: the scores with their parts and weights."""
    lexical, cjk = _index(candidates)
    text = asked.question.text
    lexicon: Lexicon | None = default_lexicon() if has_cjk(text) or bool(cjk.any()) else None
    size = len(candidates.texts)
    tail = _tail_vector(text)
    centre = centre_of(candidates.vectors, weights)
    cosine = nearest_cosine(candidates.vectors, asked.vector, tail, centre).astype(np.float32)
    scope = Scope(
        cosine=cosine,
        cjk=cjk,
        age_days=np.zeros(size),
        confidence=np.ones(size, dtype=np.float32),
        said_at=candidates.said_at,
        rows=np.arange(size),
    )
    window = mentioned_window(text, now)
    return relevance(text, scope, lexical, lexicon, weights, window)


def rank_with(
    weights: Weights, now: datetime | None = None
) -> Callable[[Candidates, Asked], np.ndarray]:
    """A ``rank_fn`` scoring as ``recall`` does with ``weights``, asked at ``now``
    (the run's time by default, as the bilingual run asks)."""
    asked_now = now or datetime.now(UTC)

    def rank(candidates: Candidates, asked: Asked) -> np.ndarray:
        return score_with(weights, candidates, asked, asked_now).scores

    return rank


def default_rank(candidates: Candidates, asked: Asked) -> np.ndarray:
    """The default ranking (default ``Weights``), a reference ``rank_fn``."""
    return rank_with(Weights())(candidates, asked)
