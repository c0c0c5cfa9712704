"""The per-turn retrieval log: what each chat turn recalled or injected, with scores.

Filled from the memory events the chat stream sends (the middleware's
``memory_retrieval`` events and the ``recall`` tool's hits, see :mod:`.chat_agent`),
so it shows exactly what the agent was given. It lives in memory only, per process:
at most :data:`MAX_ENTRIES_PER_USER` entries per user and :data:`MAX_USERS` users (the
least recently active user is forgotten first), so it stays small however long the
service runs. A purge through the API drops the user's entries (:meth:`RetrievalLog.forget`).

>>> log = RetrievalLog()
>>> log.record("ada", thread_id="t", turn_id="m1", message="hi",
...            event={"kind": "injection", "trigger": "injection", "hits": 2, "top_score": 0.7})
>>> [(e.kind, e.hits, e.top_score) for e in log.recent("ada")]
[('injection', 2, 0.7)]
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from recallmem.types import ScoreParts, ScoreWeights, utcnow

MAX_ENTRIES_PER_USER = 200
MAX_USERS = 1000
MAX_MESSAGE_CHARS = 200  # enough of the user's message to recognise the turn


class RecalledFact(BaseModel):
    """One fact a recall returned, as the agent saw it."""

    id: str
    content: str
    category: str
    score: float
    parts: ScoreParts
    weights: ScoreWeights | None = None


class RetrievalEntry(BaseModel):
    """One retrieval in a chat turn.

    ``kind`` is ``injection`` (the memory block before the turn) or ``recall`` (the
    ``recall`` tool, or a recall forced by a cue or a hedge). Tool recalls list their
    ``facts`` with scores; the middleware's events carry the count and the top score.
    """

    at: datetime
    thread_id: str
    turn_id: str = Field(description="The id of the user message that began the turn.")
    message: str = Field(description="The start of that message.")
    kind: str
    trigger: str | None = None
    query: str | None = None
    hits: int
    top_score: float | None = None
    injected: bool | None = None
    tokens: int | None = None
    facts: list[RecalledFact] = Field(default_factory=list)
    error: str | None = None


def _entry(thread_id: str, turn_id: str, message: str, event: dict[str, Any]) -> RetrievalEntry:
    listed = event.get("hits")
    facts = [RecalledFact.model_validate(hit) for hit in listed] if isinstance(listed, list) else []
    top = event.get("top_score")
    if top is None and facts:
        top = max(fact.score for fact in facts)
    return RetrievalEntry(
        at=utcnow(),
        thread_id=thread_id,
        turn_id=turn_id,
        message=message[:MAX_MESSAGE_CHARS],
        kind=str(event.get("kind")),
        trigger=event.get("trigger"),
        query=event.get("query"),
        hits=len(facts) if isinstance(listed, list) else int(listed or 0),
        top_score=top,
        injected=event.get("injected", bool(facts) if isinstance(listed, list) else None),
        tokens=event.get("tokens"),
        facts=facts,
        error=event.get("error"),
    )


class RetrievalLog:
    """Recent retrieval entries per user, bounded (thread-safe)."""

    def __init__(self, per_user: int = MAX_ENTRIES_PER_USER, users: int = MAX_USERS) -> None:
        self.per_user = per_user
        self.users = users
        self._entries: OrderedDict[str, deque[RetrievalEntry]] = OrderedDict()
        self._lock = threading.Lock()

    def record(
        self,
        user_id: str,
        *,
        thread_id: str,
        turn_id: str,
        message: str,
        event: dict[str, Any],
        unless: Callable[[], object] | None = None,
    ) -> None:
        """Keep one ``memory`` event of kind ``recall`` or ``injection``, unless
        ``unless()``, asked under the lock :meth:`forget` takes (a purge of the user
        since the turn began: its entry would quote what was purged)."""
        entry = _entry(thread_id, turn_id, message, event)
        with self._lock:
            if unless is not None and unless():
                return
            kept = self._entries.pop(user_id, None) or deque(maxlen=self.per_user)
            kept.append(entry)
            self._entries[user_id] = kept
            while len(self._entries) > self.users:
                self._entries.popitem(last=False)

    def forget(self, user_id: str) -> None:
        """Drop the user's entries: after a purge ("forget me" or one fact), since an entry
        quotes the user's message and the facts recalled."""
        with self._lock:
            self._entries.pop(user_id, None)

    def recent(self, user_id: str, limit: int = MAX_ENTRIES_PER_USER) -> list[RetrievalEntry]:
        """The user's latest entries, newest first."""
        with self._lock:
            kept = list(self._entries.get(user_id, ()))
        return kept[::-1][:limit]
