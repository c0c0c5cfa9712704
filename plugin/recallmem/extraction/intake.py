"""Taking a conversation in: keep what is worth extracting, queue it durably, say so.

The filter drops our own memory blocks, tool traffic and acknowledgements; a user
message that asks to be remembered makes its window due at once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from recallmem.errors import MissingScopeError
from recallmem.extraction.filter import MessageLike, filter_messages, load_filter_rules
from recallmem.extraction.threads import zone_name
from recallmem.extraction.window_queue import QueueStore, ThreadScope
from recallmem.facts.validation import optional_key, require_user
from recallmem.limits import check_scope_id
from recallmem.signals.detector import Signals

log = logging.getLogger("recallmem.extraction")
WAITING_FOR_MODEL = (
    "queued; extraction waits for a chat model: pass Memory(model=...) or set "
    "RECALLMEM_LLM_MODEL and RECALLMEM_OPENAI_API_KEY (or RECALLMEM_OPENAI_BASE_URL)"
)


class Observation(BaseModel):
    """What ``observe`` did with a conversation."""

    model_config = ConfigDict(frozen=True)

    queued: int
    pending: int
    remember_request: bool
    waiting_for_model: bool
    note: str


def thread_scope(
    user_id: str, thread_id: str, agent_id: str | None, timezone: str | tzinfo | None = None
) -> ThreadScope:
    """The queue's scope of a conversation, or an error naming the missing (or bad) argument.

    ``timezone`` is the user's (an IANA name or a ``tzinfo``; None: UTC), where the
    dates the conversation says ("tomorrow", "下周五") are resolved.
    """
    if not isinstance(thread_id, str) or not thread_id.strip():
        raise MissingScopeError(
            "thread_id is required (pass thread_id=...): windows are debounced per thread"
        )
    return ThreadScope(
        user_id=require_user(user_id),
        thread_id=check_scope_id(thread_id, "thread_id") or thread_id,
        agent_id=optional_key(agent_id, "agent_id"),
        timezone=zone_name(timezone),
    )


class Intake:
    """Filters conversations into the queue."""

    def __init__(self, queue: QueueStore, signals: Signals, prompt_dir: Path | None) -> None:
        self.queue, self._signals = queue, signals
        self._filter = load_filter_rules(prompt_dir)
        self._warned = False

    def add(
        self,
        messages: Sequence[MessageLike],
        scope: ThreadScope,
        said_at: datetime | str | None = None,
    ) -> tuple[int, bool]:
        """Queue the new messages; returns how many and whether one asked to be remembered.

        ``said_at``: when the whole transcript was said (a message's own time wins).
        """
        kept = filter_messages(messages, self._filter, said_at=said_at)
        urgent = [
            u.role == "user" and self._signals.detect("remember_request", u.content) is not None
            for u in kept
        ]
        return self.queue.add(scope, kept, urgent), any(urgent)

    def observe(
        self,
        messages: Sequence[MessageLike],
        scope: ThreadScope,
        *,
        has_model: bool,
        said_at: datetime | str | None = None,
    ) -> Observation:
        """Queue a conversation and describe what happened."""
        queued, urgent = self.add(messages, scope, said_at)
        if not has_model:
            note = f"{queued} new message(s) {WAITING_FOR_MODEL}"
            if not self._warned:  # once per process, not once per turn
                log.warning("recallmem: %s", note)
                self._warned = True
        else:
            note = f"{queued} new message(s) queued" + ("; due now" if urgent else "")
        return Observation(
            queued=queued,
            pending=self.queue.pending_count(scope),
            remember_request=urgent,
            waiting_for_model=not has_model,
            note=note,
        )
