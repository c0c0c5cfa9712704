"""Is a new fact the same as one we have? Pure rules, measured on the default encoder.

Embedding similarity alone cannot tell "Prefers reports in Chinese" from "Prefers
reports in English" (cosine 0.96 with the USE encoder), while true paraphrases score as
low as 0.6 (docs/benchmarks.md, "dedup"). So a near-duplicate needs both: a cosine at or
above the threshold, and one fact's meaningful words contained in the other's. A new
fact that says strictly more than the old one replaces its text (the old text stays in
history); one that says the same or less confirms it.

>>> classify("Lives in Berlin", "The user lives in Berlin", cosine=0.9, threshold=0.8)
<Match.SAME: 'same'>
>>> classify("Has a cat named Max", "Has a dog named Max", cosine=0.95, threshold=0.8) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import numpy as np

from recallmem.facts.fact_vectors import vector_texts
from recallmem.text.words import NEGATIONS, content_units, normalize
from recallmem.types import Fact, Revision

MAX_SOURCES = 20  # provenance kept per fact; older confirmations only count


class Match(StrEnum):
    """How a new fact relates to an existing one."""

    SAME = "same"  # same meaning, or the new one says less: confirm the old fact
    RICHER = "richer"  # the new one says all the old one did and more: replace the text


def classify(new: str, old: str, *, cosine: float, threshold: float) -> Match | None:
    """Whether ``new`` duplicates ``old``; None when they are different facts."""
    if normalize(new) == normalize(old):
        return Match.SAME
    if cosine < threshold:
        return None
    new_units, old_units = content_units(new), content_units(old)
    if (new_units ^ old_units) & NEGATIONS:
        return None  # "likes X" and "does not like X" are not one fact said twice
    if new_units <= old_units:
        return Match.SAME
    if old_units <= new_units:
        return Match.RICHER
    return None


def confirm(old: Fact, new: Fact, now: datetime) -> Fact:
    """The old fact, confirmed again by the new one: counted, dated, confidence raised."""
    return old.model_copy(
        update={
            "confirmations": old.confirmations + 1,
            "last_confirmed_at": now,
            "confidence": round(min(1.0, max(old.confidence, new.confidence) + 0.05), 4),
            "sources": (*old.sources, *new.sources)[-MAX_SOURCES:],
            "valid_until": new.valid_until or old.valid_until,  # the latest date said wins
            "keywords": old.keywords or new.keywords,  # a fact stored without any gets some
            **_keys_kept(old, new),
        }
    )


def _keys_kept(old: Fact, new: Fact) -> dict[str, object]:
    # Search keys are embedded with the content (facts.fact_vectors): a fact stored without
    # any takes the new one's only when the texts are the same, so the new one's vector is
    # exactly the confirmed fact's; otherwise the keying step keys it later.
    if old.questions or old.keyed_by or not new.questions or new.content != old.content:
        return {}
    return {"questions": new.questions, "keyed_by": new.keyed_by}


def enrich(old: Fact, new: Fact, now: datetime) -> Fact:
    """The old fact with the new, fuller text; the old text stays in its history."""
    revision = Revision(content=old.content, category=old.category, at=now, reason="enriched")
    return confirm(old, new, now).model_copy(
        update={"content": new.content, "history": (*old.history, revision), "updated_at": now,
                "keywords": new.keywords or old.keywords,  # the fuller text's words
                # keys are about a text: the fuller text's, or none until it is keyed
                "questions": new.questions, "keyed_by": new.keyed_by}
    )  # fmt: skip


@dataclass(frozen=True)
class BatchMerge:
    """What storing a batch of new facts amounts to, once duplicates are folded in."""

    results: list[Fact]  # per candidate, the stored fact it became
    embedded: list[tuple[Fact, int]]  # facts to write with the vector of that candidate row
    records: list[Fact]  # existing facts confirmed without a change of text


def merge_batch(
    candidates: Sequence[Fact],
    vectors: np.ndarray,
    neighbours: Sequence[Sequence[tuple[Fact, float]]],
    *,
    threshold: float,
    now: datetime,
) -> BatchMerge:
    """Fold each candidate into a stored neighbour or an earlier candidate it duplicates.

    ``neighbours[i]`` are the stored facts nearest to candidate ``i`` with their cosines;
    candidates of one batch are compared with each other through ``vectors``.
    """
    chosen: dict[str, Fact] = {}  # id -> latest state, in first-seen order
    rows: dict[str, int] = {}  # id -> row of `vectors` whose text the fact now carries
    carrier: dict[int, str] = {}  # the inverse: row -> id
    similar = vectors @ vectors.T  # one BLAS call; callers keep batches to ~1,000 rows
    results: list[Fact] = []
    for row, candidate in enumerate(candidates):
        pool = [(chosen.get(f.id, f), c) for f, c in neighbours[row]]
        earlier = [j for j in _closest(similar[row, :row], threshold) if j in carrier]
        pool += [
            (chosen[carrier[j]], float(similar[row, j]))
            for j in earlier
            if chosen[carrier[j]].agent_id == candidate.agent_id
        ]
        merged = _merge(candidate, pool, threshold, now)
        chosen[merged.id] = merged
        if vector_texts(merged) == vector_texts(candidate):  # the candidate's vector is its own
            carrier.pop(rows.get(merged.id, -1), None)
            rows[merged.id], carrier[row] = row, merged.id
        results.append(merged)
    return BatchMerge(
        results=[chosen[f.id] for f in results],
        embedded=[(f, rows[f.id]) for f in chosen.values() if f.id in rows],
        records=[f for f in chosen.values() if f.id not in rows],
    )


def _closest(cosines: np.ndarray, threshold: float, k: int = 8) -> list[int]:
    """Rows at or above the threshold, at most ``k`` of the most similar."""
    close = np.flatnonzero(cosines >= min(threshold, 0.999))
    if close.size > k:
        close = close[np.argpartition(-cosines[close], k - 1)[:k]]
    return [int(j) for j in close]


def _merge(
    candidate: Fact, pool: list[tuple[Fact, float]], threshold: float, now: datetime
) -> Fact:
    for existing, cosine in sorted(pool, key=lambda pair: -pair[1]):
        if existing.category is not candidate.category:
            continue
        match = classify(candidate.content, existing.content, cosine=cosine, threshold=threshold)
        if match is Match.SAME:
            return confirm(existing, candidate, now)
        if match is Match.RICHER:
            return enrich(existing, candidate, now)
    return candidate
