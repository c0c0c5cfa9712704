"""The tables of ``python -m bench real_model`` (``bench.real_model`` measures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.report import machine_note, markdown_table

EXTRACTION_COLUMNS = ("conversations", "expected", "stored", "recall", "recall judged", "precision",
                      "precision judged", "supersede", "supersede judged", "old retired",
                      "correction", "correction judged", "due dates", "final status", "keywords cross", "secrets")  # fmt: skip


def _injection_rows(rows: dict[str, dict[str, Any]]) -> list[list[Any]]:
    out = []
    for language in ("all", "en", "zh", "mixed"):
        chosen = [r for r in rows.values() if language in ("all", r["language"])]
        if not chosen:
            continue
        judged = [r for r in chosen if r["obeyed"] is not None]
        out.append([language, len(chosen), sum(r["shown"] for r in chosen), len(judged),
                    sum(r["obeyed"] for r in judged),
                    sum(r["obeyed"] for r in judged if r["shown"])])  # fmt: skip
    return out


def _table(headers: Sequence[str], rows: list[list[Any]]) -> str:
    return markdown_table(headers, rows) if rows else "(nothing replayed yet)"


def numbers(payload: dict[str, Any]) -> dict[str, Any]:
    """What is saved: the tables and counts, never a text of the blind sets or a reply."""
    extraction = payload["extraction"]
    return {
        "requests": payload["requests"], "models": payload["models"], "waiting": payload["waiting"],
        "extraction": {k: extraction[k] for k in ("table", "complete", "conversations", "waiting", "unsaid")}
        | {"errors": len(extraction["errors"])},
        "heldout": {name: {k: held[k] for k in ("table", "complete", "conversations", "waiting")}
                    for name, held in payload.get("heldout", {}).items()},
        "planner": payload["planner"]["modes"],
        "planner_by_model": payload["planner"].get("by_model", {}),
        "injection": {mode: {"turns": len(rows), "shown": sum(r["shown"] for r in rows.values()),
                             "obeyed": sum(bool(r["obeyed"]) for r in rows.values())}
                      for mode, rows in payload["injection"]["modes"].items()},
    }  # fmt: skip


def render(payload: dict[str, Any]) -> str:
    ext = payload["extraction"]
    parts = [
        "`python -m bench real_model` (shares in percent): the blind sets replayed through the product with the "
        "recorded replies of real models (`tests/data/recorded`, made as its README says). "
        f"Recorded requests used: {payload['requests']}; answered by: "
        + (", ".join(f"{m} ({n})" for m, n in payload["models"].items()) or "none yet")
        + f". No recordings yet for {payload['waiting']} requests (and what follows them).",
        f"\n**Extraction** ({ext['complete']} of {ext['conversations']} conversations replayed):\n",
    ]
    table = ext["table"]
    parts.append(extraction_rows(table))
    for name, held in payload.get("heldout", {}).items():
        parts.append(f"\n**Extraction, held-out set `{name}`** (`bench/data/{name}`, written after "
                     f"the change it measures and scored once; {held['complete']} of "
                     f"{held['conversations']} conversations replayed):\n")  # fmt: skip
        parts.append(extraction_rows(held["table"]))
        if "all" in held["table"]:
            parts.append(f"\nTraps broken, held-out set `{name}`:\n\n" + trap_rows(held["table"]))
    if "all" in table:
        kinds = table["all"]["by_kind"]
        parts.append(
            "\nRecall per kind of fact:\n\n"
            + markdown_table(
                ("kind", "n", "recall"), [[k, v["n"], v["recall"]] for k, v in kinds.items()]
            )
        )
        parts.append("\nTraps (must not be stored) broken:\n\n" + trap_rows(table))
        unsaid = payload["extraction"]["unsaid"]
        parts.append(
            f"\nThe specifics rule (a fact's numbers, addresses and names must be in what the "
            f"user said) refused {unsaid['refused']} proposed fact(s); {unsaid['true']} of them "
            "said an expected fact (a true fact refused)."
        )
    for mode, rows in payload["planner"]["modes"].items():
        parts.append(f"\n**Planner**, mode `{mode}` (shares of the turns replayed):\n")
        cols = (
            "turns",
            "replayed",
            "recall called",
            "cue fetch",
            "forced recall",
            "memory reached",
            "needed shown",
            "judged",
            "uses the fact",
        )
        parts.append(
            markdown_table(
                ("kind / language", *cols), [[k, *(v[c] for c in cols)] for k, v in rows.items()]
            )
        )
    for mode, rows in payload["planner"].get("by_model", {}).items():
        parts.append(f"\n**Planner per answering model**, mode `{mode}` (the model that "
                     "answered a turn's first request, as it named itself):\n")  # fmt: skip
        cols = ("replayed", "recall called", "memory reached", "needed shown", "uses the fact")
        parts.append(markdown_table(("kind / model", *cols),
                                    [[k, *(v[c] for c in cols)] for k, v in rows.items()
                                     if not k.endswith(" / all")]))  # fmt: skip
    for mode, rows in payload["injection"]["modes"].items():
        parts.append(f"\n**Instructions planted in memory**, mode `{mode}`:\n")
        parts.append(_table(("language", "turns replayed", "fact shown", "judged", "obeyed",
                                     "obeyed when shown"), _injection_rows(rows)))  # fmt: skip
    return "\n".join(parts) + f"\n\n{machine_note()}\n"


def extraction_rows(table: dict[str, Any]) -> str:
    """The extraction table, overall and per language."""
    rows = [[k, *(v[c] for c in EXTRACTION_COLUMNS)] for k, v in sorted(table.items())]
    return _table(("set", *EXTRACTION_COLUMNS), rows)


def trap_rows(table: dict[str, Any]) -> str:
    """Traps (what must not be stored) broken, per kind, over all conversations."""
    traps = table["all"]["traps"]
    return markdown_table(("kind", "n", "broken"),
                          [[k, v["n"], v["broken"]] for k, v in traps.items()])  # fmt: skip
