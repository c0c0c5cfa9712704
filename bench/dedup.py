"""Choosing the near-duplicate rule: cosine alone versus cosine plus word containment.

Pairs in tests/data/dedup_pairs.jsonl, labelled duplicate or not (20 each, Chinese and
English; the "not" half are the dangerous ones: one value swapped, a negation added).
For each cosine threshold: how many true duplicates merge, and how many different
facts would be merged by mistake. A false merge loses a fact; a missed merge leaves a
duplicate that extraction can still confirm by id. So the rule must make no false merge
first, and merge as much as it can second.

``python -m bench.dedup`` prints the table and writes its section.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.report import markdown_table, save_results, write_section

PAIRS = Path(__file__).resolve().parents[1] / "tests" / "data" / "dedup_pairs.jsonl"
THRESHOLDS = (0.6, 0.7, 0.75, 0.8, 0.85, 0.9)


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    """The labelled pairs."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def dedup(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Merge counts per threshold, for the default encoder."""
    from recallmem.embedders import UniversalSentenceEncoder, embed_matrix
    from recallmem.facts.near_duplicates import classify

    pairs = load_pairs()
    encoder = UniversalSentenceEncoder()
    new = embed_matrix(encoder, [p["new"] for p in pairs])
    old = embed_matrix(encoder, [p["old"] for p in pairs])
    cosines = (new * old).sum(axis=1)
    dups = sum(p["duplicate"] for p in pairs)
    rows = []
    for threshold in THRESHOLDS:
        alone = [bool(c >= threshold) for c in cosines]
        rule = [classify(p["new"], p["old"], cosine=float(c), threshold=threshold) is not None
                for p, c in zip(pairs, cosines, strict=True)]  # fmt: skip
        rows.append({
            "threshold": threshold,
            "cosine_merged_dups": sum(a and p["duplicate"] for a, p in zip(alone, pairs, strict=True)),
            "cosine_false_merges": sum(a and not p["duplicate"] for a, p in zip(alone, pairs, strict=True)),
            "rule_merged_dups": sum(r and p["duplicate"] for r, p in zip(rule, pairs, strict=True)),
            "rule_false_merges": sum(r and not p["duplicate"] for r, p in zip(rule, pairs, strict=True)),
        })  # fmt: skip
    table = markdown_table(
        ["cosine ≥", "cosine alone: dups merged", "false merges",
         "cosine + containment: dups merged", "false merges"],
        [[f"{r['threshold']:.2f}", f"{r['cosine_merged_dups']}/{dups}",
          f"{r['cosine_false_merges']}/{len(pairs) - dups}",
          f"{r['rule_merged_dups']}/{dups}", f"{r['rule_false_merges']}/{len(pairs) - dups}"]
         for r in rows],
    )  # fmt: skip
    print(table)
    payload = {"pairs": len(pairs), "rows": rows}
    if write:
        save_results("dedup", payload)
        write_section(
            "dedup",
            "## Near-duplicate rule (USE encoder, tests/data/dedup_pairs.jsonl)\n\n"
            f"{table}\n\nDefault: containment with cosine ≥ 0.70 (`dedup_similarity`): no "
            "false merge at any threshold, and as many merges as 0.60 while a cosine still "
            "has to agree. Cosine alone cannot be used: every threshold that merges "
            'paraphrases also merges swapped values ("Chinese" vs "English" reports).\n',
        )
    return payload


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.dedup", description=__doc__)
    parser.add_argument("--no-write", action="store_true")
    dedup(write=not parser.parse_args().no_write)
