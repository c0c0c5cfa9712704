"""Prompts are data: YAML files in ``prompts/``, validated when they load.

A chat prompt file declares its variables; a placeholder that is not declared, or a
declared variable that no message uses, is an error at load time, not a surprise at
render time. Literal braces are written doubled (``{{`` / ``}}``), as in LangChain.

>>> spec = ChatPromptSpec(name="hi", version="1", variables=["who"],
...                       messages=[PromptMessage(role="human", content="Hello {who}")])
>>> spec.render(who="Ada")
[('human', 'Hello Ada')]

Files are looked up first in an override directory (``MemoryConfig.prompt_dir`` or the
``prompt_dir`` argument), then in the files shipped with the package.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from langchain_core.prompts import ChatPromptTemplate
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from recallmem.errors import PromptError

PromptRole = Literal["system", "human", "ai"]  # a template message (threads.Role: a speaker)
M = TypeVar("M", bound=BaseModel)


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a template, ignoring doubled braces."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(text) if field}
    except ValueError as exc:
        raise PromptError(
            f"unbalanced braces in template: {exc}; write literal braces as {{{{ }}}}"
        ) from exc


class PromptMessage(BaseModel):
    """One message of a chat prompt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: PromptRole
    content: str = Field(min_length=1)


class ChatPromptSpec(BaseModel):
    """A versioned chat prompt whose variables are checked against its messages."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str = Field(min_length=1)
    description: str = ""
    variables: list[str]
    messages: list[PromptMessage] = Field(min_length=1)

    @model_validator(mode="after")
    def _variables_match_placeholders(self) -> ChatPromptSpec:
        used = set().union(*(placeholders(m.content) for m in self.messages))
        declared = set(self.variables)
        if undeclared := used - declared:
            raise ValueError(f"placeholders not declared in variables: {sorted(undeclared)}")
        if unused := declared - used:
            raise ValueError(f"variables declared but never used: {sorted(unused)}")
        return self

    @property
    def label(self) -> str:
        """``name@version``, recorded in each extracted fact's provenance."""
        return f"{self.name}@{self.version}"

    def render(self, **values: Any) -> list[tuple[str, str]]:
        """The messages with every variable filled in; a missing one is a PromptError."""
        if missing := set(self.variables) - values.keys():
            raise PromptError(f"prompt {self.label} needs values for {sorted(missing)}")
        return [(m.role, m.content.format(**values)) for m in self.messages]

    def to_chat_prompt(self) -> ChatPromptTemplate:
        """The same prompt as a LangChain ``ChatPromptTemplate``."""
        return ChatPromptTemplate.from_messages([(m.role, m.content) for m in self.messages])


class ToolText(BaseModel):
    """The description a planner reads for one tool, and one line per argument."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = Field(min_length=20)
    args: dict[str, str]


# Each tool response and the placeholders the tools fill in it.
TOOL_RESPONSES: dict[str, set[str]] = {
    "recall_header": set(),
    "recall_hit": {"n", "category", "content", "avoid"},
    "recall_avoid": {"mistake"},
    "recall_empty": {"query"},
    "fact_id": {"id"},
    "remembered": {"content", "category"},
    "confirmed": {"content", "category"},
    "forgotten": {"content", "category"},
    "already_forgotten": {"content", "category"},
    "list_header": set(),
    "list_more": {"offset"},
    "list_empty": set(),
    "refused_secret": {"reason"},
    "refused_confidence": {"reason"},
    "refused_scope": {"reason"},
    "refused": {"reason"},
    "error": {"problem", "next_step"},
    "invalid_arguments": {"problems"},
    "next_step_fix": set(),
    "next_step_unconfigured": set(),
    "next_step_failed": set(),
}


class ToolResponses(BaseModel):
    """What the tools answer the model; ``{placeholders}`` are filled by the tools.

    Every text is required, so a missing or misspelt one fails when the file loads and
    not at the first tool call; each may use only the placeholders its tool fills
    (``TOOL_RESPONSES``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    recall_header: str = Field(description="First line of a recall with hits.")
    recall_hit: str = Field(description="One hit: its rank, category, text, what to avoid.")
    recall_avoid: str = Field(description="The mistake a correction replaced, for {avoid}.")
    recall_empty: str = Field(description="A recall without hits.")
    remembered: str = Field(description="A new fact was stored.")
    confirmed: str = Field(description="The fact was already stored and is confirmed again.")
    fact_id: str = Field(description="A fact's id after its line, where a tool can act on it.")
    forgotten: str = Field(description="A fact was forgotten (MCP).")
    already_forgotten: str = Field(description="The fact had been forgotten already (MCP).")
    list_header: str = Field(description="First line of a listing (MCP).")
    list_more: str = Field(description="After a full page of a listing: where the next starts.")
    list_empty: str = Field(description="A listing with nothing in it (MCP).")
    refused_secret: str = Field(description="Not stored: the fact holds a secret.")
    refused_confidence: str = Field(description="Not stored: below the confidence threshold.")
    refused_scope: str = Field(description="Not stored: not a fact about the user.")
    refused: str = Field(description="Not stored, for another rule's {reason}.")
    error: str = Field(description="A failed call: what happened and what to do next.")
    invalid_arguments: str = Field(description="Arguments the tool schema refused.")
    next_step_fix: str = Field(description="{next_step} when the arguments were at fault.")
    next_step_unconfigured: str = Field(description="{next_step} when the run has no user.")
    next_step_failed: str = Field(description="{next_step} when memory itself failed.")

    @model_validator(mode="after")
    def _known_placeholders(self) -> ToolResponses:
        for key, allowed in TOOL_RESPONSES.items():
            if extra := placeholders(getattr(self, key)) - allowed:
                raise ValueError(f"responses.{key} uses unknown placeholders {sorted(extra)}")
        return self


class ToolTexts(BaseModel):
    """``prompts/tools.yaml``: the words that tell the planner when to call each tool,
    and what the tools answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["tools"]
    version: str
    tools: dict[str, ToolText]
    responses: ToolResponses


def _read_yaml(name: str, prompt_dir: Path | None) -> dict[str, Any]:
    filename = f"{name}.yaml"
    if prompt_dir is not None and (override := Path(prompt_dir) / filename).is_file():
        text = override.read_text(encoding="utf-8")
        where = str(override)
    else:
        resource = resources.files("recallmem._prompts").joinpath(filename)
        if not resource.is_file():
            raise PromptError(f"no prompt named {name!r} (looked for {filename})")
        text = resource.read_text(encoding="utf-8")
        where = f"recallmem prompts/{filename}"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PromptError(f"{where} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise PromptError(f"{where} must hold a mapping at the top level")
    data.setdefault("__where__", where)
    return data


def _validated(model: type[M], data: dict[str, Any]) -> M:
    where = data.pop("__where__")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise PromptError(f"{where} is malformed:\n{exc}") from exc


def load_data(name: str, model: type[M], prompt_dir: Path | None = None) -> M:
    """Load ``prompts/<name>.yaml`` into a strict model (pattern and rule files).

    An override in ``prompt_dir`` wins over the shipped file; any problem is a
    :class:`PromptError` that names the file.
    """
    return _validated(model, _read_yaml(name, prompt_dir))


def compiled_patterns(patterns: list[str], flags: int = 0) -> list[str]:
    """Check that every regular expression compiles (a pydantic validator's body)."""
    for pattern in patterns:
        try:
            re.compile(pattern, flags)
        except re.error as exc:
            raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from exc
    return patterns


@lru_cache(maxsize=64)
def load_prompt(name: str, prompt_dir: Path | None = None) -> ChatPromptSpec:
    """Load and validate the chat prompt ``prompts/<name>.yaml``."""
    return _validated(ChatPromptSpec, _read_yaml(name, prompt_dir))


@lru_cache(maxsize=8)
def load_tool_texts(prompt_dir: Path | None = None) -> ToolTexts:
    """Load and validate ``prompts/tools.yaml``."""
    return _validated(ToolTexts, _read_yaml("tools", prompt_dir))


def shipped_prompt_names() -> list[str]:
    """Names of every prompt file that ships with the package."""
    root = resources.files("recallmem._prompts")
    return sorted(p.name.removesuffix(".yaml") for p in root.iterdir() if p.name.endswith(".yaml"))
