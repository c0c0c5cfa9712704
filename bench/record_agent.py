"""One agent turn of the blind planner or injection set, as the product runs it.

A fresh memory holds the user's facts, each stored through ``Memory.remember`` at the
instant it was said (time is moved there), so hygiene, deduplication and the stored
times are what the memory would hold (with no keywords: the extractor would have
written some); a fact hygiene refuses is written as it is (``Memory.put``) and the
turn says so in ``bypassed``. Each turn runs on its own copy of that memory. The turn then runs at
its own instant through ``create_agent`` with ``MemoryMiddleware`` (block, cue and hedge
notes, the ``recall`` and ``remember`` tools) and :class:`~recallmem.testing.ReplayChatModel`:
every model call of the turn (tool follow-ups, a forced recall after a hedge) is a
request; the first without a recording is written out and stops the turn, and the next
run, with its reply filed, goes on.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import time_machine

from bench.record_extraction import RECORDED

MAX_MODEL_CALLS = 6  # a turn that keeps calling tools is cut here (each call is a request)


@dataclass(frozen=True)
class Seed:
    """A fact the memory holds before the turn, and when it was said."""

    content: str
    category: str
    said_at: datetime


@dataclass(frozen=True)
class Turn:
    """What the user says, after which exchange, when, and where they are."""

    id: str
    kind: str
    language: str
    text: str
    at: datetime
    timezone: str = "UTC"
    history: tuple[tuple[str, str], ...] = ()  # (role, content) of the earlier exchange


@dataclass
class TurnRun:
    """How far the turn got and what the model did in it."""

    turn: Turn
    keys: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    bypassed: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # name and args, in order
    notes: list[str] = field(default_factory=list)  # the middleware's notes: cue, hedge, hint
    memory_shown: str = ""  # every memory text the model was shown: block, notes, tool results
    reply: str = ""
    error: str | None = None
    uses: bool | None = None  # a judge's verdict: does the reply use the facts it needed?
    needed_shown: bool | None = None  # every fact the turn needs was in the model's requests

    @property
    def complete(self) -> bool:
        """Whether every model call of the turn had a recording."""
        return not self.waiting and self.error is None

    @property
    def recalled(self) -> bool:
        """Whether the model called the ``recall`` tool."""
        return any(c["name"] == "recall" for c in self.tool_calls)

    @property
    def forced(self) -> bool:
        """Whether the middleware recalled after the model hedged."""
        return "recall:hedge" in self.notes


def _seed(memory: Any, user_id: str, facts: Sequence[Seed]) -> list[str]:
    from recallmem.errors import RecallmemError
    from recallmem.types import Fact, Source

    bypassed = []
    for n, seed in enumerate(sorted(facts, key=lambda s: s.said_at)):
        # A microsecond apart, as no two facts a user says are: facts said at one instant
        # would tie in the core's order, broken by their random ids (the request, and its
        # recording's key, would change from one run to the next).
        with time_machine.travel(seed.said_at + timedelta(microseconds=n), tick=False):
            try:
                memory.remember(seed.content, user_id=user_id, category=seed.category)
            except RecallmemError as exc:
                memory.put([Fact(content=seed.content, category=seed.category, user_id=user_id,
                                 sources=(Source(at=seed.said_at, extractor="bench-seed"),))])  # fmt: skip
                bypassed.append(f"{seed.content[:60]}: {type(exc).__name__}: {exc}"[:300])
    return bypassed


USER = "user"  # every turn's user; ids never reach the model
_SEEDED: dict[tuple[int, tuple[Seed, ...]], tuple[Path, list[str]]] = {}


def _seeded_home(facts: Sequence[Seed], embeddings: Any) -> tuple[Path, list[str]]:
    """A closed home holding ``facts`` (made once per set of facts), and what was bypassed:
    each turn runs on a copy, so what one turn stores never reaches another."""
    from recallmem import Memory, MemoryConfig

    key = (id(embeddings), tuple(facts))
    if key not in _SEEDED:
        home = Path(tempfile.mkdtemp(prefix="recallmem-seeded-"))
        atexit.register(shutil.rmtree, home, True)
        memory = Memory(MemoryConfig(home=home, llm_model=None), embeddings=embeddings)
        try:
            _SEEDED[key] = (home, _seed(memory, USER, facts))
        finally:
            memory.close(timeout=0)
    return _SEEDED[key]


def _read(run: TurnRun, messages: Sequence[Any]) -> None:
    from langchain_core.messages import AIMessage, ToolMessage
    from recallmem.agent.messages import current_turn, is_hidden, kind_of, marker

    run.memory_shown = "\n".join(
        m.text for m in messages if is_hidden(m) or isinstance(m, ToolMessage)
    )
    _, turn = current_turn(messages)
    for message in turn:
        kind = kind_of(message)
        if kind is not None:
            trigger = marker(message).get("trigger")
            run.notes.append(f"{kind}:{trigger}" if trigger else kind)
        elif isinstance(message, AIMessage):
            run.tool_calls += [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
            if not message.tool_calls:
                run.reply = message.text


def run_turn(
    turn: Turn,
    facts: Sequence[Seed],
    *,
    embeddings: Any,
    kind: str,
    mode: str = "hybrid",
    system_prompt: str | None = None,
    recordings: Path = RECORDED,
    requests_dir: Path | None = None,
    settings: dict[str, Any] | None = None,
) -> TurnRun:
    """Run one turn on a fresh memory holding ``facts``; see the module docs.

    ``settings`` are ``MemoryConfig`` fields for the turn (``recall_floor=0.0``: every
    fact among the ``recall_k`` nearest is shown, however weakly related).
    """
    import openai
    from langchain.agents import create_agent
    from recallmem import Memory, MemoryConfig, MemoryMiddleware
    from recallmem.testing import ReplayChatModel

    run = TurnRun(turn)
    model = ReplayChatModel(recordings=recordings, requests_dir=requests_dir,
                            keep_all=requests_dir is not None, kind=kind)  # fmt: skip
    seeded, run.bypassed = _seeded_home(facts, embeddings)
    with tempfile.TemporaryDirectory() as home:
        shutil.copytree(seeded, home, dirs_exist_ok=True)
        config = MemoryConfig(home=home, llm_model=None, **(settings or {}))
        memory = Memory(config, embeddings=embeddings)
        try:
            agent = create_agent(model=model, system_prompt=system_prompt,
                                 middleware=[MemoryMiddleware(memory=memory, mode=mode)])  # type: ignore[arg-type]  # fmt: skip
            said = [{"role": role, "content": text} for role, text in turn.history]
            context = {"user_id": USER, "thread_id": turn.id, "timezone": turn.timezone}
            with time_machine.travel(turn.at, tick=False):
                try:
                    result = agent.invoke(
                        {"messages": [*said, {"role": "user", "content": turn.text}]},
                        context=context,
                        config={"recursion_limit": 2 * MAX_MODEL_CALLS + 1},
                    )
                    _read(run, result["messages"])
                except openai.NotFoundError:
                    run.waiting = list(dict.fromkeys(model.answerer.missed))
                except Exception as exc:  # the model's reply broke the turn: that is a result
                    run.error = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            memory.close(timeout=0)
    run.keys = list(dict.fromkeys([*model.answerer.answered, *model.answerer.missed]))
    return run
