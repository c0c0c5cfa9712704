"""The default USE embedder beside the optional multilingual-e5-small (``embedders/e5.py``).

Both through recallmem's public API with the default ranking, on both splits; the cost
columns are what a user pays: facts stored per second (embedding included) and recall
latency (query embedding included).
"""

from __future__ import annotations

from typing import Any

from bench.metrics import OVERALL
from bench.quality import SPLITS, evaluate
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.runner import RunResult

DATASETS = ("locomo-fact", "madial")


def embedders(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run both embedders on both datasets; print and (optionally) write the section."""
    from recallmem.embedders import MultilingualE5Small, UniversalSentenceEncoder

    candidates = {
        "USE (default)": UniversalSentenceEncoder(),
        "e5-small (optional)": MultilingualE5Small(),
    }
    runs = {
        label: {name: evaluate(name, quick, embeddings=embedder) for name in DATASETS}
        for label, embedder in candidates.items()
    }
    body = render(runs)
    print(body)
    if write:
        save_results(
            "embedders",
            {label: {n: {s: r.to_json() for s, r in by.items()} for n, by in per.items()}
             for label, per in runs.items()},
        )  # fmt: skip
        write_section("embedders", body)
    return runs


def render(runs: dict[str, dict[str, dict[str, RunResult]]]) -> str:
    """R@10 per dataset and split, adds/s and recall latency on the test splits."""
    headers = ["embedder"]
    for name in DATASETS:
        headers += [f"{name} dev R@10", f"{name} test R@10"]
    headers += ["LoCoMo adds/s", "LoCoMo recall p50 ms", "p95", "MADial recall p50 ms", "p95"]
    rows = []
    for label, per in runs.items():
        row: list[Any] = [label]
        for name in DATASETS:
            row += [per[name][s].recall[OVERALL][10] for s in SPLITS]
        locomo, madial = per["locomo-fact"]["test"], per["madial"]["test"]
        row += [
            locomo.adds_per_second, locomo.search_ms["p50"], locomo.search_ms["p95"],
            madial.search_ms["p50"], madial.search_ms["p95"],
        ]  # fmt: skip
        rows.append(row)
    return (
        "## Embedders: default USE and optional multilingual-e5-small\n\n"
        "recallmem's public API, default ranking, only the embedder differs "
        "(`MemoryConfig(embedder='e5')`); adds/s includes embedding, recall "
        "latency includes embedding the query.\n\n"
        + markdown_table(headers, rows)
        + f"\n\n{machine_note()}\n"
    )
