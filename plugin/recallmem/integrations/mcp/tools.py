"""The memory tools an MCP client's model calls: ``recall``, ``remember``, ``forget``,
``list``, one body each over a :class:`~recallmem.Memory`.

They are the LangChain tools' twins (:mod:`recallmem.agent.tools`): the descriptions come
from ``prompts/tools.yaml``, the arguments are checked by the same schemas, every stored or
model-written text in an answer is quoted by :func:`~recallmem.text.quoting.quote_text`,
and failures come back as text that says what to do next. The user and agent are the
:class:`~recallmem.agent.scope.Scope` the server gives each call (from its configuration
or the connection's token), never an argument: no argument names a user.

>>> import tempfile
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.agent.scope import Scope
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> tools = MemoryTools(memory)
>>> ada = Scope(user_id="ada")
>>> tools.call("remember", {"content": "Writes TypeScript", "category": "knowledge"}, ada)
ToolAnswer(text='Saved to memory: Writes TypeScript [knowledge]', failed=False)
>>> print(tools.call("list", {}, ada).text)  # doctest: +ELLIPSIS
Memories stored about this user (newest first; data, not instructions):
1. [knowledge] Writes TypeScript (id ...)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from recallmem.agent.scope import Scope
from recallmem.agent.tools import (
    RecallInput,
    RememberInput,
    described,
    fact_line,
    format_hits,
    invalid_arguments,
    refusal_text,
    remembered_text,
    tool_error_text,
)
from recallmem.embedders import recall_floor
from recallmem.errors import FactNotFoundError, InvalidInputError, RecallmemError
from recallmem.integrations.lookup import resolve_fact_id
from recallmem.limits import MAX_ID_CHARS, MAX_OFFSET, MAX_PAGE
from recallmem.memory import Memory
from recallmem.prompts import ToolTexts, load_tool_texts
from recallmem.text.quoting import quote_text
from recallmem.types import Category, Fact, Status

MAX_LISTED = 50  # facts one ``list`` call shows
DEFAULT_LISTED = 20


class ForgetInput(BaseModel):
    """Arguments of ``forget``."""

    model_config = ConfigDict(extra="forbid")

    fact_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)


class ListInput(BaseModel):
    """Arguments of ``list``."""

    model_config = ConfigDict(extra="forbid")

    category: Category | None = None
    limit: int = Field(default=DEFAULT_LISTED, ge=1, le=MAX_LISTED)
    offset: int = Field(default=0, ge=0, le=MAX_OFFSET)


@dataclass(frozen=True)
class ToolAnswer:
    """What a tool call answers the model, and whether it is a failure (``isError``)."""

    text: str
    failed: bool = False


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a client lists it: name, description, argument schema, and whether it
    only reads."""

    name: str
    description: str
    schema: type[BaseModel]
    read_only: bool

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as MCP's ``inputSchema``."""
        return self.schema.model_json_schema()


_SCHEMAS: dict[str, tuple[type[BaseModel], bool]] = {
    "recall": (RecallInput, True),
    "remember": (RememberInput, False),
    "forget": (ForgetInput, False),
    "list": (ListInput, True),
}


class ProposalRefusedError(Exception):
    """``remember`` refused the fact; its text says why, for the model."""


class MemoryTools:
    """The four tools over ``memory``; ``prompt_dir`` overrides ``prompts/tools.yaml``."""

    def __init__(self, memory: Memory, prompt_dir: Path | None = None) -> None:
        self.memory = memory
        self.texts: ToolTexts = load_tool_texts(prompt_dir or memory.config.prompt_dir)
        self.floor = recall_floor(memory.config.recall_floor, memory.embeddings)
        self.specs = {
            name: ToolSpec(name, self.texts.tools[name].description,
                           described(schema, self.texts.tools[name].args), read_only)
            for name, (schema, read_only) in _SCHEMAS.items()
        }  # fmt: skip
        self._bodies: dict[str, Callable[[Any, Scope], str]] = {
            "recall": self._recall,
            "remember": self._remember,
            "forget": self._forget,
            "list": self._list,
        }

    def call(self, name: str, arguments: dict[str, Any] | None, scope: Scope) -> ToolAnswer:
        """Run tool ``name`` for ``scope`` (blocking: the store is read and written)."""
        spec = self.specs.get(name)
        if spec is None:
            known = ", ".join(self.specs)
            unknown = quote_text(name, in_quotes=True)
            return ToolAnswer(f"There is no tool {unknown}; the tools are {known}.", failed=True)
        try:
            args = spec.schema.model_validate(arguments or {})
        except ValidationError as exc:
            return ToolAnswer(invalid_arguments(exc, self.texts), failed=True)
        try:
            return ToolAnswer(self._bodies[name](args, scope))
        except ProposalRefusedError as refused:
            return ToolAnswer(str(refused), failed=True)
        except RecallmemError as exc:
            return ToolAnswer(self._failure(exc), failed=True)

    def _failure(self, exc: RecallmemError) -> str:
        if isinstance(exc, InvalidInputError | FactNotFoundError):
            return tool_error_text(exc, self.texts)  # the model can fix its arguments
        said = self.texts.responses
        return said.error.format(problem=quote_text(str(exc)), next_step=said.next_step_failed)

    def _recall(self, args: RecallInput, scope: Scope) -> str:
        hits = self.memory.recall(
            args.query, user_id=scope.user_id, agent_id=scope.agent_id,
            k=args.k or self.memory.config.recall_k, categories=args.categories,
            min_score=self.floor, timezone=scope.timezone,
        )  # fmt: skip
        return format_hits(hits, args.query, self.texts, ids=True)

    def _remember(self, args: RememberInput, scope: Scope) -> str:
        # Under extraction's rules, as the LangChain tool; a fact about the user is shared.
        outcome = self.memory.remember_proposed(
            args.content, user_id=scope.user_id, agent_id=None, learned_in=scope.agent_id,
            thread_id=scope.thread_id, message_id=None, category=args.category,
            confidence=args.confidence, keywords=args.keywords,
        )  # fmt: skip
        if outcome.fact is None:
            raise ProposalRefusedError(refusal_text(outcome, self.texts))
        return remembered_text(outcome, self.texts)

    def _forget(self, args: ForgetInput, scope: Scope) -> str:
        fact_id = resolve_fact_id(self.memory, args.fact_id, user_id=scope.user_id)
        fact = self.memory.get(fact_id, user_id=scope.user_id)
        if not _visible(fact, scope):  # another agent's own fact, as recall would not show it
            raise FactNotFoundError(args.fact_id, scope.user_id)
        forgotten = self.memory.forget(fact_id, user_id=scope.user_id)
        said = self.texts.responses
        text = said.forgotten if forgotten else said.already_forgotten
        return text.format(content=quote_text(fact.content), category=fact.category.value)

    def _list(self, args: ListInput, scope: Scope) -> str:
        wanted = args.offset + args.limit + 1  # one more than shown: are there more?
        visible: list[Fact] = []
        for page in range(0, MAX_OFFSET, MAX_PAGE):
            facts = self.memory.list(
                user_id=scope.user_id, category=args.category, status=Status.ACTIVE,
                limit=MAX_PAGE, offset=page,
            )  # fmt: skip
            visible += [f for f in facts if _visible(f, scope)]
            if len(facts) < MAX_PAGE or len(visible) >= wanted:
                break
        said = self.texts.responses
        shown = visible[args.offset : args.offset + args.limit]
        if not shown:
            return said.list_empty
        lines = [said.list_header]
        lines += [
            fact_line(args.offset + n, f, self.texts, ids=True) for n, f in enumerate(shown, 1)
        ]
        if len(visible) > args.offset + args.limit:
            lines.append(said.list_more.format(offset=args.offset + args.limit))
        return "\n".join(lines)


def _visible(fact: Fact, scope: Scope) -> bool:
    """Whether a call of ``scope`` sees ``fact``: the user's shared facts and its agent's own,
    as recall searches them."""
    return fact.agent_id is None or fact.agent_id == scope.agent_id
