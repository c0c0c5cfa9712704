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
MADial and changes nothing for one-line queries (docs/benchmarks.md). In a memory of
1,000 facts or more, cosines are measured from the memory's mean direction
(``centre_of``), so facts near every query no longer crowd out the answer.

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
from recallmem.text.words import mostly_cjk

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


@dataclass(frozen=True)
class Centre:
    """A large memory's mean direction (scaled by ``Weights.centring``) and each fact's
    product with it: what :func:`nearest_cosine` needs to measure cosines from it."""

    vector: np.ndarray
    along: np.ndarray  # per fact (row of the user's matrix): its vector . ``vector``

    @property
    def norm2(self) -> float:
        return float(self.vector @ self.vector)


def centre_of(vectors: np.ndarray, weights: Weights) -> Centre | None:
    """The centre of a user's unit vectors, or None when the memory is too small for
    its mean to be the memory's common direction rather than its own few facts.

    In a large memory, many facts sit near every query in the multilingual encoder's
    space (long chatty turns above all, in either language), and a fact's cosine says
    as much about that common direction as about the query. Cosines measured from the
    memory's mean direction instead leave what tells a fact from the rest: on the
    development splits of the 1,000+-fact memories, R@10 87.4 -> 92.1 and top-1 64.8 ->
    66.1; below ``large_memory_facts`` (LoCoMo's users, the blind sets unpadded) it cost
    MADial and LoCoMo turns R@10 (docs/benchmarks.md).
    """
    if weights.centring <= 0 or len(vectors) < weights.large_memory_facts:
        return None
    vector = (weights.centring * vectors.mean(axis=0)).astype(np.float32)
    return Centre(vector, vectors @ vector)


def nearest_cosine(
    vectors: np.ndarray,
    query: np.ndarray,
    tail: np.ndarray | None,
    centre: Centre | None = None,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """Each row's cosine with the query, or with its dialogue tail where that is nearer
    (unit rows and vectors); measured from ``centre`` when given (``rows``: which of the
    user's facts ``vectors`` holds, all by default). Two matrix-vector products:
    measured, faster than one product with a two-column matrix."""
    cosine = _from_centre(vectors @ query, query, centre, rows)
    if tail is not None:
        cosine = np.maximum(cosine, _from_centre(vectors @ tail, tail, centre, rows))
    return cosine


def _from_centre(
    cosine: np.ndarray, query: np.ndarray, centre: Centre | None, rows: np.ndarray | None
) -> np.ndarray:
    # cos(q - c, f - c) from cos(q, f), q.c and f.c, without a second pass over the matrix.
    if centre is None:
        return cosine
    along = centre.along if rows is None else centre.along[rows]
    toward = float(query @ centre.vector)
    norm2 = centre.norm2
    scale = np.sqrt(np.maximum((1 - 2 * toward + norm2) * (1 - 2 * along + norm2), 1e-12))
    centred: np.ndarray = ((cosine - toward - along + norm2) / scale).astype(np.float32)
    return centred


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
    top = weights.trust_top_for(lexical.size)
    trust = lexical_trust(same_script, candidates.cosine, top)
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
