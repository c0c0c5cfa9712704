"""What each ranking technique adds, benchmark by benchmark, and what it costs in latency.

Steps are cumulative: each adds one technique to the one before, through the public
``Memory.weights`` (a ``recallmem.retrieval.ranking.Weights``). The last step is the
default configuration. Dev and test splits are both shown; the techniques were kept or
dropped on dev.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from bench.data import load_dataset
from bench.metrics import OVERALL
from bench.quality import SPLITS, run_recallmem
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.runner import RunResult
from bench.systems import BatchCachedEncoder

DATASETS = ("locomo-fact", "madial")


def steps() -> list[tuple[str, dict[str, Any]]]:
    """(label, weight overrides) from dense-only to the default, cumulatively."""
    from recallmem.retrieval.ranking import Weights

    default = Weights()
    names = {f.name for f in fields(Weights)}
    off = ("lexical", "recency", "confidence")
    dense_only: dict[str, Any] = {n: 0.0 for n in off if n in names}
    ladder: list[tuple[str, dict[str, Any]]] = [("dense only (USE cosine)", dense_only)]
    ladder.append(("+ BM25, score-normalised fusion", {**dense_only, "lexical": default.lexical}))
    ladder.append(("default (+ recency, confidence)", {}))
    return ladder


def ablation(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run every step on every dataset and split; print and (optionally) write."""
    embeddings = BatchCachedEncoder()
    datasets = {
        (name, split): load_dataset(name, split).subset(1, 25)
        if quick
        else load_dataset(name, split)
        for name in DATASETS
        for split in SPLITS
    }
    recorded = []
    for label, overrides in steps():
        runs: dict[str, dict[str, RunResult]] = {}
        for (name, split), dataset in datasets.items():
            options = {"weights": overrides} if overrides else {}
            runs.setdefault(name, {})[split] = run_recallmem(dataset, embeddings, **options)
        recorded.append((label, runs))
    body = render(recorded)
    print(body)
    payload = {
        "steps": [
            {
                "label": label,
                "runs": {n: {s: r.to_json() for s, r in by.items()} for n, by in runs.items()},
            }
            for label, runs in recorded
        ]
    }
    if write:
        save_results("ablation", payload)
        write_section("ablation", body)
    return payload


def render(recorded: list[tuple[str, dict[str, dict[str, RunResult]]]]) -> str:
    """The ablation table: R@10 per dataset and split, and recall p50/p95 on LoCoMo test."""
    headers = ["step"]
    for name in DATASETS:
        headers += [f"{name} dev R@10", f"{name} test R@10"]
    headers += ["LoCoMo recall p50 ms", "p95", "MADial recall p50 ms", "p95"]
    rows = []
    for label, runs in recorded:
        row: list[Any] = [label]
        for name in DATASETS:
            row += [runs[name][s].recall[OVERALL][10] for s in SPLITS]
        for name in DATASETS:
            row += [runs[name]["test"].search_ms["p50"], runs[name]["test"].search_ms["p95"]]
        rows.append(row)
    return (
        "## Ablation: what each technique adds\n\n"
        "Cumulative steps, same embedder (USE), recallmem's public API. R@10 in percent; "
        "latency is per recall on the test split, query embedding included.\n\n"
        + markdown_table(headers, rows)
        + f"\n\n{machine_note()}\n"
    )
