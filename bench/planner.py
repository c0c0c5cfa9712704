"""What the recall tool's instruction is worth: ``python -m bench planner``.

The planner, not the user, writes the query the ``recall`` tool receives. For every
answerable dev question of the blind bilingual sets, a helper who had seen neither the
code nor the facts wrote the query a planner would send under two instructions
(``bench/data/planner_queries.json``): *mono*, "a short description, in the user's
language", and *bilingual*, "… and add the key words in the other language when the
memories may be kept in it" (what ``prompts/tools.yaml`` now asks). Each variant is
asked through the public ``Memory`` API with the default configuration, beside plain
cosine over the same vectors, and compared with the user's own words (*as asked*).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.bilingual import DEFAULT_CACHE, cosine_rank, score_set
from bench.bilingual_cache import RunEncoder
from bench.bilingual_data import EvalSet, load_blind_sets
from bench.bilingual_metrics import breakdown
from bench.bilingual_public import run_default
from bench.data import REPO_ROOT
from bench.report import machine_note, markdown_table, save_results, write_section

QUERIES = REPO_ROOT / "bench" / "data" / "planner_queries.json"
VARIANTS = ("as asked", "mono", "bilingual")


def _variant(eval_set: EvalSet, written: dict[str, dict[str, str]], variant: str) -> EvalSet:
    """The set with only its written-for questions, their text replaced by the variant."""
    users = []
    for user in eval_set.users:
        questions = tuple(
            q if variant == "as asked" else replace(q, text=written[q.id][variant])
            for q in user.questions
            if q.id in written
        )
        users.append(replace(user, questions=questions))
    return replace(eval_set, users=tuple(users))


def measure(queries: Path = QUERIES) -> dict[str, Any]:
    """variant -> system -> breakdown, over the dev questions that have planner queries."""
    written = {row["id"]: row for row in json.loads(queries.read_text(encoding="utf-8"))}
    encoder = RunEncoder(DEFAULT_CACHE)
    result: dict[str, Any] = {}
    for variant in VARIANTS:
        outcomes = []
        for eval_set in load_blind_sets():
            asked = _variant(eval_set, written, variant)
            given = {"default": run_default(asked, encoder).answers}
            outcomes += score_set(asked, encoder, {"cosine": cosine_rank}, given)
        result[variant] = {
            system: breakdown([o for o in outcomes if o.system == system])
            for system in ("default", "cosine")
        }
    encoder.save()
    return result


def render(payload: dict[str, Any]) -> str:
    """One row per query variant: top-1 overall and per kind, default beside cosine."""
    kinds = sorted(payload["as asked"]["default"]["kind"])
    rows = []
    for variant in VARIANTS:
        for system in ("default", "cosine"):
            table = payload[variant][system]
            rows.append([variant, system, table["overall"]["n"], table["overall"]["top1"]]
                        + [table["kind"][k]["top1"] for k in kinds])  # fmt: skip
    return (
        "## Planner queries: what the recall tool's instruction is worth\n\n"
        "`python -m bench planner`. The dev questions of the blind bilingual sets, asked as "
        "the user wrote them and as a planner would write the `recall` query under a "
        "one-language and a bilingual instruction (queries written blind, "
        "`bench/data/planner_queries.json`); top-1 in percent, default ranking beside plain "
        "cosine. `prompts/tools.yaml` asks for the bilingual form.\n\n"
        + markdown_table(["query", "ranking", "questions", "top-1", *kinds], rows)
        + f"\n\n{machine_note()}\n"
    )


def planner(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run, print and (optionally) write the section and results."""
    payload = measure()
    body = render(payload)
    print(body)
    if write:
        save_results("planner", payload)
        write_section("planner", body)
    return payload
