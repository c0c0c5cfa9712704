"""The optional second stage of the signal detectors: nearest labelled prototypes.

Patterns miss paraphrases nobody wrote a pattern for ("I'm drawing a blank on the library
we discussed", "跨对话的信息我保存不了"). When no pattern fired and no exclusion vetoed
the text, this stage embeds it with the offline multilingual encoder and compares it with
labelled prototype sentences of the same detector and language from
``prompts/signals_prototypes.yaml``: it fires when the mean similarity of the ``k``
nearest positives beats that of the ``k`` nearest negatives by more than the detector's
margin.

The encoder and the prototype vectors load on first use (the prototypes are embedded
once per process), so importing this module, or using the pattern-only detectors, never
loads a model.

>>> stage = load_prototype_stage()
>>> stage.spec.k, stage.spec.margin_for("hedge"), stage.spec.margin_for("correction")
(5, 0.1, 0.05)
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.embedders.use import UniversalSentenceEncoder
from recallmem.embedders.vectors import embed_matrix
from recallmem.prompts import load_data
from recallmem.signals.kinds import Language, SignalKind
from recallmem.text.words import has_cjk

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings


# Clause boundaries for the span shown to the caller (the decision uses the whole text).
_CLAUSE_END = re.compile(r"(?<=[。！？!?;；\n])|(?<=[.:：])\s")


class ClassPrototypes(BaseModel):
    """Positive and negative example sentences of one detector in one language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    positive: list[str] = Field(min_length=1)
    negative: list[str] = Field(min_length=1)


class PrototypesSpec(BaseModel):
    """``prompts/signals_prototypes.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["signals_prototypes"]
    version: str = Field(min_length=1)
    k: int = Field(ge=1, le=20)
    margin: float = Field(ge=-1.0, le=1.0)
    margins: dict[str, float] = Field(default_factory=dict)
    detectors: dict[str, dict[Language, ClassPrototypes]]

    def margin_for(self, kind: str) -> float:
        """The detector's own margin, else the shared one."""
        return self.margins.get(kind, self.margin)

    @field_validator("detectors")
    @classmethod
    def _every_detector_and_language(
        cls, value: dict[str, dict[Language, ClassPrototypes]]
    ) -> dict[str, dict[Language, ClassPrototypes]]:

        known = {kind.value for kind in SignalKind}
        if unknown := set(value) - known:
            raise ValueError(f"unknown detectors: {sorted(unknown)}")
        if missing := known - set(value):
            raise ValueError(f"detectors missing: {sorted(missing)}")
        for kind, by_lang in value.items():
            if lacking := {"en", "zh"} - set(by_lang):
                raise ValueError(f"{kind} has no prototypes for {sorted(lacking)}")
        return value

    @field_validator("margins")
    @classmethod
    def _known_margins(cls, value: dict[str, float]) -> dict[str, float]:

        if unknown := set(value) - {kind.value for kind in SignalKind}:
            raise ValueError(f"margins for unknown detectors: {sorted(unknown)}")
        if out_of_range := [k for k, m in value.items() if not -1.0 <= m <= 1.0]:
            raise ValueError(f"margins must lie in [-1, 1]: {sorted(out_of_range)}")
        return value


def language_of(text: str) -> Language:
    """``zh`` when the text has any CJK character, else ``en``.

    >>> language_of("按上次那个 plan 来"), language_of("as usual")
    ('zh', 'en')
    """
    return "zh" if has_cjk(text) else "en"


class PrototypeStage:
    """Nearest-prototype classifier over the encoder's sentence vectors."""

    def __init__(self, spec: PrototypesSpec, embeddings: Embeddings | None = None) -> None:
        self.spec = spec
        self._embeddings = embeddings
        self._vectors: dict[tuple[str, Language], tuple[np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _encoder(self) -> Embeddings:
        if self._embeddings is None:
            # USE is the encoder the prototypes and margins were tuned on.
            self._embeddings = UniversalSentenceEncoder()
        return self._embeddings

    def _embed(self, texts: list[str]) -> np.ndarray:
        return embed_matrix(self._encoder(), texts)

    def _prototypes(self, kind: str, lang: Language) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if (kind, lang) not in self._vectors:
                examples = self.spec.detectors[kind][lang]
                self._vectors[kind, lang] = (
                    self._embed(examples.positive),
                    self._embed(examples.negative),
                )
            return self._vectors[kind, lang]

    def margin_of(self, kind: SignalKind | str, text: str) -> float:
        """How far ``text`` leans to the positives (above the detector's margin fires)."""
        key = str(getattr(kind, "value", kind))
        positive, negative = self._prototypes(key, language_of(text))
        query = self._embed([text])[0]
        k = self.spec.k
        near_pos = np.sort(positive @ query)[-k:].mean()
        near_neg = np.sort(negative @ query)[-k:].mean()
        return float(near_pos - near_neg)

    def match(self, kind: SignalKind | str, text: str) -> str | None:
        """The clause of ``text`` closest to the positives when the text fires, or None."""
        key = str(getattr(kind, "value", kind))
        if not text.strip() or self.margin_of(key, text) <= self.spec.margin_for(key):
            return None
        return self._best_clause(kind, text)

    def _best_clause(self, kind: SignalKind | str, text: str) -> str:
        clauses = [c.strip() for c in _CLAUSE_END.split(text) if c.strip()]
        if len(clauses) <= 1:
            return text.strip()
        key = str(getattr(kind, "value", kind))
        positive, _ = self._prototypes(key, language_of(text))
        scores = (self._embed(clauses) @ positive.T).max(axis=1)
        best: str = clauses[int(np.argmax(scores))]
        return best


@lru_cache(maxsize=8)
def load_prototype_stage(prompt_dir: Path | None = None) -> PrototypeStage:
    """Load and validate ``prompts/signals_prototypes.yaml`` (cached per directory).

    Nothing is embedded until the first text reaches the stage.
    """
    spec = load_data("signals_prototypes", PrototypesSpec, prompt_dir)
    return PrototypeStage(spec)


__all__ = [
    "ClassPrototypes",
    "PrototypeStage",
    "PrototypesSpec",
    "language_of",
    "load_prototype_stage",
]
