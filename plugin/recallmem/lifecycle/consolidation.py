"""Consolidation: facts that grew as supplements about one subject become one fact.

One run for one user: the active facts of each scope are grouped by similarity
(:mod:`.clusters`), the groups are shown to the chat model in one bounded call
(:mod:`.merge_prompt`, ``prompts/consolidate.yaml``), and what it proposes is vetted
(:mod:`.merge_rules`). Without a model only the duplicates the near-duplicate rule
accepts are merged (:mod:`.duplicates`). The accepted merges are journaled
(:mod:`.merge_journal`), then applied through the same idempotent plan extraction
uses: a new fact per merge, its parts superseded by it. Every run logs a
``memory_consolidation`` event.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict

from recallmem.config import MemoryConfig
from recallmem.errors import ForgottenMeanwhileError
from recallmem.events import ConsolidationEvent, log_event
from recallmem.extraction.write_plan import Add, apply_plan
from recallmem.lifecycle.clusters import related_groups
from recallmem.lifecycle.duplicates import duplicate_proposals
from recallmem.lifecycle.merge_journal import JournalFiles, MergeJournal
from recallmem.lifecycle.merge_prompt import Shown, Unreadable, ask, render_groups
from recallmem.lifecycle.merge_rules import CONSOLIDATED, RULES, Refusal, merge_plan, vet
from recallmem.persistence.forget_ledger import work_began
from recallmem.prompts import load_prompt
from recallmem.types import DEDUP_SOURCE, Fact, Source, Status, TokenUsage

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository


class Merge(BaseModel):
    """One merge as stored: the new fact and the ids of the parts it superseded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact: Fact
    parts: tuple[str, ...]


class ConsolidationReport(BaseModel):
    """What one consolidation run of one user did, and what it refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    agent_id: str | None = None
    at: datetime
    shown: int = 0
    proposed: int = 0
    merges: tuple[Merge, ...] = ()
    refused: tuple[Refusal, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()
    usage: TokenUsage = TokenUsage()
    model: str | None = None
    replayed: bool = False

    @property
    def merged(self) -> int:
        """How many merges were stored."""
        return len(self.merges)

    @property
    def superseded(self) -> int:
        """How many facts left recall, folded into a merged fact."""
        return sum(len(m.parts) for m in self.merges)


def _candidates(store: FactRepository, user_id: str, agent_id: str | None) -> list[Fact]:
    return [
        f
        for f in store.facts(user_id)
        if f.status is Status.ACTIVE and (agent_id is None or f.agent_id == agent_id)
    ]


def _decide(
    store: FactRepository,
    model: BaseChatModel | None,
    config: MemoryConfig,
    *,
    user_id: str,
    agent_id: str | None,
    now: datetime,
) -> MergeJournal:
    facts = _candidates(store, user_id, agent_id)
    vectors = store.vectors(user_id, [f.id for f in facts]) if facts else np.zeros((0, 1))
    groups = related_groups(facts, vectors, threshold=config.consolidation_similarity,
                            max_facts=config.consolidation_max_facts)  # fmt: skip
    shown = render_groups(groups)
    empty = MergeJournal(plan=merge_plan([], user_id=user_id, at=now, source=Source(at=now)))
    if not shown.refs:
        return empty
    if model is None:
        return _decide_without_model(store, config, shown, user_id=user_id, now=now)
    prompt = load_prompt("consolidate", config.prompt_dir)
    reply = ask(model, prompt, shown)
    accepted, refused = vet(reply.proposals, shown.refs, RULES)
    name = reply.model or type(model).__name__
    source = Source(at=now, extractor=name, prompt_version=prompt.label)
    return MergeJournal(
        plan=merge_plan(accepted, user_id=user_id, at=now, source=source),
        shown=len(shown.refs),
        proposed=len(reply.proposals) + len(reply.unreadable),
        refused=tuple(refused),
        unreadable=tuple(reply.unreadable),
        usage=reply.usage,
        model=name,
        prompt=prompt.label,
    )


def _decide_without_model(
    store: FactRepository, config: MemoryConfig, shown: Shown, *, user_id: str, now: datetime
) -> MergeJournal:
    rows = store.vectors(user_id, [f.id for f in shown.refs.values()])
    vectors = dict(zip(shown.refs, rows, strict=True))
    proposals = duplicate_proposals(shown.refs, vectors, threshold=config.dedup_similarity)
    accepted, refused = vet(proposals, shown.refs, RULES)
    source = Source(at=now, extractor=DEDUP_SOURCE)
    return MergeJournal(
        plan=merge_plan(accepted, user_id=user_id, at=now, source=source),
        shown=len(shown.refs),
        proposed=len(proposals),
        refused=tuple(refused),
    )


def _stands(merged: Fact, current: dict[str, Fact]) -> bool:
    # A merge stands while each part is as it was planned (active, the same text) or
    # already folded into it (a replay): a part forgotten or edited since is left alone.
    planned = {r.reason: r.content for r in merged.history}

    def part_ok(part: Fact | None) -> bool:
        if part is None:
            return False
        if part.superseded_by == merged.id:
            return True
        same_text = planned.get(f"{CONSOLIDATED}{part.id}") == part.content
        return part.status is Status.ACTIVE and same_text

    return all(part_ok(current.get(i)) for i in merged.merged_from)


def _apply(store: FactRepository, journal: MergeJournal) -> tuple[list[Merge], list[Refusal]]:
    plan = journal.plan
    added = [op.fact for op in plan.operations if isinstance(op, Add)]
    current = store.current([*plan.targets(), *(f.id for f in added)], user_id=plan.user_id)
    kept = {f.id for f in added if f.id in current or _stands(f, current)}
    operations = tuple(
        op for op in plan.operations
        if (op.fact.id if isinstance(op, Add) else getattr(op, "by", None)) in kept
    )  # fmt: skip
    records = apply_plan(plan.model_copy(update={"operations": operations}), current)
    if records:
        store.put(records)
    stale = [
        Refusal(ids=f.merged_from, content=f.content,
                reason="a part was changed or forgotten after the merge was decided")
        for f in added if f.id not in kept
    ]  # fmt: skip
    return [Merge(fact=f, parts=f.merged_from) for f in added if f.id in kept], stale


def consolidate(
    store: FactRepository,
    model: BaseChatModel | None,
    config: MemoryConfig,
    *,
    user_id: str,
    agent_id: str | None,
    now: datetime,
) -> ConsolidationReport:
    """Merge one user's supplement facts (each scope apart; only ``agent_id``'s if given).

    A plan a crash left journaled is applied first, instead of a new run.
    """
    files = JournalFiles(config.home)
    # One unit of work from the read of the parts to the write of the merges: a forget
    # of the user meanwhile refuses the write (persistence/forget_ledger.py).
    with work_began(user_id=user_id, agent_id=agent_id), files.running(user_id):
        journal = files.pending(user_id)
        replayed = journal is not None
        if journal is None:
            journal = _decide(store, model, config, user_id=user_id, agent_id=agent_id, now=now)
            if journal.plan.operations:
                files.record(journal)
        try:
            merges, stale = _apply(store, journal)
        except ForgottenMeanwhileError:
            files.done(user_id)  # the plan quotes what was forgotten: it goes too
            raise
        files.done(user_id)
    report = ConsolidationReport(
        user_id=user_id, agent_id=agent_id, at=journal.plan.at, shown=journal.shown,
        proposed=journal.proposed, merges=tuple(merges), refused=(*journal.refused, *stale),
        unreadable=journal.unreadable, usage=journal.usage, model=journal.model,
        replayed=replayed,
    )  # fmt: skip
    log_event(ConsolidationEvent.from_report(report))
    return report
