"""``python -m bench agent-loop``: did the model see, at each turn, the facts it needed?

Scenario sets written blind (``bench/agent_loop_data.py``), run through ``create_agent``
+ ``MemoryMiddleware`` with a scripted model that never calls tools
(``bench/agent_loop_run.py``), so the figures measure what the middleware alone puts in
front of the model. Per scenario and pooled:

- **needed visible**: the share of (turn, needed fact) pairs whose fact was in the model's
  request at that turn (a fact the user said earlier in the same thread counts as
  visible: the thread shows it);
- **irrelevant turns**: the share of turns at which a fact that is neither needed nor
  relevant there was newly shown (a superseded fact always counts);
- **tokens per turn**: memory text added to the thread at a turn (median, p95);
- **latency**: the middleware's turn start (median, p95), embedding included; the
  ``padded`` run gives each user 1,000 facts.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from typing import Any

from recallmem import Fact, Memory

from bench.agent_loop_data import Scenario, load_scenarios
from bench.agent_loop_run import TurnRow, Variant, run_scenario
from bench.data import REPO_ROOT
from bench.report import machine_note, markdown_table, save_results, write_section

PAD_TO = 1000  # facts per user in the latency run (issue 22: p95 at 1,000 facts)

FIRST_LOOK = REPO_ROOT / "bench" / "results" / "agent_loop_first_look.json"
VARIANTS = {
    # Facts learned in an agent's run kept in that agent's scope, as before the extractor
    # labelled scopes. (The loop as it was, with no core, no turn notes and no fresh
    # threads, cannot be run any more: its first look is FIRST_LOOK, shown beside.)
    "agent-scoped learning": Variant(
        "agent-scoped learning", agent_scoped_learning=True, scope_labels=False
    ),
    "default": Variant("default"),
    # A new thread carries the waiting words instead of extracting them first.
    "carry": Variant("carry", middleware={"fresh_threads": "carry"}),
    # No turn notes: what the block alone does.
    "no turn notes": Variant("no turn notes", middleware={"turn_k": 0}),
}


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def measure(rows: Sequence[TurnRow], scenarios: Sequence[Scenario]) -> dict[str, Any]:
    """The figures of one run: needed visible, irrelevant turns, tokens, latency."""
    superseded = {f.id for s in scenarios for f in s.facts if f.superseded_by}
    needed = seen = 0
    later_needed = later_seen = 0
    irrelevant = 0
    for row in rows:
        ok = row.visible | row.stated_here
        needed += len(row.needs)
        seen += sum(1 for n in row.needs if n in ok)
        if row.position > 1:
            later_needed += len(row.needs)
            later_seen += sum(1 for n in row.needs if n in ok)
        extra = row.new - set(row.needs) - set(row.relevant) - row.stated_here
        irrelevant += bool(extra) or bool(row.new & superseded)
    tokens = [float(r.tokens) for r in rows]
    millis = [r.millis for r in rows]
    opening = [r.millis for r in rows if r.position == 1]
    return {
        "turns": len(rows),
        "needed": needed,
        "needed_visible": seen / needed if needed else 1.0,
        "later_turns_needed_visible": later_seen / later_needed if later_needed else 1.0,
        "irrelevant_turns": irrelevant / len(rows) if rows else 0.0,
        "tokens_median": statistics.median(tokens) if tokens else 0.0,
        "tokens_p95": _pct(tokens, 0.95),
        "millis_median": statistics.median(millis) if millis else 0.0,
        "millis_p95": _pct(millis, 0.95),
        "first_turn_millis_median": statistics.median(opening) if opening else 0.0,
        "first_turn_millis_p95": _pct(opening, 0.95),
    }


def _padding(scenarios: Sequence[Scenario]) -> Any:
    """Fill a user up to ``PAD_TO`` facts with the other scenarios' facts (other people's
    lives: distractors that read like memory, in both languages)."""
    pool = [(s.id, f) for s in scenarios for f in s.facts]

    def pad(memory: Memory, scenario: Scenario) -> None:
        others = [f for sid, f in pool if sid != scenario.id]
        room = PAD_TO - len(scenario.facts)
        filler = [
            Fact(content=f.content, category=f.category, user_id=scenario.user_id, confidence=0.95)
            for f in (others * (room // max(1, len(others)) + 1))[:room]
        ]
        memory.put(filler)

    return pad


def run(variants: Sequence[str], *, quick: bool = False, padded: bool = False) -> dict[str, Any]:
    """Figures per variant: pooled, per scenario, and the rows' raw counts."""
    scenarios = load_scenarios()
    if quick:
        scenarios = scenarios[:2]
    pad = _padding(scenarios) if padded else None
    results: dict[str, Any] = {}
    for name in variants:
        per: dict[str, Any] = {}
        rows: list[TurnRow] = []
        for scenario in scenarios:
            got = run_scenario(scenario, VARIANTS[name], pad=pad)
            per[scenario.id] = measure(got, [scenario])
            rows += got
        results[name] = {"pooled": measure(rows, scenarios), "scenarios": per}
    return results


def _table(results: dict[str, Any], pooled_only: bool = False) -> str:
    headers = ["variant", "scenario", "turns", "needed visible", "later turns",
               "irrelevant turns", "tokens median / p95", "ms median / p95",
               "first turn ms median / p95"]  # fmt: skip
    rows = []
    for name, result in results.items():
        per = [] if pooled_only else list(result["scenarios"].items())
        for scenario, m in [*per, ("pooled", result["pooled"])]:
            rows.append([
                name, scenario, m["turns"], f"{m['needed_visible']:.3f}",
                f"{m['later_turns_needed_visible']:.3f}", f"{m['irrelevant_turns']:.3f}",
                f"{m['tokens_median']:.0f} / {m['tokens_p95']:.0f}",
                f"{m['millis_median']:.1f} / {m['millis_p95']:.1f}",
                (f"{m['first_turn_millis_median']:.1f} / {m['first_turn_millis_p95']:.1f}"
                 if "first_turn_millis_median" in m else "–"),  # not in the first look
            ])  # fmt: skip
    return markdown_table(headers, rows)


def agent_loop(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run every variant on the scenarios as written, then the default at 1,000 facts."""
    written = run(tuple(VARIANTS), quick=quick)
    padded = run(("default",), quick=quick, padded=True)
    first = json.loads(FIRST_LOOK.read_text("utf-8"))
    body = "\n\n".join([
        "First look, before the loop changed (the block built once for a thread's first "
        "message, no core, no turn notes, facts learned in an agent's run kept in its scope; "
        f"`{FIRST_LOOK.relative_to(REPO_ROOT)}`), pooled, as written and padded:",
        _table({"first look": first["written"]["before"],
                "first look, padded": first["padded"]["before"]}, pooled_only=True),
        "Scenarios as written (`bench/data/agent_loop/`, blind), per scenario:",
        _table({"default": written["default"]}),
        "Every variant, pooled:",
        _table(written, pooled_only=True),
        f"Each user padded to {PAD_TO} facts with the other scenarios' facts (other people's "
        "lives: the hardest distractors), pooled; latency includes embedding the turn:",
        _table(padded, pooled_only=True),
        machine_note(),
    ])  # fmt: skip
    print(body)
    payload = {"written": written, "padded": padded}
    if write and not quick:
        write_section("agent-loop", body)
        save_results("agent_loop", payload)
    return payload
