"""The shipped prototypes of the signal detectors' second stage are what the generator
writes from the labelled tuning splits (never from a held-out or blind one)."""

from __future__ import annotations

from bench.signals_prototypes import OUTPUT, PROTOTYPE_SPLITS, render


def test_the_shipped_prototypes_are_what_the_generator_writes() -> None:
    assert not [s for s in PROTOTYPE_SPLITS if "blind" in s or s in {"heldout5", "heldout6"}]
    assert render(50) == OUTPUT.read_text(encoding="utf-8")
