"""Extraction commands: the queue (pending, dead letters, retry) and prompt evaluation."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TextIO

from recallmem.cli.common import Subparsers, open_memory, table
from recallmem.errors import ModelNotConfiguredError

_NO_MODEL = (
    "eval-extract needs a chat model: --model NAME with RECALLMEM_OPENAI_API_KEY (and "
    "RECALLMEM_OPENAI_BASE_URL for a compatible endpoint), or --replay to score the "
    "recorded replies offline"
)


def _preview(messages: tuple[object, ...]) -> str:
    text = " / ".join(str(getattr(m, "content", m)) for m in messages)
    return text if len(text) <= 80 else text[:77] + "..."


def _for_user(args: argparse.Namespace) -> str:
    return f" for user {args.user!r}" if args.user else ""


def cmd_pending(args: argparse.Namespace, out: TextIO) -> int:
    entries = open_memory(args).queue.pending(user_id=args.user)
    rows = [
        [e.user_id, e.thread_id, len(e.messages), e.attempts,
         e.due_at.isoformat(timespec="seconds") if e.due_at else "-", _preview(e.messages)]
        for e in entries
    ]  # fmt: skip
    if not rows:
        out.write(f"nothing is waiting for extraction{_for_user(args)}\n")
        return 0
    out.write(table(rows, ["user", "thread", "messages", "attempts", "due", "first words"]))
    return 0


def cmd_dead_letters(args: argparse.Namespace, out: TextIO) -> int:
    letters = open_memory(args).queue.dead_letters(user_id=args.user)
    rows = [[d.id, d.user_id, d.thread_id, d.attempts, d.reason] for d in letters]
    if not rows:
        out.write(f"no dead letters{_for_user(args)}: every window was extracted or is pending\n")
        return 0
    out.write(table(rows, ["id", "user", "thread", "attempts", "reason"]))
    return 0


def cmd_retry(args: argparse.Namespace, out: TextIO) -> int:
    open_memory(args).queue.retry(args.letter_id)
    out.write(f"dead letter {args.letter_id} is queued again\n")
    return 0


def cmd_drop(args: argparse.Namespace, out: TextIO) -> int:
    open_memory(args).queue.drop(args.letter_id)
    out.write(f"dead letter {args.letter_id} is discarded\n")
    return 0


def cmd_eval_extract(args: argparse.Namespace, out: TextIO) -> int:
    """Score a prompt directory against the labelled set, in a scratch memory."""
    from recallmem.extraction.chain import model_from_config
    from recallmem.extraction.evaluate import evaluate, load_cases, replay_model

    cases = load_cases(Path(args.data) if args.data else None)
    with tempfile.TemporaryDirectory(prefix="recallmem-eval-") as scratch:
        settings: dict[str, object] = {"home": Path(scratch), "prompt_dir": args.prompt_dir}
        if args.model:
            settings["llm_model"] = args.model
        args.home = None  # evaluation never touches the real memory
        with open_memory(args, **settings) as memory:
            model = replay_model(cases) if args.replay else model_from_config(memory.config)
            if model is None:
                raise ModelNotConfiguredError(_NO_MODEL)
            report = evaluate(model, memory.repository, memory.config, cases=cases)
    out.write(report.table() + "\n")
    return 0


def register(sub: Subparsers) -> None:
    """Add the queue and evaluation commands."""
    p = sub.add_parser("pending", help="windows waiting for extraction")
    p.add_argument("--user", help="only this user")
    p.set_defaults(handler=cmd_pending)

    p = sub.add_parser("dead-letters", help="windows that failed every retry, with the reason")
    p.add_argument("--user", help="only this user")
    p.set_defaults(handler=cmd_dead_letters)

    p = sub.add_parser("retry", help="queue a dead letter again")
    p.add_argument("letter_id", type=int)
    p.set_defaults(handler=cmd_retry)

    p = sub.add_parser("drop-dead-letter", help="discard a dead letter for good")
    p.add_argument("letter_id", type=int)
    p.set_defaults(handler=cmd_drop)

    p = sub.add_parser("eval-extract", help="score an extraction prompt on the labelled set")
    p.add_argument("--model", help="model name at the configured OpenAI-compatible endpoint")
    p.add_argument("--prompt-dir", help="directory whose extract.yaml replaces the shipped one")
    p.add_argument("--data", help="labelled set (default: the shipped one)")
    p.add_argument("--replay", action="store_true", help="replay recorded replies (offline)")
    p.set_defaults(handler=cmd_eval_extract)
