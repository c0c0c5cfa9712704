"""recallmem's retrieval quality: LoCoMo (fact and turn level) and MADial-Bench.

Both splits are reported: ``dev`` (LoCoMo conversations 0-4, MADial dialogues with an
even id) is what ranking was tuned on; ``test`` (the rest) is the result.
"""

from __future__ import annotations

from typing import Any

from langchain_core.embeddings import Embeddings

from bench.data import Dataset, load_dataset
from bench.metrics import OVERALL
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.runner import RunResult, run
from bench.systems import BatchCachedEncoder, make_system

SPLITS = ("dev", "test")


def run_recallmem(dataset: Dataset, embeddings: Embeddings, **options: Any) -> RunResult:
    """recallmem over one dataset, in this process, in a fresh temporary home."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="recallmem-bench-") as workdir:
        system = make_system("recallmem", embeddings, Path(workdir), **options)
        try:
            return run(system, dataset, options=options)
        finally:
            system.close()


def quality_rows(results: dict[str, RunResult]) -> tuple[list[str], list[list[Any]]]:
    """One row per split and category: recall at each k, then search latency."""
    first = next(iter(results.values()))
    ks = sorted(int(k) for k in first.recall[OVERALL])
    headers = ["split", "category", "queries", *[f"R@{k}" for k in ks]]
    rows: list[list[Any]] = []
    for split, result in results.items():
        for category, row in result.recall.items():
            count = result.n_queries if category == OVERALL else result.query_counts[category]
            rows.append([split, category, count, *[row[k] for k in ks]])
    return headers, rows


def evaluate(
    name: str, quick: bool = False, embeddings: Embeddings | None = None, **options: Any
) -> dict[str, RunResult]:
    """recallmem on both splits of dataset ``name`` (default embedder: USE)."""
    embeddings = embeddings or BatchCachedEncoder()
    results = {}
    for split in SPLITS:
        dataset = load_dataset(name, split)
        if quick:
            dataset = dataset.subset(1, 25)
        results[split] = run_recallmem(dataset, embeddings, **options)
    return results


def render(title: str, results: dict[str, RunResult]) -> str:
    """A markdown block: the recall table, then the latency line."""
    headers, rows = quality_rows(results)
    latency = "; ".join(
        f"{split}: {r.n_docs} memories, recall p50 {r.search_ms['p50']:.1f} ms / "
        f"p95 {r.search_ms['p95']:.1f} ms"
        for split, r in results.items()
    )
    return f"### {title}\n\n{markdown_table(headers, rows)}\n\n{latency}.\n"


def locomo(quick: bool = False, write: bool = True) -> dict[str, dict[str, RunResult]]:
    """LoCoMo at fact and turn level; prints and (optionally) writes its section."""
    levels = {"fact": evaluate("locomo-fact", quick), "turn": evaluate("locomo-turn", quick)}
    body = (
        "## LoCoMo (recallmem, default configuration)\n\n"
        "Per conversation, every `observation` fact (fact level) or every dialog turn "
        "(turn level) is stored with `remember_many` (user = the conversation); each "
        "question of categories 1-4 is a `recall`; R@k is the share of the question's "
        "gold evidence dialog ids cited by the top-k memories, in percent. "
        "dev = conversations 0-4 (tuning), test = 5-9 (the result).\n\n"
        + render("Fact level", levels["fact"])
        + "\n"
        + render("Turn level", levels["turn"])
        + f"\n{machine_note()}\n"
    )
    _publish("locomo", body, levels, write)
    return levels


def madial(quick: bool = False, write: bool = True) -> dict[str, RunResult]:
    """MADial-Bench (Chinese); prints and (optionally) writes its section."""
    results = evaluate("madial", quick)
    body = (
        "## MADial-Bench, Chinese (recallmem, default configuration)\n\n"
        "Per user, every memory's `event` text is stored; the query is the dialogue "
        "before the first test turn (utterances without speaker tags); R@k is the share "
        "of `relevant-id` memories in the top k. dev = dialogues with an even id, "
        "test = odd ids.\n\n" + render("Recall", results) + f"\n{machine_note()}\n"
    )
    _publish("madial", body, {"all": results}, write)
    return results


def _publish(name: str, body: str, groups: dict[str, dict[str, RunResult]], write: bool) -> None:
    print(body)
    if write:
        payload = {
            group: {split: r.to_json() for split, r in results.items()}
            for group, results in groups.items()
        }
        save_results(name, payload)
        write_section(name, body)
