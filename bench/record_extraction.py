"""Replaying a conversation of the blind extraction set through ``Memory``, day by day.

Each conversation gets its own memory (the default configuration and embedder, so the
stored facts shown to the model are the ones the product would show) and is fed to
``Memory.observe`` one day at a time, each message with the time it was said, then
``flush``: the windows are extracted by :class:`~recallmem.testing.ReplayChatModel`
from the recordings. A day whose request has no recording yet stops the conversation
there: the request is written out to be answered, and the next run, with the reply
filed, goes on to the next day (what the model is shown on day 2 depends on what it
stored on day 1).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.record_sets import Conversation

RECORDED = Path(__file__).resolve().parents[1] / "tests" / "data" / "recorded"


@dataclass
class ConversationRun:
    """How far a conversation got, what it asked and what memory holds at the end."""

    id: str
    days: int
    days_done: int = 0
    keys: list[list[str]] = field(default_factory=list)  # request keys, per day
    waiting: list[str] = field(default_factory=list)  # keys without a recording
    errors: list[str] = field(default_factory=list)  # windows that failed for another reason
    facts: list[Any] = field(default_factory=list)  # every stored fact, all statuses
    unsaid: list[str] = field(default_factory=list)  # refused by the specifics rule

    @property
    def complete(self) -> bool:
        """Whether every day was extracted from recordings."""
        return self.days_done == self.days


def day_messages(conversation: Conversation, day: int) -> list[dict[str, str]]:
    """One day's messages as ``observe`` takes them, each with the time it was said."""
    return [
        {"role": m.role, "content": m.content, "id": m.id, "said_at": m.at}
        for m in conversation.days[day].messages
    ]


def replay_conversation(
    conversation: Conversation,
    *,
    embeddings: Any,
    recordings: Path = RECORDED,
    requests_dir: Path | None = None,
) -> ConversationRun:
    """Extract the conversation's days in order, as far as there are recordings."""
    from recallmem import Memory, MemoryConfig
    from recallmem.extraction.specifics import REFUSAL_ENDINGS
    from recallmem.testing import ReplayChatModel

    run = ConversationRun(conversation.id, days=len(conversation.days))
    model = ReplayChatModel(recordings=recordings, requests_dir=requests_dir,
                            keep_all=requests_dir is not None, kind="extraction")  # fmt: skip
    answerer = model.answerer
    with tempfile.TemporaryDirectory() as home:
        # Long debounce: only flush extracts, one day at a time, as the loop says.
        config = MemoryConfig(home=home, debounce_seconds=3600, max_wait_seconds=3600)
        memory = Memory(config, embeddings=embeddings, model=model)
        try:
            for day in range(run.days):
                answered, missed = len(answerer.answered), len(answerer.missed)
                memory.observe(day_messages(conversation, day), user_id=conversation.user_id,
                               thread_id=f"{conversation.id}-d{day + 1}",
                               timezone=conversation.timezone)  # fmt: skip
                reports = memory.flush()
                # A window asked twice (the worker and flush) is one request.
                waiting = list(dict.fromkeys(answerer.missed[missed:]))
                run.keys.append(list(dict.fromkeys([*answerer.answered[answered:], *waiting])))
                if waiting:
                    run.waiting = waiting
                    break
                run.errors += [f"day {day + 1}: {r.error}" for r in reports if r.error]
                run.unsaid += [d.content for r in reports for d in r.dropped
                               if d.reason.endswith(REFUSAL_ENDINGS)]  # fmt: skip
                run.days_done = day + 1
            run.facts = memory.list(user_id=conversation.user_id, status=None, limit=1000)
        finally:
            memory.close(timeout=0)  # a window still waiting stays queued, not asked again
    return run
