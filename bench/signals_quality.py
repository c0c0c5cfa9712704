"""Precision and recall of the four signal detectors on the labelled sets.

``python -m bench.signals_quality [--no-write]`` prints a table per split and writes the
``signals`` section of docs/benchmarks.md. The ``dev`` split was used to tune the patterns;
the held-out splits were written before the patterns were tuned against them, and
``bench/signals_first_look.json`` keeps each held-out split's score from the first time
it was ever evaluated (later splits were written before earlier ones were inspected).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from recallmem.signals import LabelledCase, SignalKind, evaluate, load_signals

from bench.report import markdown_table, write_section

DATA_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "signals"
FIRST_LOOK = Path(__file__).resolve().parent / "signals_first_look.json"
SPLITS = ("dev", "heldout", "heldout2", "heldout3")
LANGS = ("en", "zh")


def load_cases(kind: SignalKind, split: str, lang: str) -> list[LabelledCase]:
    """The labelled cases of one detector, split and language."""
    path = DATA_DIR / f"{kind.value}.{split}.jsonl"
    cases = [LabelledCase.model_validate(json.loads(x)) for x in path.read_text().splitlines()]
    return [c for c in cases if c.lang == lang]


def quality_rows(splits: Sequence[str]) -> list[list[object]]:
    """One row per detector and language: cases, precision and recall (in %)."""
    signals = load_signals()
    rows: list[list[object]] = []
    for kind in SignalKind:
        for lang in LANGS:
            cases = [c for split in splits for c in load_cases(kind, split, lang)]
            q = evaluate(kind, cases, signals)
            rows.append([kind.value, lang, q.cases, 100 * q.precision, 100 * q.recall])
    return rows


def first_look_rows() -> list[list[object]]:
    """Each held-out split's score the first time it was evaluated."""
    data = json.loads(FIRST_LOOK.read_text())["splits"]
    rows: list[list[object]] = []
    for kind in SignalKind:
        for lang in LANGS:
            row: list[object] = [kind.value, lang]
            for split in SPLITS[1:]:
                score = data[split][kind.value][lang]
                row += [100 * score["precision"], 100 * score["recall"]]
            rows.append(row)
    return rows


def report() -> str:
    """The markdown section: current scores per split group, then first-look scores."""
    headers = ["detector", "lang", "cases", "precision %", "recall %"]
    first_headers = ["detector", "lang"] + [
        f"{split} {m}" for split in SPLITS[1:] for m in ("P %", "R %")
    ]
    return "\n\n".join(
        [
            "## Signal detectors (`recallmem.signals`)\n\n"
            "Regular-expression detectors whose patterns live in `prompts/signals.yaml`, "
            "scored on the labelled cases in `tests/data/signals/` "
            "(`python -m bench.signals_quality`).",
            "**All splits** (what the tests assert, target >= 90 %):\n\n"
            + markdown_table(headers, quality_rows(SPLITS)),
            "**Tuning split only** (`dev`):\n\n"
            + markdown_table(headers, quality_rows(SPLITS[:1])),
            "**Held-out splits, now** (every held-out split was inspected after its first "
            "look and the patterns generalised by phrase class, so these overstate; "
            "see the first-look table):\n\n" + markdown_table(headers, quality_rows(SPLITS[1:])),
            "**Held-out splits at first look** (each scored once before any pattern "
            "changed in response to it; this is the honest generalisation estimate, "
            "with 15+15 / 10+10 / 6+6 positives+negatives per language):\n\n"
            + markdown_table(first_headers, first_look_rows()),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables and, unless ``--no-write``, update docs/benchmarks.md."""
    parser = argparse.ArgumentParser(prog="python -m bench.signals_quality")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    body = report()
    print(body)
    if not args.no_write:
        print(f"wrote {write_section('signals', body)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
