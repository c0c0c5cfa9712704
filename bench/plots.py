"""Figures from the saved results (bench/results/*.json), as PNG under docs/img/.

Each function takes the loaded results and returns a matplotlib Figure, so the
notebook draws the same figures inline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from bench.report import IMAGES_DIR, RESULTS_DIR, load_results


def locomo_categories(results: dict[str, Any]) -> Figure:
    """LoCoMo fact- and turn-level R@10 per category, dev beside test."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, level in zip(axes, ("fact", "turn"), strict=True):
        splits = results[level]
        categories = list(splits["test"]["recall"])
        width = 0.38
        for n, split in enumerate(("dev", "test")):
            values = [splits[split]["recall"][c]["10"] for c in categories]
            xs = [i + (n - 0.5) * width for i in range(len(categories))]
            ax.bar(xs, values, width, label=split)
        ax.set_xticks(range(len(categories)), categories, rotation=20)
        ax.set_title(f"LoCoMo {level} level: R@10 by category")
        ax.set_ylim(0, 100)
    axes[0].set_ylabel("R@10 (%)")
    axes[0].legend()
    fig.tight_layout()
    return fig


def peers_side_by_side(results: dict[str, Any]) -> Figure:
    """R@10 and search p50 of every system, per dataset."""
    fig, axes = plt.subplots(2, len(results), figsize=(5 * len(results), 6.5), squeeze=False)
    for col, (dataset, runs) in enumerate(results.items()):
        names = [r["system"] for r in runs]
        colors = ["tab:red" if n == "recallmem" else "tab:gray" for n in names]
        axes[0][col].barh(names, [r["recall"]["overall"]["10"] for r in runs], color=colors)
        axes[0][col].set_title(f"{dataset}: R@10 (%)")
        axes[1][col].barh(names, [r["search_ms"]["p50"] for r in runs], color=colors)
        axes[1][col].set_title(f"{dataset}: search p50 (ms)")
        for row in (0, 1):
            axes[row][col].invert_yaxis()
    fig.tight_layout()
    return fig


def scale_latency(results: dict[str, Any]) -> Figure:
    """Recall p50/p95 against the number of stored facts (log-log)."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    series = (
        ("spread", "recall_random_user_ms", "spread over users, random user"),
        ("spread", "recall_hot_user_ms", "spread over users, hot user"),
        ("single_user", "recall_hot_user_ms", "one user holds all"),
    )
    for group, key, label in series:
        runs = [r for r in results.get(group, []) if "error" not in r]
        if not runs:
            continue
        sizes = [r["size"] for r in runs]
        line = ax.plot(sizes, [r[key]["p50"] for r in runs], marker="o", label=f"{label} p50")
        ax.plot(
            sizes,
            [r[key]["p95"] for r in runs],
            marker="x",
            linestyle="--",
            color=line[0].get_color(),
            label=f"{label} p95",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("facts stored")
    ax.set_ylabel("recall latency (ms)")
    ax.axhline(20, color="black", linewidth=0.8, linestyle=":", label="20 ms target")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def scale_cold_latency(results: dict[str, Any]) -> Figure:
    """A cold user's first recall (and random users') against the store's size."""
    fig, ax = plt.subplots(figsize=(6.5, 4))
    runs = results["runs"]
    sizes = [r["size"] for r in runs]
    for key, label in (("first_recall_ms", "first recall of a user"),
                       ("random_user_ms", "random user")):  # fmt: skip
        line = ax.plot(sizes, [r[key]["p50"] for r in runs], marker="o", label=f"{label} p50")
        ax.plot(sizes, [r[key]["p95"] for r in runs], marker="x", linestyle="--",
                color=line[0].get_color(), label=f"{label} p95")  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("facts stored (synthetic, 100 per user)")
    ax.set_ylabel("recall latency (ms)")
    ax.set_ylim(bottom=0)
    ax.axhline(30, color="black", linewidth=0.8, linestyle=":", label="30 ms target")
    ax.set_title("A collection per user: recall of a cold user against store size")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def ablation_bars(results: dict[str, Any]) -> Figure:
    """R@10 on the held-out split after each technique is added, per benchmark."""
    steps = results["steps"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, dataset in zip(axes, ("locomo-fact", "madial"), strict=True):
        labels = [s["label"] for s in steps]
        values = [s["runs"][dataset]["test"]["recall"]["overall"]["10"] for s in steps]
        ax.barh(labels, values, color="tab:blue")
        ax.set_title(f"{dataset}: held-out R@10 (%)")
        ax.invert_yaxis()
        low = min(values)
        ax.set_xlim(max(0, low - 10), min(100, max(values) + 5))
    fig.tight_layout()
    return fig


def bilingual_floor(results: dict[str, Any]) -> Figure:
    """The no-answer trade-off: no-answer questions given nothing against gold lost."""
    floor = results["floor"]
    series = [(f"{system}, pooled", curves) for system, curves in floor["curves"].items()]
    series += [(f"default, {name} only", c) for name, c in floor.get("by_source", {}).items()]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for label, curves in series:
        for split, marker in (("dev", "o"), ("test", "x")):
            rows = [r for r in curves[split]["rows"] if r["gold_lost"] is not None]
            ax.plot(
                [r["gold_lost"] for r in rows],
                [r["noanswer_empty"] or 0.0 for r in rows],
                linestyle="-" if split == "dev" else ":",
                marker=marker,
                markersize=3,
                label=f"{label}, {split}",
            )
    ax.axvline(2.0, color="black", linewidth=0.8, linestyle="--", label="2 % of gold lost")
    ax.set_xlabel("answerable gold lost below the floor (%)")
    ax.set_ylabel("no-answer questions given nothing (%)")
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    ax.set_title(f"Floor on the top score, 0 to 1 (dev choice {results['floor']['chosen_dev']})")
    ax.legend(fontsize=6)
    fig.tight_layout()
    return fig


FIGURES = {
    "locomo": ("bench_locomo_categories.png", locomo_categories),
    "peers": ("bench_peers.png", peers_side_by_side),
    "scale": ("bench_scale.png", scale_latency),
    "scale_cold": ("scale_cold.png", scale_cold_latency),
    "ablation": ("bench_ablation.png", ablation_bars),
    "bilingual": ("bench_bilingual_floor.png", bilingual_floor),
}


def save_scale_cold_plot(results: dict[str, Any], images_dir: Path = IMAGES_DIR) -> Path:
    """Draw the scale-cold figure from fresh results."""
    images_dir.mkdir(parents=True, exist_ok=True)
    fig = scale_cold_latency(results)
    path = images_dir / FIGURES["scale_cold"][0]
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_all(results_dir: Path = RESULTS_DIR, images_dir: Path = IMAGES_DIR) -> list[Path]:
    """Draw every figure whose results exist; returns the files written."""
    images_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (filename, draw) in FIGURES.items():
        if not (results_dir / f"{name}.json").exists():
            continue
        fig = draw(load_results(name, results_dir))
        path = images_dir / filename
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    for path in written:
        print(f"wrote {path}")
    return written
