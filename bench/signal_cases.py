"""Scoring the signal detectors on labelled cases (the bench and the quality tests).

>>> from recallmem.signals.detector import load_signals
>>> case = LabelledCase(text="上次的方案", label=True, lang="zh")
>>> evaluate("recall_cue", [case], load_signals()).recall
1.0
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field
from recallmem.signals.detector import Signals
from recallmem.signals.kinds import Language, SignalKind


class LabelledCase(BaseModel):
    """One line of ``tests/data/signals/*.jsonl``: a text, whether it should fire, its language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str = Field(min_length=1)
    label: bool
    lang: Language


@dataclass(frozen=True)
class Quality:
    """Confusion counts of one detector on a set of labelled cases."""

    true_positives: int
    false_positives: int
    false_negatives: int
    true_negatives: int

    @property
    def precision(self) -> float:
        """Share of firings that were right (1.0 when it never fired)."""
        fired = self.true_positives + self.false_positives
        return self.true_positives / fired if fired else 1.0

    @property
    def recall(self) -> float:
        """Share of positives it fired on (1.0 when there were none)."""
        positives = self.true_positives + self.false_negatives
        return self.true_positives / positives if positives else 1.0

    @property
    def cases(self) -> int:
        """How many cases were scored."""
        return (
            self.true_positives + self.false_positives + self.false_negatives + self.true_negatives
        )


def evaluate(kind: SignalKind | str, cases: Iterable[LabelledCase], signals: Signals) -> Quality:
    """Score detector ``kind`` on labelled cases."""
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for case in cases:
        counts[(signals.detect(kind, case.text) is not None, case.label)] += 1
    return Quality(
        true_positives=counts[(True, True)],
        false_positives=counts[(True, False)],
        false_negatives=counts[(False, True)],
        true_negatives=counts[(False, False)],
    )
