"""The vector a fact is stored and found by: its content's, plus the mean of its keys'.

A fact is found by meaning through one vector. With search keys (the questions it answers
in both languages and a paraphrase in the other: ``Fact.questions``) that vector is the
content's unit vector plus the mean of the keys' unit vectors, made unit again: it sits
near the ways the fact is asked for, in either language, while the fact's own meaning
keeps half of it however many keys it has. Embedding the content and the keys as one
text let three keys outweigh the one sentence they are about, which cost memories of
long narrated events recalled from a dialogue (MADial) ten points of top-1; measured
against the other ways of using keys in docs/decisions/0040-search-keys.md.

Every path that embeds a fact for storage (a new fact, an edit, an import without
vectors, a rebuild) goes through :func:`fact_vectors`, so a vector always matches its
fact's content and keys (:func:`vector_texts`), and a change of either re-embeds it.

>>> from recallmem.testing import HashingEmbeddings
>>> from recallmem.embedders import embed_matrix
>>> from recallmem.types import Fact
>>> fact = Fact(content="Allergic to shellfish", category="identity", user_id="ada",
...             questions=("What can't I eat?", "我不能吃什么？"))
>>> vector_texts(fact)
('Allergic to shellfish', "What can't I eat?", '我不能吃什么？')
>>> embed = lambda texts: embed_matrix(HashingEmbeddings(), texts)
>>> cosines = fact_vectors(embed, [fact])[0] @ embed(list(vector_texts(fact))).T
>>> [round(float(c), 2) for c in cosines]  # near the content, and near each key
[0.84, 0.34, 0.34]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from recallmem.embedders.vectors import normalize_rows
from recallmem.types import Fact

Embed = Callable[[list[str]], np.ndarray]  # texts -> unit rows


def vector_texts(fact: Fact) -> tuple[str, ...]:
    """What a fact's vector is made of: its content, then its search keys."""
    return (fact.content, *fact.questions)


def fact_vectors(embed: Embed, facts: Sequence[Fact]) -> np.ndarray:
    """One unit vector per fact, every text embedded in one call: the content's vector
    plus the mean of its keys' (the content's alone for a fact without keys)."""
    texts = [text for fact in facts for text in vector_texts(fact)]
    rows = embed(texts) if texts else np.zeros((0, 0), np.float32)
    vectors = np.empty((len(facts), rows.shape[1] if len(rows) else 0), np.float32)
    at = 0
    for n, fact in enumerate(facts):
        keys = len(fact.questions)
        if keys:
            mixed = rows[at] + rows[at + 1 : at + 1 + keys].mean(axis=0)
            vectors[n] = normalize_rows(mixed[np.newaxis, :])[0]
        else:  # the embedder's unit vector as it came: normalised again, its last bits move
            vectors[n] = rows[at]
        at += 1 + keys
    return vectors
