"""``MemoryMiddleware``: make a LangChain 1.x ``create_agent`` agent remember.

What it does in each turn of a thread:

1. **Inject** (``before_agent``): when the thread has no memory block yet, a hidden,
   user-role block goes before the first user message: the user's profile (and the
   agent's), corrections (``avoid:``), the core (pinned facts, identity, the strongest
   standing preferences: shown whatever the first message is), todos due soon, the facts
   most relevant to that message, the date; within ``max_injection_tokens``. Turns the
   user just said in another thread, still waiting for extraction, are caught up
   (``fresh_threads``). The block stays byte-identical for the whole thread (the prompt
   prefix stays cacheable); it is re-rendered only when the date changes or a fact it
   shows is no longer active.
2. **Follow the conversation** (``before_agent``, every later turn): the facts relevant
   to the new message that the thread does not show yet come as a small hidden note
   with that turn (at most ``turn_k`` facts within ``turn_note_tokens``); nothing the
   block, an earlier note or a recall answer shows is repeated.
3. **Cue** (``before_agent``): when the user's message points back ("上次", "as I said"):
   mode ``tool`` adds a note telling the planner to call ``recall``; ``auto`` recalls
   itself and adds the facts; ``hybrid`` recalls and adds the facts, and still points
   the planner at ``recall`` for more (or only points, when nothing matched).
4. **Catch a hedge** (``wrap_model_call``): when the reply hedges about earlier context
   ("I don't have access to previous conversations") and nothing was recalled in this
   turn, it recalls on the user's message, adds the facts and calls the model once more.
   Never more than once per turn (the added facts count as a recall).
5. **Observe** (``after_agent``): the turn goes to ``memory.observe`` for extraction
   (``extraction="inline"`` extracts before returning instead); optionally, one line
   invites the user to correct a fact saved below ``confirm_below`` confidence.

Every retrieval is a ``memory_retrieval`` event (trigger ``injection``, ``turn``,
``cue``, ``hedge`` or ``tool``) and every inline extraction a ``memory_extraction`` event: a log
record on ``recallmem.events`` and a LangChain custom callback event.

The user, agent and thread come from the run: ``context={"user_id": ...}`` or
``config={"configurable": {"user_id": ..., "thread_id": ...}}``.

>>> from langchain.agents import create_agent
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import FakeChatModel, HashingEmbeddings
>>> memory = Memory(MemoryConfig(store="memory"), embeddings=HashingEmbeddings())
>>> _ = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
>>> model = FakeChatModel(responses=["好的，下面是中文报告。"])
>>> agent = create_agent(model, middleware=[MemoryMiddleware(memory=memory)])
>>> result = agent.invoke({"messages": [("user", "Write the weekly report")]},
...                       context={"user_id": "ada", "thread_id": "t1"})
>>> "Prefers reports in Chinese" in model.requests[0][0].content
True
>>> memory.close()  # stops the background worker the middleware started
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest, ToolRuntime
from langgraph.runtime import Runtime
from langgraph.types import Command

from recallmem.agent.block_keeper import BlockKeeper
from recallmem.agent.fresh import FreshMode, FreshThreads
from recallmem.agent.injector import Injector, Mode, Update
from recallmem.agent.messages import (
    current_turn,
    first_user_message,
    last_reply,
    recall_ran,
)
from recallmem.agent.scope import Scope, resolve_scope
from recallmem.agent.tools import MemoryToolkit
from recallmem.agent.turn_end import Extraction, TurnEnd
from recallmem.agent.turn_starts import TurnStarts
from recallmem.errors import RecallmemError
from recallmem.events import Event, aemit, emit
from recallmem.limits import (
    DEFAULT_CORE_FACTS,
    DEFAULT_CORE_SHARE,
    DEFAULT_FRESH_WAIT_SECONDS,
    DEFAULT_RECENT_TOKENS,
    DEFAULT_TURN_K,
    DEFAULT_TURN_NOTE_TOKENS,
)
from recallmem.memory import Memory
from recallmem.persistence.forget_ledger import Began
from recallmem.prompts import load_tool_texts
from recallmem.retrieval.block_spec import load_memory_block_spec
from recallmem.retrieval.when import user_zone
from recallmem.signals.detector import load_signals
from recallmem.text.tokens import get_counter

log = logging.getLogger("recallmem.agent")


class MemoryMiddleware(AgentMiddleware):
    """Memory for ``create_agent``: injection, planner cues, forced recall, observation.

    Args:
        memory: the :class:`~recallmem.Memory` to read and write.
        mode: ``hybrid`` (default), ``tool`` or ``auto``; see the module docs.
        max_injection_tokens: budget of the start-of-thread block (default: the memory's
            ``config.max_injection_tokens``, 2000).
        recall_k: how many facts the block and each recall consider (default: the
            memory's ``config.recall_k``).
        note_tokens: budget of the facts added mid-turn for a cue or a hedge.
        turn_k: at most this many facts in a turn's note (0: no turn notes).
        turn_note_tokens: budget of a turn's note.
        core_facts: at most this many core facts in the block (0: no core).
        core_share: share of the block's budget the core may take.
        correction_share: share of the block's budget kept for corrections.
        fresh_threads: what a new thread does about the user's turns still waiting for
            extraction in other threads: ``extract`` them first (at most
            ``fresh_wait_seconds``, then carry what is left), ``carry`` their words as a
            marked note, or ``off`` (:mod:`recallmem.agent.fresh`).
        fresh_wait_seconds: the longest a new thread's first turn waits for that.
        recent_tokens: budget of the carried words.
        confirm_below: if set, a fact saved this turn below this confidence gets one line
            in the reply inviting the user to correct it.
        extraction: ``background`` queues the turn (``memory.observe``); ``inline``
            extracts it before the run returns (``memory.extract``), which costs latency.
        register_tools: add the ``recall`` and ``remember`` tools to the agent.
        timezone: where "today" is, for the date in the block, when the run's context
            names no ``timezone`` (an IANA name, as ``context={"timezone": "Asia/Shanghai"}``).
        clock: the current time (for tests); timezone-aware.
    """

    def __init__(
        self,
        memory: Memory,
        *,
        mode: Mode = "hybrid",
        max_injection_tokens: int | None = None,
        recall_k: int | None = None,
        note_tokens: int = 600,
        turn_k: int = DEFAULT_TURN_K,
        turn_note_tokens: int = DEFAULT_TURN_NOTE_TOKENS,
        core_facts: int = DEFAULT_CORE_FACTS,
        core_share: float = DEFAULT_CORE_SHARE,
        correction_share: float = 0.25,
        fresh_threads: FreshMode = "extract",
        fresh_wait_seconds: float = DEFAULT_FRESH_WAIT_SECONDS,
        recent_tokens: int = DEFAULT_RECENT_TOKENS,
        confirm_below: float | None = None,
        extraction: Extraction = "background",
        register_tools: bool = True,
        timezone: tzinfo = UTC,
        clock: Callable[[], datetime] | None = None,
        prompt_dir: Path | None = None,
    ) -> None:
        super().__init__()
        if mode not in ("hybrid", "tool", "auto"):
            raise ValueError(f"mode must be 'hybrid', 'tool' or 'auto', not {mode!r}")
        if extraction not in ("background", "inline"):
            raise ValueError(f"extraction must be 'background' or 'inline', not {extraction!r}")
        self.memory, self.mode = memory, mode
        self.timezone, self._clock = timezone, clock or (lambda: datetime.now(UTC))
        folder = prompt_dir or memory.config.prompt_dir
        self._spec = load_memory_block_spec(folder)
        # Prototypes catch the hedges and cues no pattern names (docs/benchmarks.md, blind2).
        self._signals = load_signals(folder, semantic=True)
        self._tool_texts = load_tool_texts(folder)
        counter = get_counter()
        blocks = BlockKeeper(
            memory=memory,
            spec=self._spec,
            counter=counter,
            max_tokens=max_injection_tokens or memory.config.max_injection_tokens,
            correction_share=correction_share,
            core_limit=core_facts,
            core_share=core_share,
            recent_tokens=recent_tokens,
            fresh=FreshThreads(memory, fresh_threads, fresh_wait_seconds),
        )
        self.injector = Injector(
            memory=memory,
            mode=mode,
            recall_k=recall_k or memory.config.recall_k,
            note_tokens=note_tokens,
            turn_k=turn_k,
            turn_note_tokens=turn_note_tokens,
            spec=self._spec,
            signals=self._signals,
            counter=counter,
            blocks=blocks,
        )
        self.tools = (
            MemoryToolkit(memory=memory, prompt_dir=folder).get_tools() if register_tools else []
        )
        self._tool_names = {"recall", "remember"}
        self._turns = TurnStarts()  # a turn's writes meet the forgets made while it ran
        self._end = TurnEnd(memory, extraction, confirm_below, timezone, self._spec, self._turns)
        if extraction == "background":
            memory.start_background()  # windows left queued by an earlier run resume

    # -- scope ----------------------------------------------------------------------

    def _scope(
        self, messages: Sequence[BaseMessage], runtime: Runtime[Any] | ToolRuntime[Any, Any] | None
    ) -> Scope:
        try:
            config: RunnableConfig | None = get_config()
        except RuntimeError:
            config = None
        scope = resolve_scope(config, runtime.context if runtime is not None else None)
        if scope.thread_id is None:
            # No thread id in the run: the first message's id is stable across its turns.
            first = first_user_message(messages)
            anchor = first.id if first is not None else None
            scope = replace(scope, thread_id=f"thread-{anchor or 'default'}")
        return scope

    def _today(self, scope: Scope) -> date:
        # The run's timezone (context={"timezone": ...}) wins over the middleware's default.
        zone = user_zone(scope.timezone) if scope.timezone else self.timezone
        return self._clock().astimezone(zone).date()

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> Update:
        """Inject the block at the start of a thread (or refresh it) and add cue notes."""
        messages = state["messages"]
        scope = self._scope(messages, runtime)
        self._turns.note(scope, messages)
        update, events = self.injector.start_turn(messages, scope, self._today(scope))
        for event in events:
            emit(event)
        return update

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> Update:
        """Async :meth:`before_agent` (memory work runs in a worker thread)."""
        messages = state["messages"]
        scope = self._scope(messages, runtime)
        self._turns.note(scope, messages)
        start = self.injector.start_turn
        update, events = await asyncio.to_thread(start, messages, scope, self._today(scope))
        for event in events:
            await aemit(event)
        return update

    # -- forced recall on a hedge ----------------------------------------------------------

    def _hedge_query(
        self, request: ModelRequest, response: ModelResponse
    ) -> tuple[str, str | None] | None:
        """The user's message to recall on, with its id, when the reply hedges."""
        reply = last_reply(response.result)
        if reply is None or self._signals.detect("hedge", reply.text) is None:
            return None
        user, turn = current_turn(request.messages)
        if user is None or not user.text.strip() or recall_ran(turn):
            return None
        return user.text, user.id

    def _retry_request(self, request: ModelRequest, note: BaseMessage) -> ModelRequest:
        return request.override(messages=[*request.messages, note])  # type: ignore[list-item]

    def _forced_note(
        self, query: str, scope: Scope, turn_id: str | None
    ) -> tuple[BaseMessage, Event] | None:
        try:
            return self.injector.recalled_note(query, scope, "hedge", turn_id)
        except RecallmemError as exc:  # an outage leaves the hedging reply as it was
            log.warning("recallmem: forced recall failed: %s", exc)
            return None

    @staticmethod
    def _merged(note: BaseMessage, retry: ModelResponse) -> ModelResponse:
        return ModelResponse(
            result=[note, *retry.result], structured_response=retry.structured_response
        )

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        """Call the model; on a hedge with no recall this turn, recall and call it once more."""
        response = handler(request)
        hedged = self._hedge_query(request, response)
        if hedged is None:
            return response
        scope = self._scope(request.messages, request.runtime)
        with self._turns.work(scope, request.messages):  # its record meets a forget meanwhile
            forced = self._forced_note(hedged[0], scope, hedged[1])
        if forced is None:
            return response
        note, event = forced
        emit(event)
        return self._merged(note, handler(self._retry_request(request, note)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        """Async :meth:`wrap_model_call`."""
        response = await handler(request)
        hedged = self._hedge_query(request, response)
        if hedged is None:
            return response
        scope = self._scope(request.messages, request.runtime)
        with self._turns.work(scope, request.messages):
            forced = await asyncio.to_thread(self._forced_note, hedged[0], scope, hedged[1])
        if forced is None:
            return response
        note, event = forced
        await aemit(event)
        return self._merged(note, await handler(self._retry_request(request, note)))

    # -- the memory tools -------------------------------------------------------------------

    def _tool_failed(self, request: ToolCallRequest, exc: Exception) -> ToolMessage:
        log.warning("recallmem: tool %s failed: %s", request.tool_call["name"], exc, exc_info=exc)
        said = self._tool_texts.responses
        text = said.error.format(
            problem=f"{type(exc).__name__}: {exc}", next_step=said.next_step_failed
        )
        return ToolMessage(content=text, tool_call_id=request.tool_call["id"] or "",
                           name=request.tool_call["name"], status="error")  # fmt: skip

    def _tool_work(self, request: ToolCallRequest) -> AbstractContextManager[Began]:
        """Run a memory tool as work of its turn (``remember`` meets a forget meanwhile)."""
        state = request.state if isinstance(request.state, dict) else {}
        messages = state.get("messages", [])
        return self._turns.work(self._scope(messages, request.runtime), messages)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Turn any failure of the memory tools into text for the model (a ``recall``
        records and reports itself: :mod:`recallmem.agent.tools`)."""
        if request.tool_call["name"] not in self._tool_names:
            return handler(request)
        try:
            with self._tool_work(request):
                return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return self._tool_failed(request, exc)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async :meth:`wrap_tool_call`."""
        if request.tool_call["name"] not in self._tool_names:
            return await handler(request)
        try:
            with self._tool_work(request):
                return await handler(request)
        except GraphBubbleUp:
            raise
        except Exception as exc:
            return self._tool_failed(request, exc)

    # -- after the turn ----------------------------------------------------------------

    def after_agent(self, state: Any, runtime: Runtime[Any]) -> Update:
        """Observe the turn for extraction; add the optional confirmation line."""
        messages = state["messages"]
        update, events = self._end.finish(messages, self._scope(messages, runtime))
        for event in events:
            emit(event)
        return update

    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> Update:
        """Async :meth:`after_agent`."""
        messages = state["messages"]
        scope = self._scope(messages, runtime)
        update, events = await asyncio.to_thread(self._end.finish, messages, scope)
        for event in events:
            await aemit(event)
        return update


__all__ = ["Extraction", "MemoryMiddleware", "Mode"]
