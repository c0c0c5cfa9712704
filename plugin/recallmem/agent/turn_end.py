"""The end of an agent's turn: the turn goes to extraction (queued, or extracted before
the run returns), and one line may invite the user to correct a fact saved with low
confidence (``MemoryMiddleware(confirm_below=...)``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Literal

from langchain_core.messages import BaseMessage

from recallmem.agent.injector import Update
from recallmem.agent.messages import current_turn, last_reply, remembered_below, visible
from recallmem.agent.scope import Scope
from recallmem.agent.turn_starts import TurnStarts
from recallmem.errors import RecallmemError
from recallmem.events import Event, ExtractionEvent
from recallmem.extraction.report import ExtractionReport
from recallmem.memory import Memory
from recallmem.retrieval.block_spec import MemoryBlockSpec
from recallmem.retrieval.notes import render_confirmation

log = logging.getLogger("recallmem.agent")

Extraction = Literal["background", "inline"]


@dataclass(frozen=True)
class TurnEnd:
    """What the middleware does once a turn's reply is written."""

    memory: Memory
    extraction: Extraction
    confirm_below: float | None
    timezone: tzinfo  # where a turn's dates are resolved when the run names no zone
    spec: MemoryBlockSpec
    turns: TurnStarts

    def _low_confidence(
        self, turn: Sequence[BaseMessage], report: ExtractionReport | None
    ) -> list[str]:
        if self.confirm_below is None:
            return []
        found = remembered_below(turn, self.confirm_below)
        for change in report.added if report is not None else ():
            if change.fact.confidence < self.confirm_below:
                found.append(change.fact.content)
        return found

    def _observe(
        self, conversation: Sequence[BaseMessage], scope: Scope
    ) -> ExtractionReport | None:
        """Hand the turn to extraction; a failure is logged, never loses the reply."""
        user, agent, thread = scope.user_id, scope.agent_id, scope.thread_id or "default"
        zone = scope.timezone or self.timezone  # where the turn's dates are resolved
        try:
            if self.extraction == "inline":
                return self.memory.extract(
                    conversation, user_id=user, thread_id=thread, agent_id=agent, timezone=zone
                )
            self.memory.observe(
                conversation, user_id=user, thread_id=thread, agent_id=agent, timezone=zone
            )
        except RecallmemError as exc:
            log.warning("recallmem: could not hand the turn to extraction: %s", exc)
        return None

    def finish(self, messages: Sequence[BaseMessage], scope: Scope) -> tuple[Update, list[Event]]:
        """Observe the turn; the update adding the confirmation line (if any) and the
        events to emit."""
        conversation = visible(messages)
        with self.turns.work(scope, messages):
            report = self._observe(conversation, scope)
        self.turns.end(scope, messages)
        events: list[Event] = [ExtractionEvent.from_report(report)] if report is not None else []
        _, turn = current_turn(messages)
        reply = last_reply(turn)
        unsure = self._low_confidence(turn, report)
        if reply is None or not unsure:
            return None, events
        line = render_confirmation(unsure[0], spec=self.spec)
        confirmed = reply.model_copy(update={"content": f"{reply.text}\n\n{line}"})
        return {"messages": [confirmed]}, events
