"""What search keywords on facts are worth: ``python -m bench keywords``.

An UPPER BOUND. The keywords are hand-written (``bench/data/keywords_set_b.json``), as
the extraction prompt asks a model to write them: a few short words in the other
language, from each fact's text alone, without looking at the questions. A model may
write fewer or worse ones; this measures what well-written keywords can do at most on
one blind set (set_b), not what extraction achieves.

Set_b is stored through the public ``Memory`` API with the default configuration twice,
without and with each fact's keywords (``remember_many(..., keywords=...)``), and every
question is a ``recall(..., k=10, min_score=None)``; plain cosine over the same USE
vectors is beside them (keywords never change a vector). Nothing is tuned on these
questions, so every question (dev and test) counts; the test split is shown too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.bilingual import DEFAULT_CACHE, cosine_rank, score_set
from bench.bilingual_cache import RunEncoder
from bench.bilingual_data import BLIND_KINDS, NOANSWER, EvalSet, Fact, load_blind_sets
from bench.bilingual_metrics import breakdown
from bench.bilingual_public import run_default
from bench.data import REPO_ROOT
from bench.report import machine_note, markdown_table, save_results, write_section

KEYWORDS = REPO_ROOT / "bench" / "data" / "keywords_set_b.json"
SYSTEMS = ("default", "default + keywords", "cosine")
METRICS = ("top1", "R@10", "MRR")


@dataclass(frozen=True)
class TaggedFact(Fact):
    """A blind fact with its search keywords (``bench.bilingual`` stores them)."""

    keywords: tuple[str, ...] = ()


def load_keywords(path: Path = KEYWORDS) -> tuple[str, dict[str, tuple[str, ...]]]:
    """The set the keywords are for, and fact id -> keywords."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return str(data["set"]), {fid: tuple(words) for fid, words in data["keywords"].items()}


def tagged(eval_set: EvalSet, keywords: dict[str, tuple[str, ...]]) -> EvalSet:
    """The set with every fact carrying its keywords (a fact without any: none)."""
    users = []
    for user in eval_set.users:
        facts = tuple(TaggedFact(f.id, f.text, f.cites, f.category, f.said_at,
                                 keywords.get(f.id, ())) for f in user.facts)  # fmt: skip
        users.append(replace(user, facts=facts))
    return replace(eval_set, users=tuple(users))


def measure(path: Path = KEYWORDS) -> dict[str, Any]:
    """split ("all", "test") -> system -> breakdown on the keywords' set."""
    name, keywords = load_keywords(path)
    (eval_set,) = [s for s in load_blind_sets() if s.name == name]
    missing = {f.id for u in eval_set.users for f in u.facts} - set(keywords)
    encoder = RunEncoder(DEFAULT_CACHE)
    given = {
        "default": run_default(eval_set, encoder).answers,
        "default + keywords": run_default(tagged(eval_set, keywords), encoder).answers,
    }
    outcomes = score_set(eval_set, encoder, {"cosine": cosine_rank}, given)
    encoder.save()
    result: dict[str, Any] = {"set": name, "facts_without_keywords": len(missing),
                              "moved": moved(eval_set, given)}  # fmt: skip
    for split in ("all", "test"):
        rows = [o for o in outcomes if split == "all" or o.split == split]
        result[split] = {s: breakdown([o for o in rows if o.system == s]) for s in SYSTEMS}
    return result


def moved(eval_set: EvalSet, given: dict[str, Any]) -> list[list[Any]]:
    """The questions whose first gold hit moved: id, kind, rank without and with keywords
    (None: not in the first ten)."""
    rows = []
    for user in eval_set.users:
        for question in user.questions:
            ranks = [
                next((n + 1 for n, ids in enumerate(answers[user.user_id][question.id].cited)
                      if ids & question.gold), None)
                for answers in (given["default"], given["default + keywords"])
            ]  # fmt: skip
            if ranks[0] != ranks[1]:
                rows.append([question.id, question.kind, *ranks])
    return rows


def _row(label: str, tables: dict[str, Any], pick: Any) -> list[Any]:
    cells: list[Any] = [label, pick(tables["default"])["n"]]
    for system in SYSTEMS:
        cells += [pick(tables[system])[m] for m in METRICS]
    return cells


def render(payload: dict[str, Any]) -> str:
    """Per query kind (all questions), then overall per split: the three systems side by side."""
    every = payload["all"]
    kinds = [k for k in BLIND_KINDS if k != NOANSWER and k in every["default"]["kind"]]
    rows = [_row(k, every, lambda t, k=k: t["kind"][k]) for k in kinds]
    rows += [_row("all questions", every, lambda t: t["overall"]),
             _row("test split", payload["test"], lambda t: t["overall"])]  # fmt: skip
    heads = [f"{s} {m}" for s in SYSTEMS for m in ("top-1", "R@10", "MRR")]
    return (
        "## Search keywords on facts: an UPPER BOUND (hand-written keywords)\n\n"
        "`python -m bench keywords`. **Upper bound, not a measurement of extraction:** the "
        "keywords were written by hand for the facts of one blind set "
        f"({payload['set']}, `bench/data/keywords_set_b.json`), the way "
        "`prompts/extract.yaml` asks the model to write them (a few short words in the "
        "other language, from each fact's text alone, without looking at the questions). "
        "The set is stored through the public `Memory` API with the default configuration, "
        "without and with the keywords, and each question is a `recall(k=10)`; plain "
        "cosine over the same USE vectors is beside them (keywords change no vector). "
        "Nothing is tuned on these questions, so all of them count; the test split is the "
        "last row. Percent, answerable questions. One caveat on blindness: the writer of "
        "the keywords saw the first six questions of user b1 (b1-q01 to b1-q06) in a data "
        "dump before writing them; no other question was looked at.\n\n"
        + markdown_table(["query kind", "questions", *heads], rows)
        + "\n\nQuestions whose first right fact moved with keywords (rank without → with; "
        "– is past the tenth): "
        + ", ".join(f"{q} ({k}) {a or '–'} → {b or '–'}" for q, k, a, b in payload["moved"])
        + (
            ". None of b1's questions moved.\n"
            if not any(row[0].startswith("b1-") for row in payload["moved"])
            else ".\n"
        )
        + f"\n{machine_note()}\n"
    )


def keywords(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run the comparison; write the table into docs/benchmarks.md unless ``write`` is off."""
    payload = measure()
    text = render(payload)
    print(text)
    if write:
        save_results("keywords", payload)
        write_section("keywords", text)
    return payload
