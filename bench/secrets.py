"""The secret detector on labelled chat text: recall on secrets, precision on look-alikes.

``tests/data/secrets/secrets*.yaml`` hold messages with a secret (the exact substring to
find, and its kind); ``tests/data/secrets/benign*.yaml`` messages without one that look
as if they might (order, phone, tracking and card-tail numbers, versions, hashes in code,
dates, amounts, ISBNs, UUIDs, talk about passwords and keys). A secret counts as found
when redaction removes the whole substring; a benign message with any finding is a false
positive. Precision is over messages: found secrets / (found secrets + false positives).
Two sets: ``dev`` (the rules were tuned on it) and ``heldout`` (written afterwards, never
tuned on).

``python -m bench secrets`` prints the tables and writes its section.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from bench.report import markdown_table, save_results, write_section

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "secrets"
SETS = {"dev": "", "heldout": "_heldout"}  # file name suffixes


def load_cases(name: str, data: Path = DATA) -> list[dict[str, Any]]:
    """One labelled file, ``secrets`` or ``benign``."""
    rows: list[dict[str, Any]] = yaml.safe_load((data / f"{name}.yaml").read_text("utf-8"))
    return rows


def score(split: str = "dev", data: Path = DATA) -> dict[str, Any]:
    """Recall, precision and the misses of one split, overall and per language."""
    from recallmem.secrets.detector import load_secret_rules, redact

    rules = load_secret_rules()
    suffix = SETS[split]
    secrets, benign = load_cases(f"secrets{suffix}", data), load_cases(f"benign{suffix}", data)
    found = [s for s in secrets if s["secret"] not in redact(s["text"], rules)]
    false = [b for b in benign if rules.scan(b["text"])]
    started = time.perf_counter()
    for case in [*secrets, *benign]:
        rules.scan(case["text"])
    micros = (time.perf_counter() - started) / (len(secrets) + len(benign)) * 1e6
    by_lang = {}
    for lang in sorted({c["lang"] for c in [*secrets, *benign]}):
        total = sum(s["lang"] == lang for s in secrets)
        hits = sum(s["lang"] == lang for s in found)
        fps = sum(b["lang"] == lang for b in false)
        by_lang[lang] = _figures(total, hits, sum(b["lang"] == lang for b in benign), fps)
    return {
        "overall": _figures(len(secrets), len(found), len(benign), len(false)),
        "languages": by_lang,
        "kinds": dict(Counter(s["kind"] for s in secrets)),
        "missed": [s["text"] for s in secrets if s not in found],
        "false_positives": [b["text"] for b in false],
        "micros_per_message": round(micros, 1),
    }


def _figures(secrets: int, found: int, benign: int, false: int) -> dict[str, Any]:
    return {
        "secrets": secrets,
        "found": found,
        "benign": benign,
        "false_positives": false,
        "recall": 100.0 * found / secrets if secrets else 0.0,
        "precision": 100.0 * found / (found + false) if found + false else 100.0,
    }


def secrets(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Score the shipped rules on the labelled sets (``quick`` changes nothing: it is fast)."""
    results = {split: score(split) for split in SETS}
    rows = [
        [split, name, f"{f['found']}/{f['secrets']}", f"{f['recall']:.1f} %",
         f"{f['false_positives']}/{f['benign']}", f"{f['precision']:.1f} %"]
        for split, result in results.items()
        for name, f in [("all", result["overall"]), *result["languages"].items()]
    ]  # fmt: skip
    table = markdown_table(
        ["set", "messages", "secrets found", "recall", "benign flagged", "precision"], rows
    )
    print(table)
    for split, outcome in results.items():
        for text in outcome["missed"]:
            print(f"{split} missed:", text)
        for text in outcome["false_positives"]:
            print(f"{split} false positive:", text)
    if write:
        save_results("secrets", results)
        write_section("secrets", _section(results, table))
    return results


def _section(results: dict[str, Any], table: str) -> str:
    dev, heldout = results["dev"], results["heldout"]
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(dev["kinds"].items()))
    missed = "; ".join(f"`{t}`" for t in heldout["missed"]) or "nothing"
    flagged = "; ".join(f"`{t}`" for t in heldout["false_positives"]) or "nothing"
    return (
        "## Secrets (`recallmem.secrets.detector`, tests/data/secrets/)\n\n"
        "One detector (rules in `prompts/secrets.yaml`, checksums for cards, 身份证 and US "
        "social security numbers) guards every write path. Labelled chat messages in English "
        f"and Chinese; the dev set has {dev['overall']['secrets']} holding a secret ({kinds}) "
        f"and {dev['overall']['benign']} that only look as if they might (order, tracking, "
        "phone and card-tail numbers, versions, git hashes and digests in code, dates, "
        "amounts, ISBNs, UUIDs, talk about passwords, keys and PINs). A secret is found when "
        "redaction removes all of it; a benign message with any finding is a false positive."
        f"\n\n{table}\n\n"
        f"About {dev['micros_per_message']:.0f} µs per message. The dev set was written "
        "together with the rules: on its first run, before any rule was tuned on it, 3 of 70 "
        'secrets were missed (a password after "for the staging server:", "password\'s", '
        "a `mysql -p` flag; three more failed only because the set's own card and 身份证 "
        "numbers had wrong check digits) and 1 of 85 benign messages was flagged "
        "(`SECRET_KEY = os.environ[...]`). The held-out set "
        f"({heldout['overall']['secrets']} secrets, {heldout['overall']['benign']} benign) "
        f"was written afterwards and never tuned on; it misses {missed} and flags {flagged} "
        "(a well-known test card number, which the detector cannot tell from a real one). "
        "`tests/unit/test_secrets.py` keeps recall and precision at 95 % or better on "
        "each set.\n"
    )


if __name__ == "__main__":
    secrets()
