"""What the memory middleware puts into a turn: the block, cue notes, recalled facts.

The I/O half of injection: it asks :class:`~recallmem.Memory` for the profile,
corrections and relevant facts, and hands them to the pure packing in
:mod:`recallmem.retrieval.injection`. Every retrieval comes back with its
``memory_retrieval`` event for the caller to emit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from recallmem.agent.messages import (
    block_message,
    current_turn,
    first_user_message,
    hidden_message,
    marker,
)
from recallmem.agent.scope import Scope
from recallmem.agent.shown_records import block_record, recalled_record
from recallmem.embedders import recall_floor
from recallmem.errors import RecallmemError
from recallmem.events import Event, RetrievalEvent
from recallmem.facts.expiry import due_label, due_soon, is_expired, next_change
from recallmem.limits import MAX_QUERY_CHARS
from recallmem.memory import Memory
from recallmem.retrieval.injection import (
    MemoryBlock,
    MemoryBlockSpec,
    build_block,
    pack_recalled,
    render_recall_hint,
)
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.retrieval.when import user_zone
from recallmem.signals.detector import Signals
from recallmem.text.tokens import TokenCounter
from recallmem.types import Category, Fact, Profile, ScoredFact, utcnow

Mode = Literal["hybrid", "tool", "auto"]
Update = dict[str, Any] | None
log = logging.getLogger("recallmem.agent")


def _still_timely(until: object) -> bool:
    """Whether a block marked valid ``until`` (ISO, or absent) may stay as it is."""
    if until is None:
        return True
    try:
        return utcnow() < datetime.fromisoformat(str(until))
    except (TypeError, ValueError):
        return False  # a marker we cannot read: rebuild rather than keep stale facts


@dataclass(frozen=True)
class Injector:
    """Builds the start-of-thread block and the notes a turn gets, for one memory."""

    memory: Memory
    mode: Mode
    max_injection_tokens: int
    recall_k: int
    note_tokens: int
    correction_share: float
    spec: MemoryBlockSpec
    signals: Signals
    counter: TokenCounter

    # -- recalls --------------------------------------------------------------------

    def _recall(self, query: str, scope: Scope) -> list[ScoredFact]:
        if not query.strip():  # an image-only message, say: nothing to search for
            return []
        return self.memory.recall(
            query[:MAX_QUERY_CHARS],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            k=self.recall_k,
            timezone=scope.timezone,
            min_score=recall_floor(self.memory.config.recall_floor, self.memory.embeddings),
        )

    def noted(self, record: RetrievalRecord, injected: bool | None = None) -> RetrievalEvent:
        """Keep the record of what reached the model; its ``memory_retrieval`` event."""
        self.memory.record_retrieval(record)
        return RetrievalEvent.from_record(record, injected=injected)

    def recalled_note(
        self, query: str, scope: Scope, trigger: Literal["cue", "hedge"], turn_id: str | None
    ) -> tuple[BaseMessage, RetrievalEvent]:
        hits = self._recall(query, scope)
        text, carried = pack_recalled(
            hits, query=query, trigger=trigger, max_tokens=self.note_tokens,
            counter=self.counter, spec=self.spec,
        )  # fmt: skip
        tokens = self.counter.count(text)
        record = recalled_record(scope, turn_id, query, hits, trigger, carried, tokens)
        return hidden_message(text, "recall", meta={"trigger": trigger}), self.noted(record)

    # -- the block ------------------------------------------------------------------

    def _revision(self, user_id: str) -> str | None:
        return self.memory.revision(user_id)

    def _profile(self, scope: Scope) -> Profile:
        own = self.memory.get_profile(user_id=scope.user_id, agent_id=scope.agent_id)
        if scope.agent_id is not None and not own.sections():
            return self.memory.get_profile(user_id=scope.user_id)
        return own

    def _in_scope(self, scope: Scope, category: Category) -> list[Fact]:
        facts = self.memory.list(user_id=scope.user_id, category=category, status="active",
                                 limit=100)  # fmt: skip
        now = utcnow()
        return [
            f
            for f in facts
            if f.agent_id in (None, scope.agent_id)
            and f.thread_id != scope.thread_id
            and not is_expired(f, now)
        ]

    def _corrections(self, scope: Scope) -> list[Fact]:
        return self._in_scope(scope, Category.CORRECTION)

    def _build_block(
        self, query: str, scope: Scope, today: date, turn_id: str | None
    ) -> tuple[MemoryBlock, RetrievalRecord, datetime | None]:
        """The block, its record, and when time alone changes it (a fact in it expires or a
        todo falls due soon), so a block kept by date and revision is rebuilt then."""
        now, zone = utcnow(), user_zone(scope.timezone)
        relevant = [h for h in self._recall(query, scope) if h.fact.thread_id != scope.thread_id]
        corrections, todos = self._corrections(scope), self._in_scope(scope, Category.TODO)
        due = [(f, due_label(f.valid_until, zone)) for f in todos
               if f.valid_until is not None and due_soon(f, now)]  # fmt: skip
        block = build_block(
            self._profile(scope), corrections, relevant,
            today=today, max_tokens=self.max_injection_tokens,
            correction_share=self.correction_share, counter=self.counter, spec=self.spec,
            due=due,
        )  # fmt: skip
        shown = {*block.fact_ids, *block.correction_ids, *block.due_ids}
        facts = [*corrections, *todos, *(h.fact for h in relevant)]
        changes_at = next_change([f for f in facts if f.id in shown], todos, now)
        return block, block_record(scope, turn_id, query, block, relevant), changes_at

    def _block_update(
        self, messages: Sequence[BaseMessage], scope: Scope, today: date, turn_id: str | None
    ) -> tuple[list[BaseMessage], list[Event]]:
        """The block to insert (all messages rewritten) or to replace in place, if any."""
        revision = self._revision(scope.user_id)
        existing = block_message(messages)
        if existing is not None:
            meta = marker(existing)
            same = meta.get("date") == today.isoformat() and meta.get("revision") == revision
            if same and _still_timely(meta.get("until")):
                return [], []  # nothing changed: the same bytes stay in place
            query = str(meta.get("query") or "")
        else:
            first = first_user_message(messages)
            if first is None:
                return [], []
            query = first.text[:MAX_QUERY_CHARS]
        block, record, changes_at = self._build_block(query, scope, today, turn_id)
        meta = {"date": today.isoformat(), "revision": revision, "query": query,
                "tokens": block.tokens}  # fmt: skip
        if changes_at is not None:
            meta["until"] = changes_at.isoformat()
        if existing is not None and block.text == existing.content:
            # Same text: the bytes stay as they were, only the refresh key is updated.
            return [hidden_message(block.text, "block", id=existing.id, meta=meta)], []
        events: list[Event] = [self.noted(record, injected=not block.empty)]
        if existing is None:
            if block.empty:
                return [], events
            fresh = hidden_message(block.text, "block", meta=meta)
            return [RemoveMessage(id=REMOVE_ALL_MESSAGES), fresh, *messages], events
        if block.empty:  # everything it showed was forgotten: it must not linger
            return [RemoveMessage(id=existing.id or "")], events
        return [hidden_message(block.text, "block", id=existing.id, meta=meta)], events

    # -- cues -----------------------------------------------------------------------

    def _cue_notes(
        self, text: str, scope: Scope, turn_id: str | None
    ) -> tuple[list[BaseMessage], list[Event]]:
        cue = self.signals.detect("recall_cue", text)
        if cue is None:
            return [], []
        if self.mode == "tool":
            return [
                hidden_message(render_recall_hint(cue, after_fetch=False, spec=self.spec), "hint")
            ], []
        note, event = self.recalled_note(text, scope, "cue", turn_id)
        if self.mode == "auto":
            return [note], [event]
        if event.hits:  # hybrid: the facts, and the tool for more
            hint = render_recall_hint(cue, after_fetch=True, spec=self.spec)
            return [note, hidden_message(hint, "hint")], [event]
        # Nothing matched, but the recall ran: a hedge now must not trigger the same one.
        hint = render_recall_hint(cue, after_fetch=False, spec=self.spec)
        return [hidden_message(hint, "hint", meta={"recalled": True})], [event]

    def start_turn(
        self, messages: Sequence[BaseMessage], scope: Scope, today: date
    ) -> tuple[Update, list[Event]]:
        """The messages to add as a turn starts (block and cue notes) and the events.

        A memory outage never stops the agent: it is logged and the turn goes on
        without memory.
        """
        user, _ = current_turn(messages)
        if user is None:
            return None, []
        try:
            block_msgs, events = self._block_update(messages, scope, today, user.id)
            notes, cue_events = self._cue_notes(user.text, scope, user.id)
        except RecallmemError as exc:
            log.warning("recallmem: memory unavailable for this turn: %s", exc)
            return None, []
        events = [*events, *cue_events]
        return ({"messages": [*block_msgs, *notes]} if block_msgs or notes else None), events


__all__ = ["MAX_QUERY_CHARS", "Injector", "Mode", "Update"]
