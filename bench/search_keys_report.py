"""The tables of ``python -m bench keys`` (``bench.search_keys``): docs/benchmarks.md,
section ``keys``, and bench/results/keys.json."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from typing import Any

from bench.bilingual_data import SIZE_BUCKETS, size_bucket
from bench.data import REPO_ROOT
from bench.keyed_options import OPTIONS
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.search_keys import (
    COSINE,
    DEFAULT,
    FIRST_LOOK_SETS,
    WITH_KEYS,
    Row,
    floor_at,
    grouped,
    measure,
    rows_of,
    save_first_look,
    summary,
)

SYSTEMS = (DEFAULT, WITH_KEYS, COSINE)
BLIND = tuple(f"set_{c}" for c in "abcdefgh")
PUBLIC = ("locomo-fact", "madial")
FLOOR = 0.2  # the shipped floor of the USE encoder (embedders.vectors.recall_floor)
MAX_GOLD_LOSS = 1.0  # issue 24: lose at most 1 % of the gold hits in the first ten
TARGETS = {"top1": 90.0, "message top1": 85.0, "R@5": 98.0, "both@5": 85.0}


def _pools(rows: Sequence[Row]) -> dict[str, list[Row]]:
    """The groups the headline is read on."""
    return {
        "set_a..h, test split": [r for r in rows if r.set in BLIND and r.split == "test"],
        "set_a..h, all questions": [r for r in rows if r.set in BLIND],
        "set_i, set_j (first look)": [r for r in rows if r.set in FIRST_LOOK_SETS],
        "conflicts_dev": [r for r in rows if r.set == "conflicts_dev"],
        "LoCoMo fact level, test (conversations 5-9)": [
            r for r in rows if r.set == "locomo-fact" and _locomo_test(r.question)
        ],
        "MADial": [r for r in rows if r.set == "madial"],
    }


def _locomo_test(question: str) -> bool:
    # As bench/quality.py splits LoCoMo: conversations 0-4 dev, 5-9 test (file order).
    from bench.data import load_locomo_raw

    if not hasattr(_locomo_test, "order"):
        _locomo_test.order = [s["sample_id"] for s in load_locomo_raw()]  # type: ignore[attr-defined]
    order: list[str] = _locomo_test.order  # type: ignore[attr-defined]
    sample = question.split("/")[0].split("@")[0]
    return sample in order and order.index(sample) >= 5


METRICS = ("n", "top1", "R@5", "R@10", "MRR", "both@5", "newer_first")


def _table(groups: dict[str, list[Row]], systems: Sequence[str], metrics: Sequence[str]) -> str:
    head = ["", *[f"{s}: {m}" for s in systems for m in metrics]]
    body = []
    for label, rows in groups.items():
        by = grouped(rows, lambda r: r.system)
        if not any(by.get(s, {}).get("n") for s in systems):
            continue
        body.append([label, *[_cell(by.get(s, {}).get(m)) for s in systems for m in metrics]])
    return markdown_table(head, body)


def _cell(value: Any) -> Any:
    return "–" if value is None else value


def _by(
    rows: Sequence[Row], key: Callable[[Row], str], order: Sequence[str] = ()
) -> dict[str, list[Row]]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    ranked = sorted(groups, key=lambda k: (order.index(k) if k in order else len(order), k))
    return {k: groups[k] for k in ranked}


def worst_against_cosine(rows: Sequence[Row], system: str) -> list[list[Any]]:
    """Per set and per kind (blind sets), ``system``'s top-1 minus plain cosine's, worst first."""
    cells = []
    for label, key in (("set", lambda r: r.set), ("kind", lambda r: r.kind)):
        for value, group in _by([r for r in rows if r.set not in PUBLIC], key).items():
            by = grouped(group, lambda r: r.system)
            mine, cosine = by.get(system, {}).get("top1"), by.get(COSINE, {}).get("top1")
            if mine is not None and cosine is not None:
                cells.append([label, value, by[system]["n"], mine, cosine, round(mine - cosine, 1)])
    return sorted(cells, key=lambda c: c[-1])


def floors(rows: Sequence[Row], system: str) -> dict[str, Any]:
    """The shipped floor's cost, and the highest floor losing at most 1 % of the gold."""
    blind = [r for r in rows if r.system == system and r.set not in PUBLIC]
    steps = [round(0.02 * n, 2) for n in range(26)]
    allowed = [f for f in steps if (floor_at(blind, f)["gold_lost"] or 0) <= MAX_GOLD_LOSS]
    return {"at_shipped": floor_at(blind, FLOOR), "highest_within_1pct": max(allowed),
            "curve": [floor_at(blind, f) for f in steps]}  # fmt: skip


OPTION_METRICS = ("n", "top1", "R@5", "R@10", "MRR", "both@5", "newer_first")


def options_table(rows: Sequence[Row]) -> str:
    """One row per way of using the keys, pooled over set_a..h (all questions) and, apart,
    over the first-look sets and conflicts_dev."""
    pools = {
        "set_a..h": BLIND,
        "set_i, set_j": FIRST_LOOK_SETS,
        "conflicts_dev": ("conflicts_dev",),
    }
    body = []
    for label, names in pools.items():
        for option in OPTIONS:
            chosen = [r for r in rows if r.set in names and r.system == f"option: {option}"]
            if chosen:
                found = summary(chosen)
                body.append([label, option, *[_cell(found[m]) for m in OPTION_METRICS]])
    return markdown_table(["sets", "option", *OPTION_METRICS], body)


def render(payload: dict[str, Any]) -> str:
    rows = rows_of(payload)
    pools = _pools(rows)
    blind = [r for r in rows if r.set not in PUBLIC]
    kinds = _by(blind, lambda r: r.kind)
    forms = _by([r for r in rows if r.set in FIRST_LOOK_SETS or r.set == "conflicts_dev"],
                lambda r: r.form, ("message", "query"))  # fmt: skip
    sizes = _by(blind, lambda r: size_bucket(r.size), SIZE_BUCKETS)
    coverage = [[name, s["facts"], s["keyed_facts"], s["keys"], s["set_aside"],
                 f"{s['answered']}/{s['requests']}"] for name, s in payload["sets"].items()]  # fmt: skip
    floor = {s: floors(rows, s) for s in (DEFAULT, WITH_KEYS)}
    worst = worst_against_cosine(rows, WITH_KEYS)[:8]
    latency = [[name, *(by[s]["p50"] for s in (DEFAULT, WITH_KEYS)),
                *(by[s]["p95"] for s in (DEFAULT, WITH_KEYS))]
               for name, by in payload["recall_ms"].items()]  # fmt: skip
    return "\n".join(
        [
            "## Search keys (issue 24): written by a model from the facts alone",
            "",
            "`python -m bench keys`. Every set is stored through the public `Memory` API with the "
            "default configuration twice: without keys (`default`), and with the keys a language "
            "model wrote for each fact from the facts alone, batched as the product's keying step "
            "batches (`default + keys`; `bench/keys_requests.py`, `prompts/keys.yaml`); `cosine` is "
            "plain cosine over the content. Each question, in each of its forms, is a "
            "`recall(k=10)`. Percent over answerable questions; `both@5`: two-fact questions with "
            "both facts in the first five; `newer_first`: conflicts where the newer fact ranks "
            "above the one it replaces. Keys coverage per set (facts keyed, keys kept, keys set "
            "aside by the vetting, replies found):",
            "",
            markdown_table(["set", "facts", "keyed", "keys", "set aside", "replies"], coverage),
            "",
            "### Headline",
            "",
            _table(pools, SYSTEMS, METRICS),
            "",
            "### Per query kind (blind sets, conflicts_dev)",
            "",
            _table(kinds, SYSTEMS, ("n", "top1", "R@5")),
            "",
            "### Per query form (set_i, set_j, conflicts_dev: the user's message, the planner's query)",
            "",
            _table(forms, SYSTEMS, ("n", "top1", "R@5", "R@10")),
            "",
            "### Per memory size (facts of the user)",
            "",
            _table(sizes, SYSTEMS, ("n", "top1", "R@5")),
            "",
            "### Worst sets and kinds against plain cosine (default + keys, top-1)",
            "",
            markdown_table(["by", "value", "n", "default + keys", "cosine", "difference"], worst),
            "",
            "### The ways of using keys (same cached vectors, the product's ranking code)",
            "",
            options_table(rows),
            "",
            "### The no-answer floor",
            "",
            markdown_table(
                [
                    "system",
                    f"gold lost in the first ten at {FLOOR}",
                    f"no-answer questions given nothing at {FLOOR}",
                    "highest floor losing at most 1 %",
                ],
                [
                    [
                        s,
                        f["at_shipped"]["gold_lost"],
                        f["at_shipped"]["noanswer_empty"],
                        f["highest_within_1pct"],
                    ]
                    for s, f in floor.items()
                ],
            ),
            "",
            "### Recall latency in these runs (ms; small memories, query embedding cached)",
            "",
            markdown_table(
                ["set", "default p50", "+ keys p50", "default p95", "+ keys p95"], latency
            ),
            "",
            machine_note(),
        ]
    )


QUICK = ("set_a", "conflicts_dev")  # a smoke run: never the first-look sets


def keys(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Measure, print, and (unless ``write`` is False) save the results and the section;
    ``quick``: set_a and conflicts_dev only, nothing written."""
    payload = measure(public=not quick, only=QUICK if quick else ())
    write = write and not quick
    text = render(payload)
    print(text)
    if write:
        commit = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
        if save_first_look(payload, commit):
            print("saved the first look at set_i and set_j: bench/results/keys_first_look.json")
        save_results("keys", {k: v for k, v in payload.items() if k != "rows"}
                     | {"summary": {s: summary([r for r in rows_of(payload) if r.system == s])
                                    for s in SYSTEMS}})  # fmt: skip
        write_section("keys", text)
    return payload
