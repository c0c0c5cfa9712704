"""Consolidation without a model: only the duplicates the near-duplicate rule accepts.

A group's fact whose words contain another's (same scope and category, cosine at the
dedup threshold, :func:`recallmem.facts.near_duplicates.classify`) carries the merge: the other says
the same or less, so the carrier's text is the merged text and nothing is rewritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from recallmem.facts.near_duplicates import Match, classify
from recallmem.lifecycle.merge_prompt import Proposal
from recallmem.text.words import content_units
from recallmem.types import Category, Fact

_REASON = "near-duplicate: the kept text says all the others do"


def _mergeable(fact: Fact) -> bool:
    return not fact.pinned and fact.category is not Category.CORRECTION and not fact.source_error


def duplicate_proposals(
    refs: Mapping[str, Fact], vectors: Mapping[str, np.ndarray], *, threshold: float
) -> list[Proposal]:
    """Proposals that fold each fact into the fullest fact of its scope it duplicates."""
    order = sorted(refs, key=lambda r: -len(content_units(refs[r].content)))
    used: set[str] = set()
    proposals: list[Proposal] = []
    for carrier in order:
        if carrier in used or not _mergeable(refs[carrier]):
            continue
        parts = [
            r
            for r in order
            if r not in used
            and r != carrier
            and _duplicates(refs[r], refs[carrier], vectors[r], vectors[carrier], threshold)
        ]
        if parts:
            used.update([carrier, *parts])
            ids = (carrier, *parts)
            proposals.append(Proposal(ids=ids, content=refs[carrier].content, reason=_REASON))
    return proposals


def _duplicates(part: Fact, carrier: Fact, a: np.ndarray, b: np.ndarray, threshold: float) -> bool:
    if not _mergeable(part) or (part.agent_id, part.category) != (
        carrier.agent_id,
        carrier.category,
    ):
        return False
    match = classify(part.content, carrier.content, cosine=float(a @ b), threshold=threshold)
    return match is Match.SAME


def vectors_by_ref(refs: Mapping[str, Fact], rows: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """The shown ids with their facts' vectors (``rows`` in the order of ``refs``)."""
    return dict(zip(refs, rows, strict=True))
