"""The ways of using search keys, scored on cached vectors as ``recall`` scores.

Each option is a ``rank_fn`` over one user's ``KeyedCandidates``, running the product's
own scoring (``recallmem.retrieval.fusion.relevance``) with the dense part and the
lexical index the option gives it:

- ``content`` (no keys): the default without keys;
- ``averaged``: each fact's vector is its content's plus the mean of its keys'
  (``recallmem.facts.fact_vectors``);
- ``joined``: the content and its keys embedded as one text;
- ``multi``: the content and each key embedded apart, the best one counts;
- ``lexical``: the keys' words indexed with the fact (as ``Fact.keywords`` are), vectors
  of the content;
- ``averaged+lexical`` (what the product does), ``joined+lexical``, ``multi+lexical``:
  both.

Each then lifts a fact stating a change above the older fact it replaces, as ``recall``
does (``recallmem.retrieval.newer_first``); ``content-newer`` (the default before this
work) and ``averaged+lexical-newer`` leave that rule out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
from recallmem.embedders import normalize_rows
from recallmem.facts.fact_vectors import fact_vectors
from recallmem.retrieval.fusion import Scope, centre_of, dialogue_tail, nearest_cosine, relevance
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import default_lexicon
from recallmem.retrieval.newer_first import change_flags, newer_first
from recallmem.retrieval.ranking import Weights
from recallmem.retrieval.when import mentioned_window
from recallmem.text.words import has_cjk, mostly_cjk
from recallmem.types import Fact as ProductFact

from bench.bilingual_cache import RunEncoder, _seconds
from bench.bilingual_data import Question, User

OPTIONS = ("content", "averaged+lexical", "averaged", "joined", "joined+lexical", "multi",
           "multi+lexical", "lexical", "content-newer", "averaged+lexical-newer")  # fmt: skip


def _product(text: str, keys: tuple[str, ...]) -> ProductFact:
    return ProductFact(content=text, category="context", user_id="u", questions=keys)


@dataclass
class KeyedCandidates:
    """One user's memory with its keys as arrays, in the order of ``user.facts``."""

    user: User
    cites: list[frozenset[str]]
    said_at: np.ndarray
    cjk: np.ndarray
    content: np.ndarray  # (n, d) unit rows
    averaged: np.ndarray  # (n, d): the content's vector plus the mean of its keys'
    joined: np.ndarray  # (n, d): content and keys as one text
    key_rows: np.ndarray  # (m, d): every key of every fact
    key_owner: np.ndarray  # (m,): the fact row of each key
    plain: LexicalIndex
    with_keys: LexicalIndex
    changed: np.ndarray  # each fact states a change (retrieval.newer_first)
    corrected: np.ndarray  # each fact is a correction

    @classmethod
    def build(cls, user: User, encoder: RunEncoder) -> KeyedCandidates:
        texts = [f.text for f in user.facts]
        keys = [tuple(getattr(f, "questions", ())) for f in user.facts]
        flat = [(row, key) for row, fact_keys in enumerate(keys) for key in fact_keys]
        dimension = encoder.dimension
        key_rows = (normalize_rows(encoder.embed_array([k for _, k in flat])) if flat
                    else np.zeros((0, dimension), np.float32))  # fmt: skip
        changed, corrected = change_flags(texts, [f.category == "correction" for f in user.facts])
        return cls(
            user=user,
            cites=[f.cites for f in user.facts],
            said_at=np.array([_seconds(f.said_at) for f in user.facts], dtype=np.float64),
            cjk=np.fromiter((mostly_cjk(t) for t in texts), bool, len(texts)),
            content=normalize_rows(encoder.embed_array(texts)),
            averaged=fact_vectors(
                lambda t: normalize_rows(encoder.embed_array(t)),
                [_product(t, k) for t, k in zip(texts, keys, strict=True)],
            ),
            joined=normalize_rows(
                encoder.embed_array(["\n".join((t, *k)) for t, k in zip(texts, keys, strict=True)])
            ),
            key_rows=key_rows,
            key_owner=np.array([row for row, _ in flat], dtype=np.int64),
            plain=LexicalIndex(texts),
            with_keys=LexicalIndex(texts, keywords=keys),
            changed=changed,
            corrected=corrected,
        )


def _vectors(kc: KeyedCandidates, option: str) -> np.ndarray:
    if option.startswith("averaged"):
        return kc.averaged
    return kc.joined if option.startswith("joined") else kc.content


def _dense(kc: KeyedCandidates, option: str, query: np.ndarray, tail: np.ndarray | None,
           weights: Weights) -> np.ndarray:  # fmt: skip
    vectors = _vectors(kc, option)
    cosine = nearest_cosine(vectors, query, tail, centre_of(vectors, weights))
    if option.startswith("multi") and len(kc.key_rows):
        # The content's cosine against its best key's, each fact keeping the higher.
        best = np.full(len(cosine), -1.0, dtype=np.float32)
        keyed = nearest_cosine(kc.key_rows, query, tail, None)
        np.maximum.at(best, kc.key_owner, keyed.astype(np.float32))
        cosine = np.maximum(cosine, best)
    return cosine.astype(np.float32)


def option_rank(
    option: str, encoder: RunEncoder, now: datetime | None = None, weights: Weights | None = None
) -> Callable[[KeyedCandidates, Question, np.ndarray], np.ndarray]:
    """A ranking function for ``option``: (candidates, question, its vector) -> scores."""
    asked_now = now or datetime.now(UTC)
    weights = weights or Weights()

    def rank(kc: KeyedCandidates, question: Question, vector: np.ndarray) -> np.ndarray:
        text = question.text
        tail_text = dialogue_tail(text)
        tail = normalize_rows(encoder.embed_array([tail_text]))[0] if tail_text else None
        size = len(kc.cites)
        lexical = kc.with_keys if "lexical" in option else kc.plain
        lexicon = default_lexicon() if has_cjk(text) or bool(kc.cjk.any()) else None
        scope = Scope(
            cosine=_dense(kc, option, vector, tail, weights),
            cjk=kc.cjk,
            age_days=np.zeros(size),
            confidence=np.ones(size, dtype=np.float32),
            said_at=kc.said_at,
            rows=np.arange(size),
        )
        window = mentioned_window(text, asked_now)
        scores = relevance(text, scope, lexical, lexicon, weights, window).scores
        if not option.endswith("-newer"):
            scores = scores + newer_first(
                scores, kc.said_at, _vectors(kc, option), kc.changed, corrected=kc.corrected
            )
        return scores

    return rank
