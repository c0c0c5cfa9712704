"""Scoring consolidation on a labelled set: merges proposed, accepted, wrong, facts lost.

Each labelled case (``prompts/evaluation/consolidation.yaml``) is a user's stored facts,
the groups of them that are supplements about one subject, and a recorded model reply.
:func:`evaluate` stores each case's facts in a real store (one user per case), runs a
consolidation with the reply replayed through ``FakeChatModel`` (or with no model:
near-duplicates only) and compares what is stored afterwards:

- **proposed**: merges the model proposed (or the near-duplicate rule did);
- **accepted**: merges stored;
- **wrong**: stored merges whose parts are not all in one labelled group;
- **lost**: facts out of recall without an active merged fact that keeps their key
  terms (or erased);
- **complete**: labelled groups that became one fact; **partial**: ones partly merged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.lifecycle.consolidation import ConsolidationReport, consolidate
from recallmem.lifecycle.merge_rules import key_terms
from recallmem.testing import FakeChatModel
from recallmem.text.quoting import quote_text
from recallmem.types import Category, Fact, Status, utcnow

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

_SHOWN = re.compile(r"^\[(F\d+)\] \([^)]*\) (.*?)(?: — correction; wrong approach: .*)?$", re.M)
_CASE_REF = re.compile(r'"E(\d+)"')
_TOTALS = ("proposed", "accepted", "wrong", "lost", "expected", "complete", "partial")


class CaseFact(BaseModel):
    """A fact stored before the run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    category: Category
    pinned: bool = False
    source_error: str | None = None
    agent_id: str | None = None


class ConsolidationCase(BaseModel):
    """One labelled memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    language: Literal["zh", "en"]
    tags: tuple[str, ...] = ()
    facts: tuple[CaseFact, ...] = Field(min_length=2)
    merges: tuple[tuple[int, ...], ...] = ()
    recorded: str | None = None


class ConsolidationSet(BaseModel):
    """The labelled set file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    cases: tuple[ConsolidationCase, ...] = Field(min_length=1)


class CaseScore(BaseModel):
    """The figures of one case."""

    model_config = ConfigDict(frozen=True)

    id: str
    tags: tuple[str, ...]
    proposed: int
    accepted: int
    wrong: int
    lost: int
    expected: int
    complete: int
    partial: int
    unexpected_call: bool
    refused: tuple[str, ...]


class Figures(BaseModel):
    """Totals over a labelled set."""

    model_config = ConfigDict(frozen=True)

    cases: int
    proposed: int
    accepted: int
    wrong: int
    lost: int
    expected: int
    complete: int
    partial: int
    unexpected_calls: int
    scores: tuple[CaseScore, ...]


def default_cases_path() -> Path:
    """The shipped labelled set (``prompts/evaluation/consolidation.yaml``)."""
    root = resources.files("recallmem._prompts")
    return Path(str(root.joinpath("evaluation/consolidation.yaml")))


def load_cases(path: Path | None = None) -> list[ConsolidationCase]:
    """Load and validate a labelled set; errors name the file and the problem."""
    path = Path(path) if path else default_cases_path()
    if not path.is_file():
        raise InvalidInputError(f"no labelled consolidation set at {path}")
    try:
        data = ConsolidationSet.model_validate(yaml.safe_load(path.read_text("utf-8")))
    except (yaml.YAMLError, ValidationError) as exc:
        raise InvalidInputError(f"{path} is not a valid labelled consolidation set: {exc}") from exc
    return list(data.cases)


def _replay(case: ConsolidationCase) -> FakeChatModel:
    def reply(messages: list[BaseMessage]) -> str:
        if case.recorded is None:
            raise AssertionError(f"case {case.id}: the model must not be called")
        shown = {text: ref for ref, text in _SHOWN.findall(messages[-1].text)}
        refs = {n: shown.get(quote_text(f.content)) for n, f in enumerate(case.facts, 1)}
        return _CASE_REF.sub(lambda m: f'"{refs.get(int(m[1])) or "E" + m[1]}"', case.recorded)

    return FakeChatModel(responses=[reply])


def _seed(store: FactRepository, case: ConsolidationCase, user_id: str) -> list[Fact]:
    facts = [
        Fact(content=f.content, category=f.category, pinned=f.pinned, user_id=user_id,
             source_error=f.source_error, agent_id=f.agent_id)
        for f in case.facts
    ]  # fmt: skip
    store.put(facts)
    return facts


def _is_lost(part: Fact, after: dict[str, Fact]) -> bool:
    now = after.get(part.id)
    if now is None:
        return True
    if now.status is Status.ACTIVE:
        return False
    successor = after.get(now.superseded_by or "")
    if successor is None or successor.status is not Status.ACTIVE:
        return True
    return not key_terms(part.content) <= key_terms(successor.content)


def _score(
    case: ConsolidationCase, seeded: list[Fact], report: ConsolidationReport,
    after: dict[str, Fact], called: bool,
) -> CaseScore:  # fmt: skip
    position = {f.id: n for n, f in enumerate(seeded, 1)}
    groups = [set(g) for g in case.merges]
    merged = [{position[p] for p in m.parts} for m in report.merges]
    wrong = sum(not any(m <= g for g in groups) for m in merged)
    complete = sum(any(g <= m for m in merged) for g in groups)
    partial = sum(any(m < g for m in merged) and not any(g <= m for m in merged) for g in groups)
    return CaseScore(
        id=case.id, tags=case.tags, proposed=report.proposed, accepted=report.merged,
        wrong=wrong, lost=sum(_is_lost(f, after) for f in seeded), expected=len(groups),
        complete=complete, partial=partial,
        unexpected_call=called and case.recorded is None,
        refused=tuple(r.reason for r in report.refused),
    )  # fmt: skip


def evaluate_case(
    store: FactRepository,
    config: MemoryConfig,
    case: ConsolidationCase,
    *,
    with_model: bool = True,
    now: datetime | None = None,
) -> CaseScore:
    """Seed one case as its own user, consolidate it and score what was stored."""
    user_id = f"eval-{case.id}-{'model' if with_model else 'dedup'}"
    seeded = _seed(store, case, user_id)
    model = _replay(case) if with_model else None
    try:
        report = consolidate(store, model, config, user_id=user_id, agent_id=None,
                             now=now or utcnow())  # fmt: skip
    except AssertionError:  # the model was called on a case that must not call it
        report = ConsolidationReport(user_id=user_id, at=utcnow())
    called = bool(model is not None and model.requests)
    after = {f.id: f for f in store.facts(user_id)}
    return _score(case, seeded, report, after, called)


def evaluate(
    store: FactRepository,
    config: MemoryConfig,
    cases: Sequence[ConsolidationCase] | None = None,
    *,
    with_model: bool = True,
) -> Figures:
    """Score every case (by default the shipped set) and total the figures."""
    scores = [evaluate_case(store, config, c, with_model=with_model)
              for c in (cases if cases is not None else load_cases())]  # fmt: skip
    total = {k: sum(getattr(s, k) for s in scores) for k in _TOTALS}
    return Figures(cases=len(scores), unexpected_calls=sum(s.unexpected_call for s in scores),
                   scores=tuple(scores), **total)  # fmt: skip
