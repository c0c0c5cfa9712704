"""``python -m bench secrets`` scores both labelled sets and prints one table."""

from __future__ import annotations

import pytest

from bench.__main__ import main


def test_the_secrets_suite_prints_recall_and_precision_per_set(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["secrets", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "| set | messages | secrets found | recall | benign flagged | precision |" in out
    assert "| dev | all | 70/70 |" in out and "| heldout | all |" in out
