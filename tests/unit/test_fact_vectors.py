"""The vectors a write stores: one embedding call per write, each distinct text embedded
once, and every fact's vector what it would be if it were written alone."""

from __future__ import annotations

import numpy as np
import pytest
from recallmem.embedders import UniversalSentenceEncoder, embed_matrix, normalize_rows
from recallmem.facts.fact_vectors import fact_vectors, vector_texts
from recallmem.testing import HashingEmbeddings
from recallmem.types import Fact

GENERIC = "我喜欢什么？"  # a key a model asks of many facts


def fact(content: str, *questions: str) -> Fact:
    return Fact(content=content, category="preference", user_id="u", questions=questions)


FACTS = [
    fact("Drinks oolong tea", "What tea do I drink?", GENERIC, "喝乌龙茶"),
    fact("Has a ginger cat named Biscuit"),  # no keys, between keyed ones
    fact("Likes hiking in the Alps", GENERIC, "Where do I hike?"),
    fact("Reads Borges", GENERIC),
    fact(
        "Plays the cello", "What instrument do I play?", "我会什么乐器？", "拉大提琴", "Plays cello"
    ),
    fact("Drinks oolong tea", "What tea do I drink?"),  # a content said twice, other keys
]


class Counting:
    """An embedder per text (a text's row never depends on the others), noting each call."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return embed_matrix(HashingEmbeddings(dimension=64), texts)


def reference(embed: Counting, one: Fact) -> np.ndarray:
    """The shipped rule written out for one fact: the content's unit vector plus the mean
    of its keys' unit vectors, made unit again; the content's row alone without keys."""
    rows = embed(list(vector_texts(one)))
    if not one.questions:
        return rows[0]
    unit: np.ndarray = normalize_rows((rows[0] + rows[1:].mean(axis=0))[np.newaxis, :])[0]
    return unit


def test_a_write_without_keys_stores_the_embedders_rows_bit_for_bit() -> None:
    embed = Counting()
    bare = [f.model_copy(update={"questions": ()}) for f in FACTS]
    vectors = fact_vectors(embed, bare)
    assert embed.calls == [[f.content for f in bare]]  # every content, in order, duplicates too
    assert np.array_equal(vectors, embed([f.content for f in bare]))


def test_a_keyed_write_embeds_each_distinct_text_once_in_one_call() -> None:
    embed = Counting()
    vectors = fact_vectors(embed, FACTS)
    [texts] = embed.calls
    every = [text for f in FACTS for text in vector_texts(f)]
    assert texts == list(dict.fromkeys(every)) and len(texts) < len(every)
    assert vectors.shape == (len(FACTS), 64) and vectors.dtype == np.float32
    for one, vector in zip(FACTS, vectors, strict=True):
        assert np.array_equal(vector, reference(embed, one)), one.content
        assert np.array_equal(vector, fact_vectors(Counting(), [one])[0])  # as if written alone


def test_a_keyed_write_with_use_gives_the_vectors_of_one_by_one_writes() -> None:
    """USE's rows move in their last bits with the micro-batch a text lands in (about 3e-7,
    docs/decisions/0071-encoder-speed.md); without a repeated text, the call embeds exactly
    the texts it embedded before, so its vectors are the rule's on those rows, bit for bit."""
    encoder = UniversalSentenceEncoder()
    embed = lambda texts: embed_matrix(encoder, texts)  # noqa: E731
    distinct = [*FACTS[:2], fact("Reads Borges", "Who do I read?", "我读谁的书？")]
    rows = embed([text for f in distinct for text in vector_texts(f)])
    at, before = 0, []
    for one in distinct:  # the rule on the call's own rows, fact by fact
        n = len(vector_texts(one))
        mixed = rows[at] + rows[at + 1 : at + n].mean(axis=0) if n > 1 else rows[at]
        before.append(normalize_rows(mixed[np.newaxis, :])[0] if n > 1 else mixed)
        at += n
    assert np.array_equal(fact_vectors(embed, distinct), np.stack(before))
    batched = fact_vectors(embed, FACTS)
    alone = np.stack([fact_vectors(embed, [one])[0] for one in FACTS])
    assert np.allclose(batched, alone, rtol=0, atol=2e-6)
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-6)


def test_no_facts_no_call() -> None:
    embed = Counting()
    assert fact_vectors(embed, []).shape == (0, 0) and embed.calls == []


@pytest.mark.parametrize("keys", [0, 1, 4])
def test_facts_of_one_key_count_are_mixed_as_alone(keys: int) -> None:
    facts = [fact(f"fact {n}", *(f"key {n} {k}" for k in range(keys))) for n in range(9)]
    embed = Counting()
    vectors = fact_vectors(embed, facts)
    assert all(np.array_equal(v, reference(embed, f)) for f, v in zip(facts, vectors, strict=True))
