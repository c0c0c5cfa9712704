"""Scoring an extraction prompt: fact-level precision and recall on a labelled set.

Each labelled case (``prompts/evaluation/extraction.yaml``) is a conversation, the facts
that should be stored from it and keywords that must not be stored. :func:`evaluate`
runs the whole pipeline on every case (filter, the model, hygiene, a real store) and
compares what was stored:

- **precision**: stored facts that match an expected fact / stored facts;
- **recall**: expected facts matched by a stored fact / expected facts;
- **proposal precision**: the same over everything the model proposed, before hygiene;
- **violations**: stored facts (their content or search keywords, or profile text)
  holding a forbidden keyword;
- **keywords**: expected facts labelled with search keywords (``fact_keywords``) that
  were stored carrying them (``Fact.keywords``, indexed for cross-language recall);
- existing facts that should be superseded, marked done or confirmed, and were.

A stored fact matches an expected one when its category is one of the expected ones and
every keyword appears in its content ("a|b" accepts either). With
:func:`replay_model` the model's replies are the recorded ones in the labelled set, so
the pipeline can be scored offline; with a real model, the prompt is what is scored.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Sequence
from datetime import UTC
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError, RecallmemError
from recallmem.extraction.filter import filter_messages
from recallmem.extraction.pipeline import ExtractionPipeline
from recallmem.extraction.report import ExtractionReport
from recallmem.facts.expiry import resolve_local
from recallmem.prompts import ChatPromptSpec
from recallmem.testing import FakeChatModel
from recallmem.types import Category, Fact

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

_SHOWN_FACT = re.compile(r"^\[(F\d+)\] \([^)]*\) (.*?)(?: — wrong approach: .*)?$", re.MULTILINE)
_EXISTING_REF = re.compile(r'"E(\d+)"')


class ExpectedFact(BaseModel):
    """A fact that should be stored: acceptable categories and keywords it must contain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: tuple[Category, ...]
    keywords: tuple[str, ...] = Field(min_length=1)
    valid_until: str | None = Field(
        default=None, description="The local (UTC) day or time the fact should hold until."
    )
    fact_keywords: tuple[str, ...] = Field(
        default=(),
        description="Search words the stored fact's own ``keywords`` must hold (a|b: either).",
    )

    @field_validator("category", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value


class Seed(BaseModel):
    """A fact stored before the conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    category: Category


class ExtractionCase(BaseModel):
    """One labelled conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    language: Literal["zh", "en"]
    tags: tuple[str, ...] = ()
    existing: tuple[Seed, ...] = ()
    messages: tuple[dict[str, str], ...] = Field(min_length=1)
    expected: tuple[ExpectedFact, ...] = ()
    superseded: tuple[str, ...] = ()
    done: tuple[str, ...] = ()
    confirmed: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    recorded: str | None = None


class LabelledSet(BaseModel):
    """The labelled set file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    cases: tuple[ExtractionCase, ...] = Field(min_length=1)

    @field_validator("cases")
    @classmethod
    def _unique_ids(cls, cases: tuple[ExtractionCase, ...]) -> tuple[ExtractionCase, ...]:
        ids = [c.id for c in cases]
        if dupes := sorted({i for i in ids if ids.count(i) > 1}):
            raise ValueError(f"duplicate case ids: {dupes}")
        return cases


def default_cases_path() -> Path:
    """The shipped labelled set (``prompts/evaluation/extraction.yaml``, in the wheel too)."""
    return Path(str(resources.files("recallmem._prompts").joinpath("evaluation/extraction.yaml")))


def load_cases(path: Path | None = None) -> list[ExtractionCase]:
    """Load and validate a labelled set; errors name the file and the problem."""
    path = Path(path) if path else default_cases_path()
    if not path.is_file():
        raise InvalidInputError(
            f"no labelled set at {path}; pass the path of one (the shipped "
            "prompts/evaluation/extraction.yaml shows the format)"
        )
    try:
        return list(LabelledSet.model_validate(yaml.safe_load(path.read_text("utf-8"))).cases)
    except (yaml.YAMLError, ValidationError) as exc:
        raise InvalidInputError(f"{path} is not a valid labelled set:\n{exc}") from exc


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def has_keywords(content: str, keywords: Sequence[str]) -> bool:
    """Whether every keyword (``a|b``: either) appears in ``content``."""
    folded = _fold(content)
    return all(any(_fold(alt) in folded for alt in kw.split("|")) for kw in keywords)


def matches(content: str, category: Category | str | None, expected: ExpectedFact) -> bool:
    """Whether a stored fact matches an expected one."""
    return category in expected.category and has_keywords(content, expected.keywords)


class CaseScore(BaseModel):
    """How one case went."""

    model_config = ConfigDict(frozen=True)

    id: str
    language: str
    expected: int
    stored: int
    covered: int  # expected facts matched by a stored fact
    correct: int  # stored facts matching an expected fact
    proposed: int
    proposed_correct: int
    violations: tuple[str, ...] = ()
    missed: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    lifecycle_expected: int = 0
    lifecycle_ok: int = 0
    keywords_expected: int = 0  # expected facts whose search keywords are labelled
    keywords_ok: int = 0  # ... stored (matched) with every one of them
    calls: int = 0
    prompt_tokens: int = 0
    error: str | None = None


def _ratio(num: int, den: int) -> float:
    return num / den if den else 1.0


_SUMMED = (
    "expected",
    "stored",
    "covered",
    "correct",
    "proposed",
    "proposed_correct",
    "lifecycle_expected",
    "lifecycle_ok",
    "keywords_expected",
    "keywords_ok",
    "calls",
    "prompt_tokens",
)


class EvalReport(BaseModel):
    """Scores of one prompt and model over a labelled set."""

    model_config = ConfigDict(frozen=True)

    prompt: str
    model: str
    cases: tuple[CaseScore, ...]

    def totals(self, language: str | None = None) -> dict[str, float]:
        """Micro-averaged scores, over all cases or one language."""
        cs = [c for c in self.cases if language in (None, c.language)]
        s = {k: sum(getattr(c, k) for c in cs) for k in _SUMMED}
        precision, recall = _ratio(s["correct"], s["stored"]), _ratio(s["covered"], s["expected"])
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "cases": len(cs),
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "proposal_precision": _ratio(s["proposed_correct"], s["proposed"]),
            "lifecycle": _ratio(s["lifecycle_ok"], s["lifecycle_expected"]),
            "keywords": _ratio(s["keywords_ok"], s["keywords_expected"]),
            "violations": sum(len(c.violations) for c in cs),
            "errors": sum(c.error is not None for c in cs),
            "calls": s["calls"],
            "prompt_tokens": s["prompt_tokens"],
        }

    def table(self) -> str:
        """A plain-text summary table, per language and overall."""
        head = (
            f"{'set':<6}{'cases':>6}{'P':>7}{'R':>7}{'F1':>7}{'propP':>7}{'life':>7}"
            f"{'kw':>6}{'viol':>6}{'err':>5}{'calls':>7}"
        )
        rows = [f"prompt {self.prompt}, model {self.model}", head]
        for language in ("en", "zh", None):
            t = self.totals(language)
            rows.append(
                f"{language or 'all':<6}{t['cases']:>6.0f}{t['precision']:>7.2f}{t['recall']:>7.2f}"
                f"{t['f1']:>7.2f}{t['proposal_precision']:>7.2f}{t['lifecycle']:>7.2f}"
                f"{t['keywords']:>6.2f}{t['violations']:>6.0f}{t['errors']:>5.0f}{t['calls']:>7.0f}"
            )
        return "\n".join(rows)


def _cite_shown(recorded: str, existing: Sequence[Seed], prompt: str) -> str:
    """``recorded`` with each ``"E<n>"`` replaced by the id the prompt showed seed n under."""
    shown = {content: ref for ref, content in _SHOWN_FACT.findall(prompt)}

    def cite(match: re.Match[str]) -> str:
        seed = existing[int(match.group(1)) - 1].content
        return f'"{shown.get(seed, "F0")}"'

    return _EXISTING_REF.sub(cite, recorded)


def replay_model(cases: Sequence[ExtractionCase]) -> FakeChatModel:
    """A fake model answering each case's prompt with the case's recorded reply.

    The case is recognised by its first user message (as filtered, secrets redacted);
    ``"E1"`` in the recording becomes the id under which the prompt showed the case's
    first existing fact.
    """
    keys = []
    for case in cases:
        said = filter_messages([m for m in case.messages if m["role"] == "user"][:1])
        keys.append(said[0].content.splitlines()[-1] if said else None)

    def answer(messages: list[BaseMessage]) -> str:
        prompt = messages[-1].text
        for case, key in zip(cases, keys, strict=True):
            if case.recorded is not None and key is not None and key in prompt:
                return _cite_shown(case.recorded, case.existing, prompt)
        raise LookupError("no recorded reply for this prompt")

    return FakeChatModel(responses=[answer], cycle=True, model_name="replay")


def _score(case: ExtractionCase, report: ExtractionReport, profile_text: str) -> CaseScore:
    stored = [(c.fact.content, c.fact.category) for c in report.added]
    proposed = stored + [(d.content, d.category) for d in report.dropped if d.category]
    hit = [any(matches(t, k, e) for e in case.expected) for t, k in stored]
    covered = [any(matches(t, k, e) for t, k in stored) for e in case.expected]
    # A fact's search keywords are stored text too: nothing forbidden may hide there.
    texts = [" ".join([c.fact.content, *c.fact.keywords]) for c in report.added]
    bad = [kw for kw in case.forbidden if any(has_keywords(t, [kw]) for t in texts)]
    bad += [f"profile:{kw}" for kw in case.forbidden if has_keywords(profile_text, [kw])]
    lifecycle = [
        any(has_keywords(c.fact.content, [kw]) for c in changes)
        for kws, changes in (
            (case.superseded, report.superseded),
            (case.done, report.done),
            (case.confirmed, report.confirmed),
        )
        for kw in kws
    ]
    # A time-bound fact counts as a lifecycle item: stored with the day it ends on.
    lifecycle += [
        any(
            matches(c.fact.content, c.fact.category, e)
            and c.fact.valid_until == resolve_local(e.valid_until, UTC)
            for c in report.added
        )
        for e in case.expected
        if e.valid_until is not None
    ]
    tagged = [e for e in case.expected if e.fact_keywords]
    return CaseScore(
        keywords_expected=len(tagged),
        keywords_ok=sum(_tagged(e, report) for e in tagged),
        id=case.id,
        language=case.language,
        expected=len(case.expected),
        stored=len(stored),
        covered=sum(covered),
        correct=sum(hit),
        proposed=len(proposed),
        proposed_correct=sum(any(matches(t, k, e) for e in case.expected) for t, k in proposed),
        violations=tuple(bad),
        missed=tuple(
            " ".join(e.keywords) for e, ok in zip(case.expected, covered, strict=True) if not ok
        ),
        extra=tuple(t for (t, _), ok in zip(stored, hit, strict=True) if not ok),
        lifecycle_expected=len(lifecycle),
        lifecycle_ok=sum(lifecycle),
        calls=report.usage.calls,
        prompt_tokens=report.usage.input_tokens,
    )


def _tagged(expected: ExpectedFact, report: ExtractionReport) -> bool:
    """Whether a stored fact matching ``expected`` carries its labelled search keywords."""
    return any(
        matches(c.fact.content, c.fact.category, expected)
        and has_keywords(" | ".join(c.fact.keywords), expected.fact_keywords)
        for c in report.added
    )


def evaluate(
    model: BaseChatModel,
    facts: FactRepository,
    config: MemoryConfig,
    *,
    cases: Sequence[ExtractionCase] | None = None,
    prompt: ChatPromptSpec | None = None,
) -> EvalReport:
    """Run every case through the pipeline (each as its own user) and score it.

    ``facts`` (a ``Memory``'s ``repository``) should be a scratch store (its facts are
    the cases' seeds and results); ``config.prompt_dir`` selects the prompt unless
    ``prompt`` is given.
    """
    cases = list(cases) if cases is not None else load_cases()
    run = uuid.uuid4().hex[:8]
    pipeline = ExtractionPipeline(facts, model, config, prompt=prompt, background=False)
    scores = []
    try:
        for case in cases:
            user = f"eval-{run}-{case.id}"
            facts.put(
                [Fact(content=s.content, category=s.category, user_id=user) for s in case.existing]
            )
            try:
                report = pipeline.extract(list(case.messages), user_id=user, thread_id=case.id)
            except RecallmemError as exc:
                report = ExtractionReport(user_id=user, thread_id=case.id, error=str(exc))
            profile = facts.profile(user_id=user, agent_id=None)
            text = " ".join(s.summary for s in profile.sections().values())
            score = _score(case, report, text)
            scores.append(
                score.model_copy(update={"error": report.error}) if report.error else score
            )
    finally:
        pipeline.close(timeout=0)
    name = getattr(model, "model_name", None) or type(model).__name__
    return EvalReport(prompt=pipeline.prompt.label, model=str(name), cases=tuple(scores))
