"""One query's scores over one user's candidates: the parts, their weights, their sum.

The one place the ranking policy is applied, so the hot index (``retrieval.index``) and
the ranking benchmarks (``bench/bilingual_tuning.py``) score exactly alike: the weights
for the query's script, lexical evidence calibrated and trusted as ``retrieval.ranking``
says, and the time part when the query names a window.

A query may be a dialogue tail (a few turns, one per line, as an agent passes the
recent conversation); its last line usually holds the question, and the earlier turns
blur its vector. So such a query is also embedded by its last line (``dialogue_tail``),
and a fact's dense part is the nearer of the two cosines (``nearest_cosine``): measured
on the development splits, that lifts dialogue queries on the blind bilingual sets and
MADial and changes nothing for one-line queries (docs/benchmarks.md).

>>> dialogue_tail("user: 下周要去广州出差\\nassistant: 要订酒店吗?\\nuser: 嗯,订常住的那个牌子")
'嗯,订常住的那个牌子'
>>> dialogue_tail("What did I decide about the move?") is None
True
"""

from __future__ import annotations

import re
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

_ROLE = re.compile(
    r"^\s*(?:user|human|assistant|ai|bot|system|用户|助手)\s*[:：]\s*", re.IGNORECASE
)


def dialogue_tail(text: str) -> str | None:
    """The last line of a query of several lines, its speaker label removed; None for a
    query of one line (or a last line with nothing but a label)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    tail = _ROLE.sub("", lines[-1]).strip()
    return tail or None


def nearest_cosine(vectors: np.ndarray, query: np.ndarray, tail: np.ndarray | None) -> np.ndarray:
    """Each row's cosine with the query, or with its dialogue tail where that is nearer
    (unit rows and vectors). Two matrix-vector products: measured, faster than one
    product with a two-column matrix."""
    cosine: np.ndarray = vectors @ query
    if tail is not None:
        cosine = np.maximum(cosine, vectors @ tail)
    return cosine


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
