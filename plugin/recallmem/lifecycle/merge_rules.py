"""Hygiene for consolidation: which proposed merges are stored, and the fact each becomes.

Pure. A proposal (from the model, or from the near-duplicate rule when there is no
model) names shown facts and the merged text; it is accepted only if every rule holds,
else refused with the rule's reason. The merged fact is new (its own id), keeps every
part's sources and history, and names its parts in ``merged_from``; the parts are
superseded by it, never deleted (:func:`merge_plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from recallmem.dedup import MAX_SOURCES
from recallmem.extraction.plan import Add, Plan, Supersede
from recallmem.lifecycle.merge_prompt import Proposal
from recallmem.prompts import load_data
from recallmem.text import content_units
from recallmem.types import Fact, Revision, Source


class FrameWords(BaseModel):
    """``prompts/consolidation_words.yaml``: words that frame a fact, not its subject."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str
    generic: frozenset[str] = Field(min_length=1)


@lru_cache(maxsize=1)
def frame_words() -> frozenset[str]:
    """The shipped frame words, case-folded."""
    return frozenset(w.casefold() for w in load_data("consolidation_words", FrameWords).generic)


def key_terms(text: str) -> frozenset[str]:
    """What a text is about: its content units, less the words that only frame it."""
    return content_units(text) - frame_words()


class Refusal(BaseModel):
    """A proposed merge that was not stored, and which rule refused it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ids: tuple[str, ...]
    content: str
    reason: str


class Accepted(BaseModel):
    """A proposal that passed every rule, with the stored facts it names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parts: tuple[Fact, ...]
    content: str
    reason: str


Rule = Callable[[Sequence[Fact], str], str | None]
RULES: tuple[Rule, ...] = ()


def _known_parts(
    proposal: Proposal, refs: Mapping[str, Fact], used: set[str]
) -> tuple[list[Fact], str | None]:
    ids = list(dict.fromkeys(proposal.ids))
    if len(ids) < 2:
        return [], "a merge needs at least two different facts"
    if unknown := [i for i in ids if i not in refs]:
        return [], f"ids {unknown} were not shown"
    parts = [refs[i] for i in ids]
    if taken := [i for i, f in zip(ids, parts, strict=True) if f.id in used]:
        return [], f"ids {taken} are already in another merge of this run"
    return parts, None


def vet(
    proposals: Sequence[Proposal], refs: Mapping[str, Fact], rules: Sequence[Rule] = ()
) -> tuple[list[Accepted], list[Refusal]]:
    """Split proposals into accepted merges and refusals; each fact joins one merge at most."""
    accepted: list[Accepted] = []
    refused: list[Refusal] = []
    used: set[str] = set()
    for proposal in proposals:
        parts, problem = _known_parts(proposal, refs, used)
        for rule in rules:
            if problem is not None:
                break
            problem = rule(parts, proposal.content)
        if problem is not None:
            refused.append(Refusal(ids=proposal.ids, content=proposal.content, reason=problem))
            continue
        used.update(f.id for f in parts)
        accepted.append(Accepted(parts=tuple(parts), content=proposal.content,
                                 reason=proposal.reason or "consolidated"))  # fmt: skip
    return accepted, refused


def _sources(parts: Sequence[Fact]) -> tuple[Source, ...]:
    everything = sorted({s for f in parts for s in f.sources}, key=lambda s: s.at)
    if len(everything) <= MAX_SOURCES:
        return tuple(everything)
    # Each part keeps its latest evidence; the rest are the newest (the parts keep all).
    latest = {max(f.sources, key=lambda s: s.at) for f in parts if f.sources}
    rest = [s for s in everything if s not in latest][-(MAX_SOURCES - len(latest)) :]
    return tuple(sorted({*latest, *rest}, key=lambda s: s.at))


def merged_fact(merge: Accepted, *, at: datetime, source: Source) -> Fact:
    """The one fact a merge becomes: every part's evidence and history, and its parts' ids."""
    parts = merge.parts
    threads = {f.thread_id for f in parts}
    history = [r for f in parts for r in f.history] + [
        Revision(content=f.content, category=f.category, at=at, reason=f"consolidated: {f.id}")
        for f in parts
    ]
    confirmed = [f.last_confirmed_at for f in parts if f.last_confirmed_at]
    accessed = [f.last_accessed_at for f in parts if f.last_accessed_at]
    return Fact(
        content=merge.content,
        category=parts[0].category,
        confidence=max(f.confidence for f in parts),
        user_id=parts[0].user_id,
        agent_id=parts[0].agent_id,
        thread_id=threads.pop() if len(threads) == 1 else None,
        sources=(*_sources(parts), source),
        confirmations=sum(f.confirmations for f in parts),
        history=tuple(sorted(history, key=lambda r: r.at)),
        created_at=min(f.created_at for f in parts),
        updated_at=at,
        last_confirmed_at=max(confirmed) if confirmed else None,
        last_accessed_at=max(accessed) if accessed else None,
        merged_from=tuple(f.id for f in parts),
    )


def merge_plan(merges: Sequence[Accepted], *, user_id: str, at: datetime, source: Source) -> Plan:
    """The plan that stores each merged fact and supersedes its parts by it."""
    operations: list[Add | Supersede] = []
    for merge in merges:
        fact = merged_fact(merge, at=at, source=source)
        operations.append(Add(fact=fact, reason=merge.reason))
        operations += [
            Supersede(fact_id=part.id, by=fact.id, reason=f"consolidated into {fact.id}")
            for part in merge.parts
        ]
    return Plan(user_id=user_id, at=at, operations=tuple(operations))
