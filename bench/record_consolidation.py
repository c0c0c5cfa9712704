"""Consolidation requests for the labelled sets of stored facts.

Each case of ``prompts/evaluation/consolidation.yaml`` is stored as its own user (fixed
ids and times, so the request is the same on every run) and consolidated once with
:class:`~recallmem.testing.ReplayChatModel`: the request the product sends, answered
from a recording or written out to be answered. Cases whose facts are not related
enough make no request (the product calls no model for them).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import time_machine

from bench.record_extraction import RECORDED

STORED_AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
RUN_AT = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)


@dataclass
class CaseRun:
    """What one case asked, and what consolidation did with the reply."""

    id: str
    keys: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    merged: int = 0
    refused: int = 0


def render_consolidation(
    *, embeddings: Any, recordings: Path = RECORDED, requests_dir: Path | None = None
) -> list[CaseRun]:
    """Consolidate every labelled case as far as there are recordings."""
    import openai
    from recallmem import Memory, MemoryConfig
    from recallmem.lifecycle.consolidation_eval import load_cases
    from recallmem.testing import ReplayChatModel
    from recallmem.types import Fact, Source

    runs = []
    for case in load_cases():
        run = CaseRun(case.id)
        model = ReplayChatModel(recordings=recordings, requests_dir=requests_dir,
                                keep_all=requests_dir is not None, kind="consolidation")  # fmt: skip
        with tempfile.TemporaryDirectory() as home:
            memory = Memory(MemoryConfig(home=home, llm_model=None), embeddings=embeddings,
                            model=model)  # fmt: skip
            user = f"case-{case.id}"
            memory.put([Fact(id=f"{case.id}-{n}", content=f.content, category=f.category,
                             pinned=f.pinned, source_error=f.source_error, agent_id=f.agent_id,
                             user_id=user, created_at=STORED_AT, updated_at=STORED_AT,
                             sources=(Source(at=STORED_AT, extractor="bench-seed"),))
                        for n, f in enumerate(case.facts, 1)])  # fmt: skip
            with time_machine.travel(RUN_AT, tick=False):
                try:
                    report = memory.consolidate(user_id=user)
                    run.merged, run.refused = report.merged, len(report.refused)
                except openai.NotFoundError:
                    pass  # no recording yet: the request is written out
            memory.close(timeout=0)
        run.keys = list(dict.fromkeys([*model.answerer.answered, *model.answerer.missed]))
        run.waiting = list(dict.fromkeys(model.answerer.missed))
        runs.append(run)
    return runs
