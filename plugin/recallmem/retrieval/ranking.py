"""Pure scoring: dense and lexical relevance fused with time, recency and confidence.

Every part is mapped to [0, 1] before the weighted sum, so the weights mean what they
say, the parts shown to users are comparable, and ``score = sum(weight * part)`` can be
rebuilt from what a hit carries. The weights are measured on the development splits of
the benchmarks (docs/benchmarks.md), not guessed: lexical evidence (the calibrated share
of the query a fact says, ``retrieval.evidence``) counts a quarter as much as dense
similarity for queries written in words, and about a seventh for Chinese or Japanese
queries (a dictionary word is noisier evidence than a whole English word). In a memory
whose facts are all in the query's script no word match can be a cross-language trap,
and evidence counts more there (``lexical_one_script``: 0.35 for words, 0.2 for CJK).

Lexical evidence can only speak for facts in the query's script, unless a translation
connects them. In a memory that mixes Chinese and English, a question whose nearest
facts by meaning are in the other language is most likely about one of those, and word
matches in its own script would then pull the wrong facts up; so evidence for facts in the
query's script is trusted by the share of the query's script among the dense top few,
each counted by its rank (``lexical_trust``): the nearest fact weighs most, so a few
long facts near every query (chatty dialogue turns) ranked second and third cannot
outvote it. In a large memory only the nearest fact decides (``trust_top_large``): there
the next few are mostly such turns, and a short fact in the other language matching the
whole question through translations, ranked second, would otherwise halve the evidence
of the answer ranked first and outrank it. Evidence is also calibrated (``calibrated``):
a fact matching under 5 % of the query's information (one common word of a long
question) earns none; and a fact in the other script, matching only through
translations, earns none when its cosine is more than ``translation_margin`` below the
nearest fact's (``translation_gate``), so chance translations in a long fact far from
the query by meaning cannot lift it over the facts near it. When the query names a time
("in June", "last week", "2023年10月"), facts said in that window rise, unless every
candidate matches the window alike, when the time says nothing and counts for nothing.

>>> import numpy as np
>>> parts = score_parts(np.array([0.9, 0.2]), np.array([0.0, 1.0]),
...                     np.array([0.0, 0.0]), np.array([0.9, 0.9]), Weights())
>>> int(np.argmax(fuse(parts, Weights())))
0
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from recallmem.retrieval.when import TimeWindow
from recallmem.text.words import mostly_cjk

_DAY_SECONDS = 86400.0
_NO_CONTRAST = 1e-3  # a time part this flat across the candidates ranks nothing


@dataclass(frozen=True)
class Weights:
    """How much each part counts; they need not sum to one.

    ``lexical`` applies to queries written in words, ``lexical_cjk`` to queries mostly
    in CJK characters, and ``lexical_one_script`` / ``lexical_cjk_one_script`` instead
    when every candidate is in the query's script (see ``for_query``); ``trust_top`` is
    how many of the densest candidates decide how far same-script lexical evidence is
    trusted (``lexical_trust``), ``trust_top_large`` the same in a large memory, and
    ``length_b`` how much a long fact's translated matches are discounted (BM25's ``b``;
    1 is in proportion to its length). ``time`` is the bonus for a fact said inside the
    window the query names; one said up to ``time_after_days`` after the window still
    earns part of it (people tell of an event in the days after it). ``evidence_floor``
    is the share of the query's information below which a fact's lexical evidence counts
    nothing, and ``translation_margin`` how far below the nearest fact's cosine a fact
    in the other script may be and still earn lexical evidence. A memory of at least
    ``large_memory_facts`` facts is large: its cosines are measured from ``centring``
    times its mean direction (``retrieval.fusion.centre_of``). Setting a weight to 0
    switches its technique off.
    """

    dense: float = 0.8
    lexical: float = 0.2
    lexical_cjk: float = 0.12
    lexical_one_script: float = 0.35
    lexical_cjk_one_script: float = 0.2
    recency: float = 0.04
    confidence: float = 0.04
    time: float = 0.24
    time_after_days: float = 7.0
    half_life_days: float = 30.0
    trust_top: int = 3
    trust_top_large: int = 1
    length_b: float = 1.0
    evidence_floor: float = 0.05
    translation_margin: float = 0.3
    centring: float = 0.8
    large_memory_facts: int = 1000

    def for_query(self, query: str, *, one_script: bool = False) -> Weights:
        """These weights with ``lexical`` set for the query's script, and for whether
        every candidate is in that script (``one_script``).

        >>> Weights().for_query("我喜欢长篇文章").lexical
        0.12
        >>> Weights().for_query("What does Mia like to read?").lexical
        0.2
        >>> Weights().for_query("What does Mia like to read?", one_script=True).lexical
        0.35
        """
        if mostly_cjk(query):
            return replace(
                self, lexical=self.lexical_cjk_one_script if one_script else self.lexical_cjk
            )
        return replace(self, lexical=self.lexical_one_script) if one_script else self

    def trust_top_for(self, memory_facts: int) -> int:
        """How many of the nearest facts decide the trust in a memory of this size.

        >>> Weights().trust_top_for(50), Weights().trust_top_for(5000)
        (3, 1)
        """
        return self.trust_top_large if memory_facts >= self.large_memory_facts else self.trust_top


@dataclass(frozen=True)
class Parts:
    """The per-candidate parts of a score, each in [0, 1]."""

    dense: np.ndarray
    lexical: np.ndarray
    recency: np.ndarray
    confidence: np.ndarray
    time: np.ndarray | None = None


def score_parts(
    cosine: np.ndarray,
    lexical: np.ndarray,
    age_days: np.ndarray,
    confidence: np.ndarray,
    weights: Weights,
    *,
    said_at: np.ndarray | None = None,
    window: TimeWindow | None = None,
) -> Parts:
    """Map raw signals to [0, 1]: cosine clipped, lexical evidence (already in [0, 1],
    trusted as ``lexical_trust`` says) kept, recency halved per half-life, and (given the
    query's ``window`` and when each fact was said, as POSIX seconds) how well each
    fact's time matches the window, when that tells the candidates apart."""
    recency = np.power(0.5, np.maximum(age_days, 0.0) / weights.half_life_days)
    timed = None
    if window is not None and said_at is not None and weights.time:
        timed = time_match(said_at, window, weights.time_after_days)
        if not timed.size or float(timed.max() - timed.min()) < _NO_CONTRAST:
            timed = None
    return Parts(
        dense=np.clip(cosine, 0.0, 1.0),
        lexical=np.clip(lexical, 0.0, 1.0).astype(np.float32),
        recency=recency.astype(np.float32),
        confidence=np.clip(confidence, 0.0, 1.0),
        time=timed,
    )


def lexical_trust(same_script: np.ndarray, cosine: np.ndarray, top: int) -> np.ndarray:
    """How far each fact's lexical evidence is trusted, in [0, 1].

    Facts in another script than the query only match through translations, which
    are trusted fully; facts in the query's script are trusted by the share of the
    query's script among the ``top`` facts nearest by meaning, the one at rank r
    counted 1/r (the nearest decides most).

    >>> same = np.array([True, False, False, True])
    >>> [round(float(t), 2) for t in lexical_trust(same, np.array([0.2, 0.9, 0.8, 0.7]), 3)]
    [0.18, 1.0, 1.0, 0.18]
    >>> [round(float(t), 2) for t in lexical_trust(same, np.array([0.2, 0.8, 0.7, 0.9]), 3)]
    [0.55, 1.0, 1.0, 0.55]
    """
    if not same_script.size:
        return np.ones(0, dtype=np.float32)
    nearest = top_k(cosine, top)  # a partition, not a sort: a user may have 100k facts
    by_rank = 1.0 / np.arange(1, nearest.size + 1)
    share = float((same_script[nearest] * by_rank).sum() / by_rank.sum())
    return np.where(same_script, share, 1.0).astype(np.float32)


def calibrated(evidence: np.ndarray, floor: float) -> np.ndarray:
    """Evidence rescaled so that matching under ``floor`` of the query's information
    counts nothing: one common word of a long question or a dialogue is no evidence.

    >>> [round(float(e), 2) for e in calibrated(np.array([0.04, 0.05, 0.525, 1.0]), 0.05)]
    [0.0, 0.0, 0.5, 1.0]
    """
    if floor <= 0:
        return evidence
    return np.clip((evidence - floor) / (1.0 - floor), 0.0, 1.0).astype(np.float32)


def translation_gate(same_script: np.ndarray, cosine: np.ndarray, margin: float) -> np.ndarray:
    """1 where a fact's lexical evidence may count, 0 for a fact in another script than
    the query whose cosine is more than ``margin`` below the nearest fact's.

    Such a fact matches only through dictionary translations, which a long or chatty
    fact meets by chance; far from the query by meaning, it must not be lifted over the
    facts near it (0: no gate).

    >>> same = np.array([True, False, False])
    >>> translation_gate(same, np.array([0.2, 0.5, 0.3]), 0.15).tolist()
    [1.0, 1.0, 0.0]
    """
    if margin <= 0 or not cosine.size:
        return np.ones(cosine.shape, dtype=np.float32)
    far = float(cosine.max()) - cosine > margin
    return np.where(~same_script & far, 0.0, 1.0).astype(np.float32)


def time_match(said_at: np.ndarray, window: TimeWindow, after_days: float) -> np.ndarray:
    """1 for a time inside the window, falling linearly to 0 over ``after_days`` after it.

    ``said_at`` holds POSIX seconds (NaN where unknown: no match). A month-of-any-year
    window matches that calendar month in every year.

    >>> from datetime import UTC, datetime
    >>> from recallmem.retrieval.when import TimeWindow
    >>> day = TimeWindow(datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 2, tzinfo=UTC))
    >>> said = np.array([datetime(2023, 5, 1, 9, tzinfo=UTC).timestamp(),
    ...                  datetime(2023, 5, 5, tzinfo=UTC).timestamp(), np.nan])
    >>> [round(float(x), 2) for x in time_match(said, day, 7.0)]
    [1.0, 0.57, 0.0]
    """
    known = np.isfinite(said_at)
    match = np.zeros(said_at.shape, dtype=np.float32)
    if window.month is not None:
        local = np.where(known, said_at + window.utc_offset, 0)
        seconds = local.astype("datetime64[s]")
        months = seconds.astype("datetime64[M]").astype(np.int64) % 12 + 1
        match[known & (months == window.month)] = 1.0
        return match
    if window.start is None or window.end is None:
        return match
    start, end = window.start.timestamp(), window.end.timestamp()
    inside = known & (said_at >= start) & (said_at < end)
    match[inside] = 1.0
    if after_days > 0:
        after = known & (said_at >= end)
        late = (said_at[after] - end) / (after_days * _DAY_SECONDS)
        match[after] = np.clip(1.0 - late, 0.0, 1.0)
    return match


def fuse(parts: Parts, weights: Weights) -> np.ndarray:
    """The weighted sum of the parts."""
    score = (
        weights.dense * parts.dense
        + weights.lexical * parts.lexical
        + weights.recency * parts.recency
        + weights.confidence * parts.confidence
    )
    if parts.time is not None:
        score = score + weights.time * parts.time
    return score


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
