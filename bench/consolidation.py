"""Consolidation on the labelled set: merges proposed, accepted, wrong, facts lost.

Each case of ``prompts/evaluation/consolidation.yaml`` is stored as its own user in a
fresh embedded Chroma with the default encoder (USE), consolidated once with the
recorded model reply replayed (``FakeChatModel``) and once with no model (near-duplicates
only), and scored by ``recallmem.lifecycle.consolidation_eval``. The first-look figures
(the model's proposals before any consolidation rule existed) are kept in
``bench/consolidation_first_look.json`` and shown beside the current ones.

``python -m bench consolidation`` prints the table and writes its section.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from bench.report import machine_note, markdown_table, save_results, write_section

FIRST_LOOK = Path(__file__).resolve().parent / "consolidation_first_look.json"
_COLUMNS = ("proposed", "accepted", "wrong", "lost", "expected", "complete", "partial")


def measure() -> dict[str, Any]:
    """The figures with the replayed model and without a model."""
    from recallmem.config import MemoryConfig
    from recallmem.lifecycle.consolidation_eval import evaluate
    from recallmem.memory import Memory

    with tempfile.TemporaryDirectory() as home, Memory(MemoryConfig(home=home)) as memory:
        results = {}
        for mode, with_model in (("model", True), ("no model", False)):
            figures = evaluate(memory.repository, memory.config, with_model=with_model)
            results[mode] = {
                **{k: getattr(figures, k) for k in (*_COLUMNS, "cases", "unexpected_calls")},
                "wrong_cases": [s.id for s in figures.scores if s.wrong],
                "lost_cases": [s.id for s in figures.scores if s.lost],
            }
    return results


def consolidation(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Score the labelled set (``quick`` changes nothing: it is small)."""
    results = measure()
    first = json.loads(FIRST_LOOK.read_text("utf-8")) if FIRST_LOOK.is_file() else {}
    rows = [[mode, *(f[k] for k in _COLUMNS), ", ".join(f["wrong_cases"]) or "–"]
            for mode, f in results.items()]  # fmt: skip
    if first:
        rows.append(["model, first look (no rules)", *(first[k] for k in _COLUMNS),
                     ", ".join(first["wrong_cases"]) or "–"])  # fmt: skip
    table = markdown_table(("run", *_COLUMNS, "wrong merges in"), rows)
    print(table)
    if write:
        cases = results["model"]["cases"]
        body = (
            f"Labelled set `prompts/evaluation/consolidation.yaml` ({cases} cases, "
            "English and Chinese, with traps: categories, corrections, pinned facts, "
            '"likes tea"/"likes coffee", swapped values, scopes, invented and dropped '
            "words), stored in embedded Chroma with the USE encoder and consolidated "
            "with the recorded replies replayed. *proposed*: merges proposed; *accepted*: "
            "stored; *wrong*: stored merges not within one labelled group (target 0); "
            "*lost*: facts out of recall with no active merged fact keeping their key "
            "terms (target 0); *complete*/*partial*: labelled groups merged whole or in "
            f"part, of *expected*.\n\n{table}\n\n{machine_note()}"
        )
        write_section("consolidation", body)
        save_results("consolidation", results)
    return results
