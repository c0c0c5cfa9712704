"""What the memory middleware puts into a turn: the block, the turn note, cue notes.

At each user turn:

1. the thread-start block is inserted, kept or mended (:mod:`recallmem.agent.block_keeper`);
2. a cue ("上次", "as I said") brings a recall note or a hint to call ``recall``;
3. the **turn note**: the facts relevant to this message (and, for a short message, the
   one before it) that the thread does not show yet (:mod:`recallmem.agent.thread_view`:
   not in the block, an earlier note or a recall answer, not said in this thread), at
   most ``turn_k`` of them within ``turn_note_tokens``. Relevance follows the
   conversation, turn by turn, and nothing is repeated.

The I/O half of injection: it asks :class:`~recallmem.Memory` and hands the facts to the
pure rendering in :mod:`recallmem.retrieval.injection` and :mod:`recallmem.retrieval.notes`.
Every retrieval comes back with its ``memory_retrieval`` event for the caller to emit.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from langchain_core.messages import BaseMessage, RemoveMessage

from recallmem.agent.block_keeper import ActiveFacts, BlockKeeper
from recallmem.agent.messages import current_turn, hidden_message, kind_of, marker
from recallmem.agent.scope import Scope
from recallmem.agent.shown_records import recalled_record, turn_record
from recallmem.agent.thread_view import SHOWN, ThreadView, thread_view
from recallmem.embedders import recall_floor
from recallmem.errors import RecallmemError
from recallmem.events import Event, RetrievalEvent
from recallmem.limits import MAX_QUERY_CHARS
from recallmem.memory import Memory
from recallmem.retrieval.block_spec import MemoryBlockSpec
from recallmem.retrieval.notes import render_recall_hint, render_recalled, render_turn_note
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.signals.detector import Signals
from recallmem.text.tokens import TokenCounter
from recallmem.text.words import content_units
from recallmem.types import ScoredFact

Mode = Literal["hybrid", "tool", "auto"]
Update = dict[str, Any] | None
log = logging.getLogger("recallmem.agent")
# A message of fewer meaningful words than this ("and for him?", "好的，就这样") is read
# with the user's message before it: alone it says too little to find anything by.
SHORT_MESSAGE_UNITS = 4


@dataclass(frozen=True)
class Injector:
    """Builds the block and the notes a turn gets, for one memory."""

    memory: Memory
    mode: Mode
    recall_k: int
    note_tokens: int
    turn_k: int
    turn_note_tokens: int
    spec: MemoryBlockSpec
    signals: Signals
    counter: TokenCounter
    blocks: BlockKeeper

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
        note = render_recalled(
            hits, query=query, trigger=trigger, max_tokens=self.note_tokens,
            counter=self.counter, spec=self.spec,
        )  # fmt: skip
        record = recalled_record(scope, turn_id, query, hits, trigger, note.fact_ids, note.tokens)
        meta = {"trigger": trigger, SHOWN: list(note.fact_ids)}
        return hidden_message(note.text, "recall", meta=meta), self.noted(record)

    # -- cues -----------------------------------------------------------------------

    def _cue_notes(
        self, text: str, scope: Scope, turn_id: str | None
    ) -> tuple[list[BaseMessage], list[Event], bool]:
        """The cue's notes, their events, and whether a recall ran for this message."""
        cue = self.signals.detect("recall_cue", text)
        if cue is None:
            return [], [], False
        if self.mode == "tool":
            hint = render_recall_hint(cue, after_fetch=False, spec=self.spec)
            return [hidden_message(hint, "hint")], [], False
        note, event = self.recalled_note(text, scope, "cue", turn_id)
        if self.mode == "auto":
            return [note], [event], True
        if event.hits:  # hybrid: the facts, and the tool for more
            hint = render_recall_hint(cue, after_fetch=True, spec=self.spec)
            return [note, hidden_message(hint, "hint")], [event], True
        # Nothing matched, but the recall ran: a hedge now must not trigger the same one.
        hint = render_recall_hint(cue, after_fetch=False, spec=self.spec)
        return [hidden_message(hint, "hint", meta={"recalled": True})], [event], True

    # -- the turn note ----------------------------------------------------------------

    def _turn_query(self, user: BaseMessage, view: ThreadView) -> str:
        text = user.text[:MAX_QUERY_CHARS]
        earlier = view.earlier_user_text(user)
        if earlier and len(content_units(text)) < SHORT_MESSAGE_UNITS:
            return f"{earlier[: MAX_QUERY_CHARS // 2]}\n{text}"[:MAX_QUERY_CHARS]
        return text

    def _turn_note(
        self, user: BaseMessage, view: ThreadView, scope: Scope
    ) -> tuple[list[BaseMessage], list[Event]]:
        if self.turn_k <= 0 or self.turn_note_tokens <= 0:
            return [], []
        query = self._turn_query(user, view)
        # Facts said in this thread are in its messages already.
        hits = [h for h in self._recall(query, scope) if h.fact.thread_id != scope.thread_id]
        new = [h.fact for h in hits if h.fact.id not in view.shown][: self.turn_k]
        note = render_turn_note(new, max_tokens=self.turn_note_tokens, counter=self.counter,
                                spec=self.spec)  # fmt: skip
        if not note.text:
            return [], []
        record = turn_record(scope, user.id, query, hits, note.fact_ids, view.shown,
                             self.turn_k, note.tokens)  # fmt: skip
        meta = {SHOWN: list(note.fact_ids)}
        return [hidden_message(note.text, "turn", meta=meta)], [self.noted(record)]

    # -- notes whose facts are gone -----------------------------------------------------

    def _mended_notes(
        self, messages: Sequence[BaseMessage], active: ActiveFacts
    ) -> list[BaseMessage]:
        """Earlier notes showing a fact no longer active (forgotten, superseded, expired),
        rendered again without it, or removed when nothing is left: a forgotten fact
        must not linger in the thread."""
        facts = active()
        mended: list[BaseMessage] = []
        for message in messages:
            ids = marker(message).get(SHOWN)
            if kind_of(message) not in ("turn", "recall") or not isinstance(ids, list):
                continue
            kept = [facts[i] for i in ids if i in facts]
            if len(kept) == len(ids):
                continue
            note = render_turn_note(kept, max_tokens=self.turn_note_tokens + self.note_tokens,
                                    counter=self.counter, spec=self.spec)  # fmt: skip
            if not note.text:
                mended.append(RemoveMessage(id=message.id or ""))
                continue
            meta = {**marker(message), SHOWN: list(note.fact_ids)}
            mended.append(hidden_message(note.text, "turn", id=message.id, meta=meta))
        return mended

    # -- the turn --------------------------------------------------------------------

    def start_turn(
        self, messages: Sequence[BaseMessage], scope: Scope, today: date
    ) -> tuple[Update, list[Event]]:
        """The messages to add as a turn starts (block and notes) and the events.

        A memory outage never stops the agent: it is logged and the turn goes on
        without memory.
        """
        user, _ = current_turn(messages)
        if user is None:
            return None, []
        try:
            active = ActiveFacts(self.memory, scope.user_id)
            block = self.blocks.update(messages, scope, today, self._relevant(scope), active)
            # Noted in the order the model reads them: the block before the turn's notes.
            events: list[Event] = [
                self.noted(r, injected=bool(block.messages)) for r in block.records
            ]
            mended = self._mended_notes(messages, active) if block.checked else []
            notes, cue_events, recalled = self._cue_notes(user.text, scope, user.id)
            events += cue_events
            if not block.for_current and not recalled:
                turn, turn_events = self._turn_note(user, thread_view(messages), scope)
                notes, events = [*notes, *turn], [*events, *turn_events]
        except RecallmemError as exc:
            log.warning("recallmem: memory unavailable for this turn: %s", exc)
            return None, []
        added = [*block.messages, *mended, *notes]
        return ({"messages": added} if added else None), events

    def _relevant(self, scope: Scope) -> Callable[[str], list[ScoredFact]]:
        """Recall for the block: facts said in this thread are shown by the thread."""
        return lambda query: [h for h in self._recall(query, scope)
                              if h.fact.thread_id != scope.thread_id]  # fmt: skip


__all__ = ["MAX_QUERY_CHARS", "Injector", "Mode", "Update"]
