"""The default ranking through the public API: a set stored with ``Memory`` and asked.

Each set is stored in a fresh home with the default configuration, every fact with the
time it was said, and every question is a ``recall(..., k=10, min_score=None)`` asked at
its own time where ``recall`` takes one (``bench.bilingual`` scores the answers).
"""

from __future__ import annotations

import inspect
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallmem.retrieval.fusion import dialogue_tail

from bench.bilingual_cache import RunEncoder
from bench.bilingual_data import EvalSet, User
from bench.bilingual_metrics import K_MAX, Ranked


def memory_item(fact: Any) -> dict[str, Any]:
    """A benchmark fact as a ``remember_many`` item: its text, its category (``context``
    where the set's is not one of ``recallmem.types.Category``), when it was said, and
    any search keywords and keys it carries."""
    from recallmem.types import Category, Source

    category = fact.category if fact.category in set(Category) else "context"
    item: dict[str, Any] = {"content": fact.text, "category": category}
    if fact.said_at is not None:
        item["source"] = Source(at=fact.said_at, extractor="benchmark")
    if getattr(fact, "keywords", ()):  # bench.keywords: facts with search keywords
        item["keywords"] = list(fact.keywords)
    if getattr(fact, "questions", ()):  # bench.search_keys: facts with search keys
        item["questions"] = list(fact.questions)
    return item


def _store_user(memory: Any, user: User) -> dict[str, frozenset[str]]:
    """Store the user's facts; what each stored fact id cites (merged duplicates: the
    union of what the facts folded into it cite)."""
    cites: dict[str, frozenset[str]] = {}
    for start in range(0, len(user.facts), 1000):
        chunk = user.facts[start : start + 1000]
        stored = memory.remember_many([memory_item(f) for f in chunk], user_id=user.user_id)
        for fact, original in zip(stored, chunk, strict=True):
            cites[fact.id] = cites.get(fact.id, frozenset()) | original.cites
    return cites


def recall_takes_now() -> bool:
    """Whether ``Memory.recall`` accepts ``now`` (then each question is asked at its
    ``asked_at``; otherwise at the run's time)."""
    from recallmem.memory import Memory

    return "now" in inspect.signature(Memory.recall).parameters


@dataclass
class DefaultRun:
    """What the default returned (user -> question id -> Ranked), how long each recall
    took, and how many facts ``remember_many`` folded into an existing one."""

    answers: dict[str, dict[str, Ranked]] = field(default_factory=dict)
    durations: list[float] = field(default_factory=list)
    merged: int = 0


def run_default(eval_set: EvalSet, encoder: RunEncoder) -> DefaultRun:
    """Store the set through ``Memory`` (a fresh home) and ask every question."""
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory

    run = DefaultRun()
    answers, durations = run.answers, run.durations
    with tempfile.TemporaryDirectory(prefix="recallmem-bilingual-") as home:
        memory = Memory(MemoryConfig(home=Path(home)), embeddings=encoder)
        takes_now = recall_takes_now()
        try:
            for user in eval_set.users:
                cites = _store_user(memory, user)
                run.merged += len(user.facts) - len(cites)
                # One batch, cached: recall's embedding is then a lookup, for the whole
                # query and (a dialogue tail) its last line alike.
                tails = [dialogue_tail(q.text) for q in user.questions]
                encoder.embed_array([q.text for q in user.questions] + [t for t in tails if t])
                answers[user.user_id] = {}
                if user.questions:  # untimed: the first recall also loads the user's index
                    memory.recall(user.questions[0].text, user_id=user.user_id, k=K_MAX)
                for question in user.questions:
                    options: dict[str, Any] = {"k": K_MAX, "min_score": None}
                    if takes_now and question.asked_at is not None:
                        options["now"] = question.asked_at
                    started = time.perf_counter()
                    hits = memory.recall(question.text, user_id=user.user_id, **options)
                    durations.append(time.perf_counter() - started)
                    answers[user.user_id][question.id] = Ranked(
                        [cites.get(h.fact.id, frozenset()) for h in hits], [h.score for h in hits]
                    )
        finally:
            close = getattr(memory, "close", None)
            if callable(close):
                close()
    return run
