"""Runs one agent-loop scenario through ``create_agent`` + ``MemoryMiddleware`` and reads,
turn by turn, which stored facts reached the model.

The chat model is scripted and never calls a tool, so what the model sees is what the
middleware alone put in front of it. Extraction runs for real (queue, hygiene, store)
with a scripted extraction model that states exactly the facts the scenario says a turn
stated; the 30 s debounce is simulated on the scenario's clock (a flush when the next
turn is 30 s or more later), so a thread opened right after a statement meets what the
middleware does about windows still waiting.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from recallmem import Fact, Memory, MemoryConfig, MemoryMiddleware
from recallmem.agent.messages import is_hidden
from recallmem.testing import FakeChatModel
from recallmem.text.quoting import quote_text
from recallmem.text.tokens import get_counter
from recallmem.types import Source, Status

from bench.agent_loop_data import Scenario, ScenarioFact, Session, Turn

DEBOUNCE = timedelta(seconds=30)  # the product's default quiet time before extraction
_LINE = re.compile(r"^\[(m\d+)\] user: (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Variant:
    """One configuration of the loop: how facts learned in an agent's run are scoped (the
    old way kept them in that agent's scope) and the middleware's arguments."""

    name: str
    agent_scoped_learning: bool = False
    scope_labels: bool = True  # the scripted extractor labels each fact "user" or "agent"
    middleware: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)  # MemoryConfig fields


@dataclass
class TurnRow:
    scenario: str
    language: str
    thread: str
    agent: str | None
    turn: str
    position: int  # 1 for a thread's first turn
    needs: tuple[str, ...]
    relevant: tuple[str, ...]
    visible: frozenset[str]
    new: frozenset[str]  # visible now, not at the thread's previous turn
    stated_here: frozenset[str]  # facts stated earlier in this same thread
    tokens: int  # memory tokens added to the thread at this turn
    millis: float  # the middleware's before_agent


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


def _extractor(scenario: Scenario, variant: Variant) -> Callable[[list[BaseMessage]], str]:
    """A scripted extraction model: for each user line of the window that is a scenario
    turn with ``states``, the facts that turn stated, quoting the turn."""
    by_text = {quote_text(t.user): t for s in scenario.sessions for t in s.turns if t.states}

    def reply(messages: list[BaseMessage]) -> str:
        prompt = "\n".join(m.text for m in messages)
        facts = []
        for message_id, shown in _LINE.findall(prompt):
            turn = by_text.get(shown.strip())
            for fact in turn.states if turn is not None else ():
                item = {"content": fact.content, "category": fact.category, "confidence": 0.95,
                        "evidence": turn.user[:200], "message_ids": [message_id]}  # fmt: skip
                if variant.scope_labels:
                    item["scope"] = fact.about
                facts.append(item)
        return json.dumps({"facts": facts}, ensure_ascii=False)

    return reply


def seed(memory: Memory, scenario: Scenario, variant: Variant) -> None:
    """Store the scenario's facts as memory holds them after the earlier days."""
    ids = {f.id: f"{scenario.id}-{f.id}" for f in scenario.facts}

    def stored(f: ScenarioFact) -> Fact:
        scoped = f.agent is not None and (variant.agent_scoped_learning or f.about == "agent")
        gone = f.superseded_by is not None
        return Fact(
            id=ids[f.id], content=f.content, category=f.category, confidence=0.95,
            user_id=scenario.user_id, agent_id=f.agent if scoped else None, pinned=f.pinned,
            status=Status.SUPERSEDED if gone else Status.ACTIVE,
            superseded_by=ids.get(f.superseded_by or ""), created_at=_utc(f.said_at),
            updated_at=_utc(f.said_at),
            sources=(Source(at=_utc(f.said_at), extractor="scenario"),),
        )  # fmt: skip

    memory.put([stored(f) for f in scenario.facts])


class _Timed(MemoryMiddleware):
    """The middleware, with the time its turn start takes noted."""

    millis: list[float]

    def before_agent(self, state: Any, runtime: Any) -> Any:
        start = time.perf_counter()
        try:
            return super().before_agent(state, runtime)
        finally:
            self.millis.append((time.perf_counter() - start) * 1000)


def run_scenario(
    scenario: Scenario,
    variant: Variant,
    *,
    pad: Callable[[Memory, Scenario], None] | None = None,
) -> list[TurnRow]:
    """Every turn of the scenario, in time order, with what reached the model."""
    now = [scenario.sessions[0].turns[0].at]
    config = MemoryConfig(home=tempfile.mkdtemp(prefix="agent-loop-"), debounce_seconds=3600,
                          max_wait_seconds=7200, **variant.config)  # fmt: skip
    extractor = FakeChatModel(responses=[_extractor(scenario, variant)], cycle=True)
    memory = Memory(config, model=extractor)
    try:
        seed(memory, scenario, variant)
        if pad is not None:
            pad(memory, scenario)
        chat = FakeChatModel(responses=["OK."], cycle=True)
        middleware = _Timed(memory, clock=lambda: now[0], **variant.middleware)
        middleware.millis = []
        agent = create_agent(chat, middleware=[middleware], checkpointer=InMemorySaver())
        return _turns(scenario, memory, agent, chat, middleware, now)
    finally:
        memory.close()


def _turns(
    scenario: Scenario,
    memory: Memory,
    agent: Any,
    chat: FakeChatModel,
    middleware: _Timed,
    now: list[datetime],
) -> list[TurnRow]:
    facts = scenario.every_fact()
    shown = {i: quote_text(f.content) for i, f in facts.items()}
    counter = get_counter()
    rows: list[TurnRow] = []
    seen: dict[str, frozenset[str]] = {}
    hidden_ids: dict[str, set[str]] = {}
    stated: dict[str, set[str]] = {}
    last: datetime | None = None
    order = sorted(
        ((t.at, n, s, t) for n, s in enumerate(scenario.sessions) for t in s.turns),
        key=lambda x: (x[0], x[1]),
    )
    for at, _, session, turn in order:
        if last is not None and at - last >= DEBOUNCE:
            memory.flush()  # what the background worker does after 30 s of quiet
        last, now[0] = at, at
        before = len(chat.requests)
        agent.invoke(
            {"messages": [{"role": "user", "content": turn.user}]},
            config={"configurable": {"thread_id": session.thread}},
            context={"user_id": scenario.user_id, "agent_id": session.agent,
                     "thread_id": session.thread, "timezone": scenario.timezone},
        )  # fmt: skip
        request = chat.requests[before]  # the turn's first model call
        text = "\n".join(m.text for m in request)
        visible = frozenset(i for i, s in shown.items() if s in text)
        added = [
            m for m in request if is_hidden(m) and m.id not in hidden_ids.get(session.thread, set())
        ]
        hidden_ids.setdefault(session.thread, set()).update(
            m.id or "" for m in request if is_hidden(m)
        )
        here = frozenset(stated.get(session.thread, set()))
        rows.append(_row(scenario, session, turn, visible, seen.get(session.thread), here,
                         sum(counter.count(m.text) for m in added), middleware.millis[-1]))  # fmt: skip
        seen[session.thread] = visible
        stated.setdefault(session.thread, set()).update(f.id for f in turn.states)
    return rows


def _row(
    scenario: Scenario,
    session: Session,
    turn: Turn,
    visible: frozenset[str],
    before: frozenset[str] | None,
    here: frozenset[str],
    tokens: int,
    millis: float,
) -> TurnRow:
    return TurnRow(
        scenario=scenario.id, language=scenario.language, thread=session.thread,
        agent=session.agent, turn=turn.id,
        position=session.turns.index(turn) + 1, needs=turn.needs, relevant=turn.relevant,
        visible=visible, new=visible - (before or frozenset()), stated_here=here,
        tokens=tokens, millis=millis,
    )  # fmt: skip
