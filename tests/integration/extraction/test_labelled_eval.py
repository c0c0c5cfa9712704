"""The labelled set, replayed through the whole pipeline: a regression guard for hygiene.

With the recorded (messy) model replies, what is stored must stay precise and complete,
and nothing forbidden (transient chatter, secrets, permissions, the assistant's words,
injected memory) may be stored.
"""

from __future__ import annotations

from pathlib import Path

from recallmem.config import MemoryConfig
from recallmem.extraction.evaluate import evaluate, load_cases, replay_model
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings


def test_replayed_labelled_set_scores(home: Path) -> None:
    cases = load_cases()
    config = MemoryConfig(home=home)
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        report = evaluate(replay_model(cases), memory.repository, config, cases=cases)
    totals = report.totals()
    assert totals["errors"] == 0 and totals["violations"] == 0
    assert totals["precision"] >= 0.9 and totals["recall"] >= 0.9
    assert totals["lifecycle"] == 1.0  # every supersede, done and confirm expected happened
    assert totals["calls"] == sum(c.recorded is not None for c in cases)  # one call per case
    for language in ("en", "zh"):
        assert report.totals(language)["recall"] >= 0.85
    assert "prompt extract@11, model replay" in report.table()
