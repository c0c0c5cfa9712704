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
    plus the mean of its keys' (the content's alone for a fact without keys).

    Without keys in the call, the contents are embedded as they come, so each vector is
    the embedder's row for its content, bit for bit. With keys, each distinct text is
    embedded once: a generic key ("我喜欢什么？") asked of several facts, or a key equal to
    a content, costs one row (a text's vector does not depend on which fact asked)."""
    if not any(fact.questions for fact in facts):
        return embed([fact.content for fact in facts]) if facts else np.zeros((0, 0), np.float32)
    row_of: dict[str, int] = {}
    at = [[row_of.setdefault(text, len(row_of)) for text in vector_texts(f)] for f in facts]
    rows = embed(list(row_of))
    vectors = rows[[of[0] for of in at]]
    # Facts with as many keys are mixed as one matrix: ``mean(axis=1)`` over their key rows
    # gives each fact what ``mean(axis=0)`` gives it alone (rows added in the same order).
    # A fact without keys keeps the embedder's unit vector as it came: normalised again,
    # its last bits would move.
    for keys in sorted({len(of) - 1 for of in at} - {0}):
        same = [n for n, of in enumerate(at) if len(of) - 1 == keys]
        means = rows[[at[n][1:] for n in same]].mean(axis=1)
        vectors[same] = normalize_rows(vectors[same] + means)
    return vectors
