"""Bilingual detectors for what a message says about memory.

Four detectors, each returning the matched span (the words that fired it) or ``None``:

- :func:`recall_cue` — the user points back at earlier conversations or at something of
  theirs ("last time", "as I said", "my usual ...", "上次", "之前", "还记得", "照老规矩").
- :func:`hedge` — the assistant's reply hedges about earlier context ("I don't have access
  to previous conversations", "我不确定你之前是否提过"), not about the task itself.
- :func:`correction` — the user says something earlier was wrong ("that's not right",
  "不对，我是后端").
- :func:`remember_request` — the user asks to remember something or sets a standing rule
  ("remember that ...", "from now on", "记住", "以后都").

The patterns are data, in ``prompts/signals.yaml``; they are validated and compiled once,
when first used. ``load_signals(semantic=True)`` adds a second stage for texts no pattern
decided (:mod:`recallmem.signals.prototypes`: nearest labelled prototypes in the offline
encoder's space); the default, pattern-only path never loads a model.

>>> recall_cue("按上次那个方案来")
'上次'
>>> hedge("I'm not sure this code compiles.") is None
True
>>> hedge("I'm not sure whether you mentioned your team before.")
"I'm not sure whether you mentioned"
>>> remember_request("以后都用中文回复")
'以后都'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.prompts import compiled_patterns, load_data
from recallmem.signals.kinds import Language as Language  # re-exported: it used to live here
from recallmem.signals.kinds import SignalKind

if TYPE_CHECKING:
    from recallmem.signals.prototypes import PrototypeStage


class PatternsByLanguage(BaseModel):
    """Regular expressions per language; each must compile."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(default_factory=list)
    zh: list[str] = Field(default_factory=list)

    _compiles = field_validator("en", "zh")(compiled_patterns)

    def all(self) -> list[str]:
        """Every pattern, English first."""
        return [*self.en, *self.zh]


class DetectorSpec(BaseModel):
    """One detector: what fires it and what vetoes a match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=10)
    patterns: PatternsByLanguage
    exclude: PatternsByLanguage = PatternsByLanguage()

    @field_validator("patterns")
    @classmethod
    def _needs_patterns(cls, value: PatternsByLanguage) -> PatternsByLanguage:
        if not value.en or not value.zh:
            raise ValueError("a detector needs at least one English and one Chinese pattern")
        return value


class SignalsSpec(BaseModel):
    """``prompts/signals.yaml``: the four detectors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["signals"]
    version: str = Field(min_length=1)
    detectors: dict[SignalKind, DetectorSpec]

    @field_validator("detectors")
    @classmethod
    def _all_detectors(
        cls, value: dict[SignalKind, DetectorSpec]
    ) -> dict[SignalKind, DetectorSpec]:
        if missing := set(SignalKind) - value.keys():
            raise ValueError(f"detectors missing: {sorted(missing)}")
        return value


@dataclass(frozen=True)
class Detector:
    """A compiled detector: the first pattern match not inside an excluded span."""

    kind: SignalKind
    patterns: tuple[re.Pattern[str], ...]
    exclusions: tuple[re.Pattern[str], ...]

    @classmethod
    def compile(cls, kind: SignalKind, spec: DetectorSpec) -> Detector:
        """Compile a validated spec (case-insensitive, multi-line anchors)."""
        flags = re.IGNORECASE | re.MULTILINE
        return cls(
            kind=kind,
            patterns=tuple(re.compile(p, flags) for p in spec.patterns.all()),
            exclusions=tuple(re.compile(p, flags) for p in spec.exclude.all()),
        )

    def search(self, text: str) -> str | None:
        """The earliest matched span in ``text`` that no exclusion overlaps, or None."""
        if not text:
            return None
        excluded = [m.span() for x in self.exclusions for m in x.finditer(text)]
        best: re.Match[str] | None = None
        for pattern in self.patterns:
            for match in pattern.finditer(text):
                if any(_vetoes(span, match.span()) for span in excluded):
                    continue
                if best is None or match.start() < best.start():
                    best = match
                break
        return _clean(best.group(0)) if best else None

    def vetoes(self, text: str) -> bool:
        """Whether an exclusion matches anywhere in ``text`` (a known non-signal)."""
        return any(x.search(text) for x in self.exclusions)


def _vetoes(excluded: tuple[int, int], match: tuple[int, int]) -> bool:
    # An excluded span vetoes a match it overlaps, unless the match wraps it entirely:
    # "which 'usual format' you mean" uses the quote as a noun inside a real hedge.
    overlaps = excluded[0] < match[1] and match[0] < excluded[1]
    wrapped = match[0] < excluded[0] and excluded[1] < match[1]
    return overlaps and not wrapped


def _clean(span: str) -> str:
    # Patterns anchor on a preceding punctuation mark or space; the span is the words.
    return span.strip(" \t\r\n，。！？、,.!?:：")


@dataclass(frozen=True)
class Signals:
    """All four compiled detectors from one signals file, and the optional second stage."""

    version: str
    detectors: dict[SignalKind, Detector]
    semantic: PrototypeStage | None = None

    def detect(self, kind: SignalKind | str, text: str) -> str | None:
        """The span that fires detector ``kind`` in ``text``, or None.

        A pattern decides first: a match fires, an exclusion anywhere in the text means
        no. Only a text neither decided goes to the second stage, when there is one.
        """
        detector = self.detectors[SignalKind(kind)]
        span = detector.search(text)
        if span is not None or self.semantic is None or not text.strip():
            return span
        if detector.vetoes(text):
            return None
        return self.semantic.match(detector.kind, text)


@lru_cache(maxsize=16)
def load_signals(prompt_dir: Path | None = None, *, semantic: bool = False) -> Signals:
    """Load, validate and compile ``prompts/signals.yaml`` (cached per directory).

    With ``semantic=True`` the detectors also consult the prototypes in
    ``prompts/signals_prototypes.yaml`` for texts no pattern decided; the encoder loads
    on the first such text. A malformed file raises :class:`recallmem.errors.PromptError`
    naming the problem.

    >>> load_signals().detect("correction", "不对，我是后端")
    '不对'
    """
    spec = load_data("signals", SignalsSpec, prompt_dir)
    stage = None
    if semantic:
        from recallmem.signals.prototypes import load_prototype_stage

        stage = load_prototype_stage(prompt_dir)
    return Signals(
        version=spec.version,
        detectors={kind: Detector.compile(kind, d) for kind, d in spec.detectors.items()},
        semantic=stage,
    )


def recall_cue(text: str) -> str | None:
    """The words that point back at earlier context, or None.

    >>> recall_cue("Format it the way we agreed on last week.")
    'the way we agreed on'
    >>> recall_cue("Write a quicksort in Rust") is None
    True
    """
    return load_signals().detect(SignalKind.RECALL_CUE, text)


def hedge(text: str) -> str | None:
    """The words of an assistant reply that hedge about earlier context, or None.

    >>> hedge("我无法访问之前的对话，能再说一下是哪个方案吗？")
    '无法访问之前的对话'
    >>> hedge("我不确定这个 API 是否支持流式") is None
    True
    """
    return load_signals().detect(SignalKind.HEDGE, text)


def correction(text: str) -> str | None:
    """The words with which the user corrects something said or stored earlier, or None.

    >>> correction("No, I'm on the backend team now.")
    "No, I'm"
    >>> correction("What's wrong with this loop?") is None
    True
    """
    return load_signals().detect(SignalKind.CORRECTION, text)


def remember_request(text: str) -> str | None:
    """The words asking to remember something or setting a standing rule, or None.

    >>> remember_request("From now on, reply in Chinese.")
    'From now on'
    >>> remember_request("How do I remember all these git commands?") is None
    True
    """
    return load_signals().detect(SignalKind.REMEMBER_REQUEST, text)


__all__ = [
    "Detector",
    "SignalKind",
    "Signals",
    "SignalsSpec",
    "correction",
    "hedge",
    "load_signals",
    "recall_cue",
    "remember_request",
]
