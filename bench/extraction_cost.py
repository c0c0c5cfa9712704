"""What extraction costs: model calls and prompt tokens, with a counting fake model.

Two measurements, side by side in one run:

1. **Per 100 turns.** A user chats in sessions of 10 turns (a turn every 8-40 s,
   sessions 5-60 min apart); after every turn the whole thread is observed, as the
   middleware does. Extracting after every turn (what a per-turn ``add`` does) is
   compared with the debounced queue (30 s idle, 120 s max wait, 20 messages). Time is
   simulated, the queue, hygiene and Chroma are real; the model is ``FakeChatModel``,
   which counts calls and prompt tokens (``recallmem.text.tokens``, o200k).
2. **Prompt tokens against memory size.** The same windows are extracted for a user
   with 100 stored facts and one with 10,000; beside them, what the prompt would cost
   if it carried the whole memory, as some memory layers do.

``python -m bench.extraction_cost [--quick] [--no-write]`` prints the tables and writes
its section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.report import machine_note, markdown_table, save_results, write_section

TURNS = 100
SESSION_TURNS = 10
TOPICS = ("ESP32 watering", "quarterly report", "TypeScript build", "long reads", "Kubernetes",
          "product roadmap", "polars pipeline", "travel to Lisbon", "piano practice", "hiring")  # fmt: skip


def _reply(messages: list[Any]) -> str:
    # One fact per window, quoted from the last user line: the memory grows as it would.
    conversation = messages[-1].text.split("<conversation>")[-1]
    lines = [line for line in conversation.splitlines() if "] user: " in line]
    said = lines[-1].split("] user: ", 1)[1] if lines else ""
    fact = {"content": said.rstrip(".") or "nothing", "category": "context", "confidence": 0.9,
            "evidence": said}  # fmt: skip
    return json.dumps({"facts": [fact] if said else []})


def _turn(rng: random.Random, n: int) -> tuple[str, str]:
    topic = rng.choice(TOPICS)
    return (f"About the {topic}: detail number {n} is that step {rng.randint(1, 99)} matters.",
            f"Understood, for the {topic} I'll keep step {n} in mind.")  # fmt: skip


def _simulate(debounced: bool, home: Path, seed: int = 7) -> dict[str, float]:
    from langchain_core.messages import AIMessage, HumanMessage
    from recallmem.config import MemoryConfig
    from recallmem.extraction.pipeline import ExtractionPipeline
    from recallmem.memory import Memory
    from recallmem.testing import FakeChatModel, HashingEmbeddings

    rng, now = random.Random(seed), [1_750_000_000.0]
    timing = {} if debounced else {"debounce_seconds": 0.0, "max_wait_seconds": 0.0}
    config = MemoryConfig(home=home, **timing)
    model = FakeChatModel(responses=[_reply], cycle=True)
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        pipeline = ExtractionPipeline(
            memory.repository, model, config, clock=lambda: now[0], background=False
        )

        def advance(seconds: float) -> None:
            # The worker's view: run whatever falls due while time passes.
            end = now[0] + seconds
            while (due := pipeline.backlog.seconds_until_due()) is not None and now[0] + due <= end:
                now[0] += due
                pipeline.run_due()
            now[0] = end

        history: list[Any] = []
        for n in range(TURNS):
            if n % SESSION_TURNS == 0:
                history = []
                advance(rng.uniform(300, 3600))
            said, answered = _turn(rng, n)
            history += [HumanMessage(said, id=f"u{n}"), AIMessage(answered, id=f"a{n}")]
            pipeline.observe(history, user_id="bench", thread_id=f"session-{n // SESSION_TURNS}")
            advance(rng.uniform(8, 40))
        advance(3600)
        usage = pipeline.backlog.usage()
        pipeline.close(timeout=5)
    return {"calls": usage["calls"], "windows": usage["windows"], "prompt_tokens": usage["input_tokens"],
            "messages_per_call": 2 * TURNS / max(usage["calls"], 1)}  # fmt: skip


def _seed(memory: Any, user: str, count: int, rng: random.Random) -> None:
    from recallmem.types import Fact

    facts = [
        Fact(content=f"Mentioned the {rng.choice(TOPICS)}: note {n} about step {rng.randint(1, 999)}",
             category=rng.choice(["context", "preference", "knowledge", "goal"]), user_id=user)
        for n in range(count)
    ]  # fmt: skip
    for start in range(0, count, 2000):
        memory.put(facts[start : start + 2000])


def _whole_memory_tokens(memory: Any, user: str) -> int:
    from recallmem.text.tokens import count_tokens

    facts = memory.list(user_id=user, limit=1000)
    offset, text = len(facts), [f.content for f in facts]
    while page := memory.list(user_id=user, limit=1000, offset=offset):
        text += [f.content for f in page]
        offset += len(page)
    return count_tokens("\n".join(f"[F{n}] (context, 0.90) {t}" for n, t in enumerate(text, 1)))


def _by_memory_size(sizes: tuple[int, ...], windows: int, home: Path) -> list[dict[str, float]]:
    from langchain_core.messages import HumanMessage
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.testing import FakeChatModel, HashingEmbeddings

    rng = random.Random(11)
    conversations = [_turn(rng, n)[0] for n in range(windows)]
    rows = []
    model = FakeChatModel(responses=['{"facts": []}'], cycle=True)
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model) as memory:
        for size in sizes:
            user = f"user-{size}"
            _seed(memory, user, size, rng)
            tokens = []
            for n, said in enumerate(conversations):
                report = memory.extract([HumanMessage(said)], user_id=user, thread_id=f"w{n}")
                tokens.append(report.usage.input_tokens)
            shown = len(re.findall(r"^\[F\d+\]", model.requests[-1][-1].text, re.MULTILINE))
            rows.append({"facts": size, "median_prompt_tokens": statistics.median(tokens),
                         "facts_shown": shown,
                         "whole_memory_tokens": _whole_memory_tokens(memory, user)})  # fmt: skip
    return rows


def extraction_cost(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run both measurements, print them and (unless ``write`` is False) record them."""
    sizes = (100, 1_000) if quick else (100, 10_000)
    with tempfile.TemporaryDirectory() as tmp:
        per_turn = _simulate(False, Path(tmp) / "per-turn")
        debounced = _simulate(True, Path(tmp) / "debounced")
        by_size = _by_memory_size(sizes, 5 if quick else 20, Path(tmp) / "sizes")
    first = markdown_table(
        ["strategy", "windows flushed", "model calls", "prompt tokens", "messages per call"],
        [[name, r["windows"], r["calls"], r["prompt_tokens"], r["messages_per_call"]]
         for name, r in (("extract after every turn", per_turn), ("debounced queue (defaults)", debounced))],
    )  # fmt: skip
    second = markdown_table(
        ["stored facts", "median prompt tokens / window", "facts shown", "whole memory in the prompt"],
        [[r["facts"], r["median_prompt_tokens"], r["facts_shown"], r["whole_memory_tokens"]] for r in by_size],
    )  # fmt: skip
    small, large = by_size[0]["median_prompt_tokens"], by_size[-1]["median_prompt_tokens"]
    ratio_calls = per_turn["calls"] / max(debounced["calls"], 1)
    print(first, second, sep="\n\n")
    payload = {"per_turn": per_turn, "debounced": debounced, "by_size": by_size,
               "calls_ratio": ratio_calls, "tokens_ratio_large_vs_small": large / small}  # fmt: skip
    if write:
        save_results("extraction_cost", payload)
        write_section(
            "extraction_cost",
            "## Extraction cost (counting fake model, `python -m bench.extraction_cost`)\n\n"
            f"{machine_note()} Simulated time; real queue, hygiene and Chroma; "
            "tokens counted with o200k.\n\n"
            f"**Per 100 turns** (10 sessions of 10 turns; the whole thread observed after "
            f"every turn):\n\n{first}\n\nDebouncing makes {ratio_calls:.1f}x fewer calls. A window "
            "closes after 30 s of quiet (a third of the simulated gaps between turns are longer), "
            "120 s of steady traffic or 20 messages; each costs exactly one call, and no "
            "message is sent twice although the whole history is observed after every turn.\n\n"
            f"**Prompt tokens against memory size** (median of the same windows):\n\n{second}\n\n"
            f"{by_size[-1]['facts']:,} stored facts cost {large / small:.2f}x the prompt tokens "
            f"of {by_size[0]['facts']:,}: the model sees at most 20 related facts, never the "
            "whole memory.\n",
        )
    return payload


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.extraction_cost", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 instead of 10,000 facts")
    parser.add_argument("--no-write", action="store_true")
    arguments = parser.parse_args()
    extraction_cost(quick=arguments.quick, write=not arguments.no_write)
