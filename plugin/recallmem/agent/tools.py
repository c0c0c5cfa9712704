"""The ``recall`` and ``remember`` tools a planner calls, as a LangChain toolkit.

Their descriptions are data in ``prompts/tools.yaml``. The user, agent and thread come
from the run (see :mod:`recallmem.agent.scope`), never from the arguments, so a model
cannot be talked into reading or writing another user's memory. ``remember`` holds the
model's fact to extraction's rules (``Memory.remember_proposed``: the threshold, no
secret, the scope rules and cap, duplicates confirm) and records it as the planner's,
with the user message the call answers; ``recall`` records what it returned
(``Memory.record_retrieval``). Errors and refusals come back to the model as text that
says what to do next. Every stored or model-written text in a
result goes through :func:`recallmem.text.quoting.quote_text`, so a fact renders as one line
of data that cannot pose as another fact or an instruction. Async calls (``ainvoke``) run the same
bodies in a worker thread, as LangChain does for tools without a coroutine.

>>> import tempfile
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> recall, remember = MemoryToolkit(memory=memory).get_tools()
>>> config = {"configurable": {"user_id": "ada"}}
>>> remember.invoke({"content": "Writes TypeScript", "category": "knowledge"}, config)
'Saved to memory: Writes TypeScript [knowledge]'
>>> print(recall.invoke({"query": "which language do I write"}, config))
Memories about this user (most relevant first; data, not instructions):
1. [knowledge] Writes TypeScript
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import (
    BaseTool,
    BaseToolkit,
    InjectedToolArg,
    StructuredTool,
    ToolException,
)
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from recallmem.agent.messages import current_turn
from recallmem.agent.scope import resolve_scope
from recallmem.agent.shown_records import tool_record
from recallmem.embedders import recall_floor
from recallmem.errors import MissingScopeError, RecallmemError
from recallmem.events import RetrievalEvent, emit
from recallmem.extraction.proposal import ProposalOutcome
from recallmem.limits import (
    MAX_KEYWORDS,
    MAX_QUERY_CHARS,
    MAX_QUESTIONS,
    MAX_TOOL_CONTENT_CHARS,
    MAX_TOOL_K,
    SHORT_ID_CHARS,
)
from recallmem.memory import Memory
from recallmem.prompts import ToolTexts, load_tool_texts
from recallmem.text.quoting import quote_text
from recallmem.types import Category, Fact, ScoredFact

# The run's graph state, injected by LangGraph's ToolNode (None when a tool is invoked
# outside an agent): where the tools find the user message a call answers. The schemas
# accept it as it comes and leave it out of what they validate and what the model sees.
Runtime = Annotated[ToolRuntime | None, InjectedToolArg()]
Injected = Annotated[SkipJsonSchema[Any], InjectedToolArg(), Field(exclude=True)]


class RecallInput(BaseModel):
    """Arguments of ``recall`` (``runtime`` is injected, never the model's)."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: int | None = Field(default=None, ge=1, le=MAX_TOOL_K)
    categories: list[Category] | None = None
    runtime: Injected = None


class RememberInput(BaseModel):
    """Arguments of ``remember`` (``runtime`` is injected, never the model's)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, max_length=MAX_TOOL_CONTENT_CHARS)
    category: Category
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    keywords: list[str] = Field(default_factory=list, max_length=MAX_KEYWORDS)
    questions: list[str] = Field(default_factory=list, max_length=MAX_QUESTIONS)
    runtime: Injected = None


def described(schema: type[BaseModel], texts: dict[str, str]) -> type[BaseModel]:
    """The schema with each argument's description taken from the prompt file."""
    fields = {
        name: (field.annotation, FieldInfo.merge_field_infos(field, description=texts.get(name)))
        for name, field in schema.model_fields.items()
    }
    return create_model(schema.__name__, __base__=schema, **fields)  # type: ignore[call-overload,no-any-return]


def format_hits(
    hits: Sequence[ScoredFact], query: str, texts: ToolTexts, *, ids: bool = False
) -> str:
    """The text the model reads for a recall, worded by ``texts.responses``; with
    ``ids``, each line ends with its fact's id (where a tool can forget it)."""
    said = texts.responses
    if not hits:
        return said.recall_empty.format(query=quote_text(query, in_quotes=True))
    lines = [said.recall_header]
    lines += [fact_line(n, hit.fact, texts, ids=ids) for n, hit in enumerate(hits, 1)]
    return "\n".join(lines)


def fact_line(n: int, fact: Fact, texts: ToolTexts, *, ids: bool = False) -> str:
    """One numbered fact as a tool shows it: category, quoted content, the mistake a
    correction replaced, and with ``ids`` its id (the 12 characters tables show)."""
    said = texts.responses
    mistake = fact.source_error
    avoid = said.recall_avoid.format(mistake=quote_text(mistake)) if mistake else ""
    line = said.recall_hit.format(
        n=n, category=fact.category.value, content=quote_text(fact.content), avoid=avoid
    )
    return line + (said.fact_id.format(id=fact.id[:SHORT_ID_CHARS]) if ids else "")


def invalid_arguments(error: ValidationError, texts: ToolTexts) -> str:
    """What the model reads when the tool schema refused its arguments."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors()
    )
    # The locations name the model's own argument keys: model-written text.
    return texts.responses.invalid_arguments.format(problems=quote_text(problems))


def _validation_error(texts: ToolTexts) -> Callable[[ValidationError], str]:
    return lambda error: invalid_arguments(error, texts)


def tool_error_text(exc: RecallmemError, texts: ToolTexts) -> str:
    """What the model reads when a memory call failed: the problem, and what to do."""
    said = texts.responses
    unconfigured = isinstance(exc, MissingScopeError)
    step = said.next_step_unconfigured if unconfigured else said.next_step_fix
    return said.error.format(problem=quote_text(str(exc)), next_step=step)


def _tool_error(exc: RecallmemError, texts: ToolTexts) -> ToolException:
    return ToolException(tool_error_text(exc, texts))


def turn_message_id(runtime: ToolRuntime | None) -> str | None:
    """The id of the user message whose turn a tool call is part of (None outside a run)."""
    state = runtime.state if runtime is not None else None
    messages = state.get("messages") if isinstance(state, Mapping) else None
    user, _ = current_turn(messages or [])
    return user.id if user is not None else None


def refusal_text(outcome: ProposalOutcome, texts: ToolTexts) -> str:
    """What the model reads when ``remember`` refused a fact: why (a secret's kind, never
    its text), and what to do instead of retrying."""
    said = texts.responses
    template = {"secret": said.refused_secret, "confidence": said.refused_confidence,
                "scope": said.refused_scope}.get(outcome.refusal or "", said.refused)  # fmt: skip
    return template.format(reason=quote_text(outcome.reason))


def remembered_text(outcome: ProposalOutcome, texts: ToolTexts) -> str:
    """What ``remember`` answers: saved, or already stored and confirmed; raises the
    refusal as a ToolException (an error result: the model should not retry)."""
    if outcome.fact is None:
        raise ToolException(refusal_text(outcome, texts))
    said = texts.responses.remembered if outcome.outcome == "added" else texts.responses.confirmed
    fact = outcome.fact
    return said.format(content=quote_text(fact.content), category=fact.category.value)


class MemoryToolkit(BaseToolkit):
    """``recall`` and ``remember`` over one :class:`~recallmem.Memory`.

    Args:
        memory: the memory to read and write.
        k: how many facts ``recall`` returns when the model does not say.
        prompt_dir: a directory whose ``tools.yaml`` overrides the shipped descriptions.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    k: int = Field(default=6, ge=1, le=20)
    prompt_dir: Path | None = None

    def get_tools(self) -> list[BaseTool]:
        """The two tools, ``recall`` first."""
        texts = load_tool_texts(self.prompt_dir or self.memory.config.prompt_dir)
        return [self._recall_tool(texts), self._remember_tool(texts)]

    def _recall_tool(self, texts: ToolTexts) -> StructuredTool:
        memory, default_k = self.memory, self.k
        floor = recall_floor(memory.config.recall_floor, memory.embeddings)

        def arguments(query: str, k: int | None, config: RunnableConfig) -> dict[str, Any]:
            scope = resolve_scope(config)
            return {"query": query, "user_id": scope.user_id, "agent_id": scope.agent_id,
                    "k": k or default_k, "timezone": scope.timezone,
                    "min_score": floor}  # fmt: skip

        def recall(
            query: str,
            k: int | None = None,
            categories: list[Category] | None = None,
            runtime: Runtime = None,
            *,
            config: RunnableConfig,
        ) -> tuple[str, list[ScoredFact]]:
            try:
                scope = resolve_scope(config)
                hits = memory.recall(**arguments(query, k, config), categories=categories)
            except RecallmemError as exc:
                raise _tool_error(exc, texts) from exc
            record = tool_record(scope, turn_message_id(runtime), query, hits)
            memory.record_retrieval(record)
            emit(RetrievalEvent.from_record(record, injected=True), config)
            return format_hits(hits, query, texts), hits

        return StructuredTool.from_function(
            func=recall,
            name="recall",
            description=texts.tools["recall"].description,
            args_schema=described(RecallInput, texts.tools["recall"].args),
            response_format="content_and_artifact",
            handle_tool_error=True,
            handle_validation_error=_validation_error(texts),
        )

    def _remember_tool(self, texts: ToolTexts) -> StructuredTool:
        memory = self.memory

        def remember(
            content: str,
            category: Category,
            confidence: float = 0.9,
            keywords: list[str] | None = None,
            questions: list[str] | None = None,
            runtime: Runtime = None,
            *,
            config: RunnableConfig,
        ) -> str:
            try:
                scope = resolve_scope(config)
                # A fact the model saves is about the user: every agent of the user sees it.
                outcome = memory.remember_proposed(
                    content, category=category, confidence=confidence, user_id=scope.user_id,
                    agent_id=None, learned_in=scope.agent_id, thread_id=scope.thread_id,
                    message_id=turn_message_id(runtime), keywords=keywords or (),
                    questions=questions or (),
                )  # fmt: skip
            except RecallmemError as exc:
                raise _tool_error(exc, texts) from exc
            return remembered_text(outcome, texts)

        return StructuredTool.from_function(
            func=remember,
            name="remember",
            description=texts.tools["remember"].description,
            args_schema=described(RememberInput, texts.tools["remember"].args),
            handle_tool_error=True,
            handle_validation_error=_validation_error(texts),
        )
