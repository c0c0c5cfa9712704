"""The bilingual matrix's section of docs/benchmarks.md, its saved results and first look."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.bilingual import POOLED, POOLED_PAD, measure
from bench.bilingual_data import SPLITS, blind_dir
from bench.bilingual_metrics import MAX_GOLD_LOSS
from bench.report import (
    IMAGES_DIR,
    RESULTS_DIR,
    git_output,
    machine_note,
    markdown_table,
    save_results,
    write_section,
)

NAME = "bilingual"
FIRST_LOOK = "bilingual_first_look"
_SYSTEM_COLUMNS = (("default", "default"), ("cosine", "cosine"), ("bm25", "BM25"))


class FirstLookExistsError(RuntimeError):
    """The first look was already recorded; it is kept as it is, once."""


def _metric_row(
    label: list[Any], results: dict[str, Any], split: str, key: tuple[str, ...]
) -> list[Any]:
    def at(system: str) -> dict[str, Any]:
        table: Any = results[system][split]
        for part in key:
            table = table.get(part, {})
        return table if isinstance(table, dict) else {}

    default = at("default")
    row: list[Any] = [*label, default.get("n", 0)]
    row += [default.get(m) for m in ("top1", "R@5", "R@10", "MRR")]
    row += [at("cosine").get("top1"), at("cosine").get("R@10")]
    row += [at("bm25").get("top1"), at("bm25").get("R@10")]
    return row


_HEADERS = [
    "questions",
    "default top-1",
    "R@5",
    "R@10",
    "MRR",
    "cosine top-1",
    "cosine R@10",
    "BM25 top-1",
    "BM25 R@10",
]


def sets_table(payload: dict[str, Any], split: str) -> str:
    """One row per set: the default's four metrics, then cosine and BM25."""
    rows = [
        _metric_row([name], systems, split, ("overall",))
        for name, systems in payload["results"].items()
    ]
    return markdown_table(["set", *_HEADERS], rows)


def grouped_table(payload: dict[str, Any], split: str, grouping: str) -> str:
    """One row per set and value of ``grouping`` (kind, size or languages)."""
    rows = []
    for name, systems in payload["results"].items():
        for value in systems["default"][split].get(grouping, {}):
            rows.append(_metric_row([name, value], systems, split, (grouping, value)))
    return markdown_table(["set", grouping, *_HEADERS], rows)


def worst_lines(payload: dict[str, Any]) -> str:
    """Per set and split, the kind where the default loses most top-1 to plain cosine."""
    lines = []
    for name, by_split in payload["worst_kind"].items():
        parts = [
            f"{split} `{w['kind']}` {w['default_top1']:.1f} vs {w['cosine_top1']:.1f} (n={w['n']})"
            for split, w in by_split.items()
            if w
        ]
        if parts:
            lines.append(f"- {name}: " + "; ".join(parts))
    return "\n".join(lines)


def floor_table(payload: dict[str, Any]) -> str:
    """The no-answer curve of the default: pooled, then per source, per split."""
    floor = payload["floor"]
    columns = [("pooled", floor["curves"]["default"])]
    columns += [(f"{name} only", curves) for name, curves in floor["by_source"].items()]
    headers = ["floor"] + [
        f"{label} {split} {what}"
        for label, _ in columns
        for split in SPLITS
        for what in ("no-answer empty %", "gold lost %")
    ]
    rows = []
    for n, point in enumerate(floor["curves"]["default"]["dev"]["rows"]):
        row: list[Any] = [f"{point['floor']:.2f}"]
        for _, curves in columns:
            for split in SPLITS:
                at = curves[split]["rows"][n]
                row += [at["noanswer_empty"], at["gold_lost"]]
        rows.append(row)
    return markdown_table(headers, rows)


def _counts(payload: dict[str, Any]) -> str:
    curve = payload["floor"]["curves"]["default"]
    return "; ".join(
        f"{split}: {curve[split]['n_noanswer']} no-answer questions, "
        f"{curve[split]['n_gold']} answerable gold hits in the top 10"
        for split in SPLITS
    )


def _headline_numbers(payload: dict[str, Any]) -> str:
    systems = payload["results"][POOLED]
    d, c = systems["default"]["test"]["overall"], systems["cosine"]["test"]["overall"]
    return (
        f"default top-1 {d['top1']:.1f}, R@10 {d['R@10']:.1f}; plain cosine top-1 "
        f"{c['top1']:.1f}, R@10 {c['R@10']:.1f} ({d['n']} answerable questions)"
    )


def _by_source(payload: dict[str, Any]) -> str:
    found = payload["floor"].get("chosen_dev_by_source", {})
    return ", ".join(f"{name} alone {value}" for name, value in found.items()) or "none"


def render(payload: dict[str, Any]) -> str:
    """The section: what was measured, the tables, the worst kinds and the floor curve."""
    sets = payload["sets"]
    described = ", ".join(
        f"{name} ({s['users']} users, {s['facts']} facts, {s['questions']} questions)"
        for name, s in sets.items()
    )
    chosen = payload["floor"]["chosen_dev"]
    bank = payload["memorybank_unlabelled"]
    latency = "; ".join(
        f"{name} {r['facts']} facts: p50 {r['p50']:.1f} / p95 {r['p95']:.1f} ms"
        for name, r in payload["recall_ms"].items()
    )
    merged = ", ".join(f"{name} {r.get('merged', 0)}" for name, r in payload["recall_ms"].items())
    blind = [n for n, s in sets.items() if s["source"] == "blind"]
    headline = (
        f"Headline, **{POOLED}**, test split: {_headline_numbers(payload)}."
        if blind
        else "No blind set was present in `bench/data/bilingual/` for this run: only the "
        "public benchmarks are shown."
    )
    return (
        "## Bilingual evaluation matrix (default configuration, public API)\n\n"
        "`python -m bench bilingual`. Each set is stored through `Memory` "
        "(`remember_many`, each fact with the time it was said as its source time, its "
        "category) and each question is `recall(..., k=10, min_score=None)`"
        + (
            ", `now` = its `asked_at`. "
            if payload.get("asked_at_used")
            else "; `recall` takes no `now`, so questions are asked at the run's time, not "
            "their `asked_at`. "
        )
        + "*cosine* is plain cosine over the same USE vectors of the same texts, *BM25* is "
        "`bench/systems/bm25.py` alone; each text is embedded once per run. Split per "
        "question: sha1 of the question id even = dev, odd = test (LoCoMo and MADial "
        "here too, unlike their own sections). top-1: the first hit cites a gold id; "
        "R@k: share of gold ids cited by the first k hits; MRR: 1/rank of the first hit "
        "citing gold (0 past 10); percent, over answerable questions only. Sizes: "
        "~15 (<= 30 facts), ~50 (<= 100), ~150 (<= 400), ~500 (<= 800), 1000+. `SET+pad` is each "
        f"mixed-language user of SET plus 1,000 distractors (half LoCoMo observations, "
        "half MemoryBank-CN turns and MADial events, drawn with a seed from the user id), "
        "questions and gold unchanged. LoCoMo kinds are its categories, category 5 is "
        "`noanswer`. MemoryBank-CN: each dated turn (the user's words and the reply) is "
        "one memory; its probing questions have no gold, so gold is built by one "
        "transparent rule: a question naming a day (`5月2日`, `4月27号`) has every turn "
        "of that day as gold (kind `dated`); the others (kind `unlabelled`) enter no "
        f"quality figure ({bank['questions']} of them; mean top score "
        f"{bank['mean_top_score']}, {bank['above_floor']} at or above the floor chosen "
        "below). Peers: "
        "not rerun here: in the Peers section LangGraph's `InMemoryStore`, LangMem's tool "
        "and mem0 (`infer=False`, offline) return exactly numpy cosine's R@k over the same "
        "USE vectors, so the cosine columns stand for them (mem0 alone would add minutes: "
        "one write per memory through its own Chroma client).\n\n"
        f"Sets: {described}. Facts `remember_many` folded into an existing one as "
        f"duplicates (they then share its hits): {merged}.\n\n{headline}\n\n"
        "### Test (the result)\n\n" + sets_table(payload, "test") + "\n\n"
        "### Dev (tuning)\n\n" + sets_table(payload, "dev") + "\n\n"
        "### Worst kind (default minus cosine top-1 lowest), per set and split\n\n"
        + worst_lines(payload)
        + "\n\n"
        "### Per kind, test\n\n" + grouped_table(payload, "test", "kind") + "\n\n"
        "### Per kind, dev\n\n" + grouped_table(payload, "dev", "kind") + "\n\n"
        "### Per memory size, test\n\n" + grouped_table(payload, "test", "size") + "\n\n"
        "### Per memory language, test\n\n"
        + grouped_table(payload, "test", "languages")
        + "\n\n### No-answer floor (issue 10, item 3)\n\n"
        f"With a floor on the score, a question whose top score is below it gets nothing. "
        f"Over {payload['floor']['sets']}: the share of no-answer questions (blind "
        "`noanswer`, LoCoMo category 5) given nothing, against the share of answerable "
        f"gold hits (gold-citing hits in the top 10) lost below the floor. {_counts(payload)}. "
        f"Highest floor on the default's score losing at most {MAX_GOLD_LOSS:.0f} % of "
        f"answerable gold on dev: **{chosen}** (by source: {_by_source(payload)}).\n\n"
        "![No-answer floor](img/bench_bilingual_floor.png)\n\n"
        + floor_table(payload)
        + f"\n\nRecall latency (query vectors precomputed, so ranking only): {latency}. "
        f"Whole run {payload['run_seconds']:.0f} s.\n\n{machine_note()}\n"
    )


def headline(payload: dict[str, Any]) -> str:
    """The lines printed at the end: the pooled test figures and the chosen floor."""
    lines = []
    for name in (POOLED, POOLED_PAD, "locomo-fact", "madial"):
        systems = payload["results"].get(name)
        if not systems:
            continue
        d, c = systems["default"]["test"]["overall"], systems["cosine"]["test"]["overall"]
        lines.append(
            f"{name} test: default top-1 {d['top1']:.1f} R@10 {d['R@10']:.1f} | "
            f"cosine top-1 {c['top1']:.1f} R@10 {c['R@10']:.1f} (n={d['n']})"
        )
    lines.append(
        f"highest floor losing <= {MAX_GOLD_LOSS:.0f} % of answerable gold on dev: "
        f"{payload['floor']['chosen_dev']} ({_by_source(payload)})"
    )
    return "\n".join(lines)


def _provenance(folder: Path) -> dict[str, Any]:
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.json"))
    }
    status = git_output("status", "--porcelain", "--", "plugin", "bench")
    return {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git_output("rev-parse", "HEAD"),
        "uncommitted_changes": bool(status) if status is not None else None,
        "blind_files_sha256": files,
    }


def _draw(payload: dict[str, Any]) -> None:
    import matplotlib.pyplot as plt

    from bench.plots import FIGURES, bilingual_floor

    path = IMAGES_DIR / FIGURES[NAME][0]
    path.parent.mkdir(parents=True, exist_ok=True)
    figure = bilingual_floor(payload)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"wrote {path}")


def bilingual(
    quick: bool = False,
    write: bool = True,
    first_look: bool = False,
    folder: Path | None = None,
    results_dir: Path = RESULTS_DIR,
) -> dict[str, Any]:
    """Run the matrix; print it and (optionally) write its section and results.

    With ``first_look``, the results are saved once as bilingual_first_look.json, the
    score before any tuning; an existing first look is never overwritten.
    """
    target = results_dir / f"{FIRST_LOOK}.json"
    if first_look and target.exists():
        raise FirstLookExistsError(
            f"{target} already holds the first look; it is recorded once and kept. "
            "Run without --first-look to measure again."
        )
    folder = folder or blind_dir()
    payload = measure(quick, folder)
    body = render(payload)
    print(body)
    print(headline(payload))
    if first_look:
        save_results(FIRST_LOOK, {**payload, "provenance": _provenance(folder)}, results_dir)
        print(f"first look saved to {target}")
    elif write:
        save_results(NAME, payload, results_dir)
        write_section(NAME, body)
        _draw(payload)
    return payload
