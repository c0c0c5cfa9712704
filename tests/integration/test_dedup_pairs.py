"""The near-duplicate rule on labelled pairs, with the real encoder at the default threshold."""

from __future__ import annotations

import json
from pathlib import Path

from recallmem.config import MemoryConfig
from recallmem.embedders import UniversalSentenceEncoder, embed_matrix
from recallmem.facts.near_duplicates import Match, classify

PAIRS = [
    json.loads(line)
    for line in (Path(__file__).parents[1] / "data" / "dedup_pairs.jsonl")
    .read_text(encoding="utf-8")
    .splitlines()
]


def _verdicts() -> list[tuple[dict[str, object], Match | None]]:
    encoder = UniversalSentenceEncoder()
    new = embed_matrix(encoder, [str(p["new"]) for p in PAIRS])
    old = embed_matrix(encoder, [str(p["old"]) for p in PAIRS])
    threshold = MemoryConfig().dedup_similarity
    return [
        (p, classify(str(p["new"]), str(p["old"]), cosine=float(a @ b), threshold=threshold))
        for p, a, b in zip(PAIRS, new, old, strict=True)
    ]


def test_no_different_facts_are_merged_and_most_duplicates_are() -> None:
    verdicts = _verdicts()
    false_merges = [p for p, v in verdicts if v is not None and not p["duplicate"]]
    merged = [p for p, v in verdicts if v is not None and p["duplicate"]]
    assert false_merges == []
    assert len(merged) >= 12


def test_negation_is_never_a_paraphrase() -> None:
    assert classify("不喜欢爬山", "喜欢爬山", cosine=0.99, threshold=0.5) is None
    assert classify("Doesn't drink coffee", "Drinks coffee", cosine=0.99, threshold=0.5) is None
    assert (
        classify("Drinks coffee every morning", "Drinks coffee", cosine=0.9, threshold=0.7)
        is Match.RICHER
    )
