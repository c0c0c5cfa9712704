"""A real model in the loop, measured from its recorded replies: ``python -m bench real_model``.

The blind sets (``bench.record_sets``) are replayed through the product with
:class:`~recallmem.testing.ReplayChatModel` answering from ``tests/data/recorded``
(recordings made as ``tests/data/recorded/README.md`` says) and scored against their
labels (``bench.real_model_score``):

- **extraction**: recall of the expected facts, precision, supersedes and corrections,
  todo due dates, final statuses, keywords in the other language, traps broken (per
  kind), secrets stored; overall and per language; and precision as judged, by the
  verdict of a second session that sees only the conversation and each stored fact
  that matches no label (:func:`judged_extras`), and supersedes and corrections as
  judged: every one the labels count as missed is shown, with the conversation and the
  memory as it ends, to a judge (:func:`judged_supersedes`);
- **planner**: per turn kind and language, how often the model called ``recall``, how
  often the middleware fetched on a cue or forced a recall after a hedge ("memory
  reached": any of those), and how often every fact the turn needs was in what the model
  saw by any way in, the block included ("needed shown"), per mode;
- **injection**: whether the planted fact reached the model, and whether the reply
  obeyed it, by the verdict of a second session that sees only the fact and the reply
  (judge requests, of both kinds, are written under ``RECALLMEM_JUDGE``; their
  ``<id>.verdict.json`` are read).

Each held-out extraction set (``bench.record_sets.HELDOUT_SETS``, written after the
change it measures was tuned on the blind sets) is replayed and scored the same way, in
tables of its own; its first complete run is kept as
``bench/results/real_model_<name>_first_look.json``.

Scenarios whose requests are not all recorded are left out and counted ("no
recordings yet for N requests"). Tables go to docs/benchmarks.md (``real_model``); the
first run with every request answered is also kept as ``bench/results/real_model_first_look.json``
(with its commit), never overwritten: the figures before any change they prompt.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.real_model_judge import (
    JUDGE_QUESTION,
    USES_QUESTION,
    judged_extras,
    judged_missed,
    judged_supersedes,
    verdict_for,
)
from bench.real_model_report import numbers, render
from bench.real_model_score import extraction_table, found_by, planner_table, score_conversation
from bench.record_extraction import RECORDED
from bench.record_sets import HELDOUT_SETS, blind_dir, load_conversations
from bench.report import RESULTS_DIR, git_output, save_results, write_section

# The first run with every request answered is kept, never overwritten: the "before" of every fix.
FIRST_LOOK = "real_model_first_look"


def _answered_by(keys: Sequence[str], store: Any) -> str:
    found = store.find(keys[0]) if keys else None
    return "no recording" if found is None else str(found.model)


def _recordings_used(keys: set[str], recorded: Path) -> Counter[str]:
    from recallmem.replay.recordings import Recordings

    store = Recordings(recorded)
    return Counter(r.model for k in keys if (r := store.find(k)) is not None)


def measure_extraction(
    embeddings: Any,
    recorded: Path,
    quick: bool = False,
    judge: Path | None = None,
    conversations: Sequence[Any] | None = None,
) -> dict[str, Any]:
    from bench.record_extraction import replay_conversation

    conversations = (conversations or load_conversations())[: 3 if quick else None]
    scores, waiting, keys, errors = {}, 0, set(), []
    unsaid = {"refused": 0, "true": 0}  # the specifics rule's refusals; "true": an expected fact
    for conversation in conversations:
        run = replay_conversation(conversation, embeddings=embeddings, recordings=recorded)
        keys |= {k for day in run.keys for k in day}
        waiting += len(run.waiting)
        errors += [f"{run.id} {e}" for e in run.errors]
        if run.complete:
            scores[run.id] = score_conversation(conversation, run.facts)
            if judge is not None:
                extra = set(scores[run.id]["extra"])
                verdicts = judged_extras(
                    conversation, [f for f in run.facts if f.content in extra], judge
                )
                scores[run.id]["extra_right"] = sum(v is True for v in verdicts)
                scores[run.id]["extra_unjudged"] = sum(v is None for v in verdicts)
                replaced = judged_supersedes(
                    conversation, scores[run.id]["supersede_missed"], run.facts, judge
                )
                scores[run.id]["supersede_unjudged"] = sum(v is None for _, v in replaced)
                held = judged_missed(conversation, scores[run.id]["missed"], run.facts, judge)
                scores[run.id]["missed_held"] = sum(v is True for v in held)
                scores[run.id]["missed_unjudged"] = sum(v is None for v in held)
                scores[run.id]["supersede_judged"] = {
                    kind: {"right": sum(v is True for k, v in replaced if k == kind)}
                    for kind in ("change", "correction")
                }
            expected = [e.model_dump() for e in conversation.expected.facts]
            unsaid["refused"] += len(run.unsaid)
            unsaid["true"] += sum(any(found_by(e, c) for e in expected) for c in run.unsaid)
    languages = {c.id: c.language for c in conversations}
    return {"table": extraction_table(scores, languages), "complete": len(scores), "unsaid": unsaid,
            "conversations": len(conversations), "waiting": waiting, "errors": errors,
            "keys": sorted(keys), "per_conversation": scores}  # fmt: skip


def _reply_text(run: Any) -> str:
    calls = "\n".join(f"- calls `{c['name']}` with {json.dumps(c['args'], ensure_ascii=False)}"
                      for c in run.tool_calls)  # fmt: skip
    return (run.reply or "(no text)") + (f"\n\nTool calls:\n{calls}" if calls else "")


def measure_turns(kind: str, embeddings: Any, recorded: Path, judge: Path, modes: list[str],
                  quick: bool = False) -> dict[str, Any]:  # fmt: skip
    from recallmem.replay.recordings import Recordings
    from recallmem.text.quoting import quote_text

    from bench.record import injection_turns, planner_turns, variants
    from bench.record_agent import run_turn
    from bench.record_sets import load_injections, load_planner

    turns = (planner_turns() if kind == "planner" else injection_turns())[: 6 if quick else None]
    planted = {i.id: i for i in load_injections().items} if kind == "injection" else {}
    users = load_planner().users if kind == "planner" else ()
    facts = {f.id: f.content for u in users for f in u.facts}
    items = {i.id: i for u in users for i in u.items}
    result: dict[str, Any] = {"modes": {}, "keys": set(), "waiting": 0}
    store = Recordings(recorded)  # one listing of the folder, for every turn's model
    for mode, actual, settings in variants(kind, modes):
        runs = [run_turn(t, s, embeddings=embeddings, kind=kind, mode=actual,
                         recordings=recorded, settings=settings) for t, s in turns]  # fmt: skip
        result["keys"] |= {k for r in runs for k in r.keys}
        result["waiting"] += sum(len(r.waiting) for r in runs)
        if kind == "planner":
            for run in (r for r in runs if r.complete and items[r.turn.id].needs):
                item = items[run.turn.id]
                # By any way in: the block's core or relevant facts, a turn's note, a cue's
                # or a hedge's recall, a recall tool answer.
                run.needed_shown = all(quote_text(facts[n]) in run.memory_shown
                                       for n in item.needs if n in facts)  # fmt: skip
                notes = "\n".join(f"- {facts[n]}" for n in item.needs if n in facts)
                verdict = verdict_for(judge / "planner" / mode, item.id, USES_QUESTION.format(
                    facts=notes, uses=item.good_answer_uses or "(not said)", turn=item.turn,
                    reply=_reply_text(run), id=item.id))  # fmt: skip
                run.uses = None if verdict is None else bool(verdict.get("uses"))
            result["modes"][mode] = planner_table(runs)
            # The model that answered the turn's first request, as it named itself.
            result.setdefault("by_model", {})[mode] = planner_table(
                runs, lambda run: _answered_by(run.keys, store)
            )
            continue
        rows = {}
        for run in (r for r in runs if r.complete):
            item = planted[run.turn.id]
            shown = quote_text(item.fact) in run.memory_shown
            verdict = verdict_for(judge / "injection" / mode, item.id, JUDGE_QUESTION.format(
                fact=item.fact, obeyed_if=item.obeyed_if, reply=_reply_text(run), id=item.id))  # fmt: skip
            rows[item.id] = {"language": item.language, "shown": shown,
                             "obeyed": None if verdict is None else bool(verdict.get("obeyed"))}  # fmt: skip
        result["modes"][mode] = rows
    return result


def real_model(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Replay, score, print and (optionally) write the section and results."""
    import logging

    from recallmem import MemoryConfig
    from recallmem.embedders import default_embeddings

    logging.getLogger("recallmem").setLevel(logging.ERROR)
    recorded = Path(os.environ.get("RECALLMEM_RECORDED", RECORDED))
    judge = Path(os.environ.get("RECALLMEM_JUDGE", blind_dir() / "judge"))
    modes = ["hybrid"] if quick else ["hybrid", "auto"]  # auto: the facts, without the hint
    try:
        load_conversations()
    except (FileNotFoundError, ValueError) as exc:
        print(f"real_model: {exc}")
        return {}
    embeddings = default_embeddings(MemoryConfig(embedder="use"))
    payload: dict[str, Any] = {"extraction": measure_extraction(embeddings, recorded, quick, judge)}
    payload["planner"] = measure_turns("planner", embeddings, recorded, judge, modes, quick)
    payload["injection"] = measure_turns("injection", embeddings, recorded, judge, modes[:1], quick)
    payload["heldout"] = {
        name: measure_extraction(embeddings, recorded, quick, folder / "judge", load_conversations(path))
        for name, folder in HELDOUT_SETS.items()
        if (path := folder / "extract" / "conversations.json").exists()
    }  # fmt: skip
    extractions = [payload["extraction"], *payload["heldout"].values()]
    keys = {k for e in extractions for k in e["keys"]}
    keys |= payload["planner"]["keys"] | payload["injection"]["keys"]
    payload["models"] = dict(_recordings_used(keys, recorded))
    payload["requests"] = sum(payload["models"].values())
    payload["waiting"] = (sum(e["waiting"] for e in extractions) + payload["planner"]["waiting"]
                          + payload["injection"]["waiting"])  # fmt: skip
    for part in ("planner", "injection"):
        payload[part]["keys"] = sorted(payload[part]["keys"])
    body = render(payload)
    print(body)
    if payload["waiting"]:
        print(f"no recordings yet for {payload['waiting']} requests: "
              "python -m bench.record render all --out DIR (tests/data/recorded/README.md)")  # fmt: skip
    if write:
        save_results("real_model", numbers(payload))
        write_section("real_model", body)
        # The figures before any fix, once every request of the sets is answered.
        _keep_first_look(FIRST_LOOK, numbers(payload),
                         bool(payload["requests"]) and not payload["waiting"])  # fmt: skip
        for name, held in payload["heldout"].items():
            _keep_first_look(f"real_model_{name}_first_look", {"table": held["table"]},
                             bool(held["complete"]) and not held["waiting"])  # fmt: skip
    return payload


def _keep_first_look(name: str, figures: dict[str, Any], complete: bool) -> None:
    """Saves ``figures`` (with the commit) as ``name`` once complete, never overwriting."""
    if complete and not (RESULTS_DIR / f"{name}.json").exists():
        save_results(name, {**figures, "commit": git_output("rev-parse", "HEAD")})
