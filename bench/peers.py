"""recallmem side by side with mem0, LangGraph's store, LangMem, BM25 and plain dense search.

Every system gets the same embedder (USE multilingual, computed afresh: adds and
queries pay for their embeddings) and runs in its own process, so the peak memory of
each is its own. Quality is on the held-out (test) splits.
"""

from __future__ import annotations

from typing import Any

from bench.isolate import Job, run_isolated
from bench.metrics import OVERALL, ratio
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.runner import RunResult
from bench.systems import SYSTEM_NAMES

DATASETS = ("locomo-fact", "madial")


def compare(
    dataset: str, systems: tuple[str, ...] = SYSTEM_NAMES, quick: bool = False
) -> list[RunResult]:
    """Each system on the test split of ``dataset``, each in its own process."""
    return [
        run_isolated(Job(name, dataset, "test", max_corpora=1 if quick else None))
        for name in systems
    ]


def peer_rows(results: list[RunResult]) -> tuple[list[str], list[list[Any]]]:
    """Recall, speed and memory per system, with ratios against recallmem's."""
    base = next((r for r in results if r.system == "recallmem"), results[0])
    ks = sorted(int(k) for k in base.recall[OVERALL])
    k_main = 10 if 10 in ks else ks[-1]
    headers = [
        "system",
        *[f"R@{k}" for k in ks],
        "adds/s",
        "search p50 ms",
        "search p95 ms",
        "peak RSS MB",
        f"R@{k_main} ÷ recallmem",
        "p50 ÷ recallmem",
        "adds/s ÷ recallmem",
    ]
    rows = []
    for r in results:
        rows.append(
            [
                r.system,
                *[r.recall[OVERALL][k] for k in ks],
                r.adds_per_second,
                r.search_ms["p50"],
                r.search_ms["p95"],
                r.peak_rss_mb,
                ratio(r.recall[OVERALL][k_main], base.recall[OVERALL][k_main]),
                ratio(r.search_ms["p50"], base.search_ms["p50"]),
                ratio(r.adds_per_second, base.adds_per_second),
            ]
        )
    return headers, rows


def peers(
    quick: bool = False, write: bool = True, systems: tuple[str, ...] = SYSTEM_NAMES
) -> dict[str, list[RunResult]]:
    """Run the comparison on every dataset; print and (optionally) write its section."""
    results = {name: compare(name, systems, quick) for name in DATASETS}
    blocks = []
    for name, runs in results.items():
        headers, rows = peer_rows(runs)
        first = runs[0]
        blocks.append(
            f"### {name} (test split: {first.n_docs} memories, {first.n_queries} queries)\n\n"
            + markdown_table(headers, rows)
        )
    body = (
        "## Peers, same embeddings, same run\n\n"
        "mem0 2.2.1 (`infer=False`, local Chroma, telemetry off; its BM25 and entity boost "
        "need downloads and are off offline), LangGraph `InMemoryStore` (index on "
        "`content`), LangMem's `search_memory` tool over it, Okapi BM25 (words, CJK "
        "bigrams) and exact numpy cosine; all with recallmem's default USE embedder. "
        "adds/s counts embedding; search latency includes embedding the query; peak RSS "
        "is the whole process (model and data included), one process per system.\n\n"
        + "\n\n".join(blocks)
        + f"\n\n{machine_note()}\n"
    )
    print(body)
    if write:
        save_results("peers", {n: [r.to_json() for r in runs] for n, runs in results.items()})
        write_section("peers", body)
    return results
