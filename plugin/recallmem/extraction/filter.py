"""What of a conversation is worth extracting from: the user's words and final replies.

Pure. Tool calls and tool results, system prompts, our own injected ``<memory>`` blocks
and the middleware's hidden notes (memory must never be re-extracted from itself),
acknowledgements ("ok", "thanks",
"好的") and upload or attachment narration are dropped; secrets are redacted before
anything is queued or shown to a model. The word lists and patterns are data, in
``prompts/filter.yaml``.

>>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
>>> kept = filter_messages([
...     HumanMessage("<memory>Prefers tea</memory>", id="m0"),
...     HumanMessage("I'm a front-end dev, I write TypeScript", id="m1"),
...     AIMessage("", tool_calls=[{"name": "recall", "args": {}, "id": "c1"}], id="m2"),
...     ToolMessage("[]", tool_call_id="c1", id="m3"),
...     AIMessage("Noted: front-end and TypeScript.", id="m4"),
...     HumanMessage("thanks!", id="m5"),
... ])
>>> [(u.id, u.role) for u in kept]
[('m1', 'user'), ('m4', 'assistant')]
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage
from langchain_core.messages.utils import convert_to_messages
from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import InvalidInputError
from recallmem.extraction.threads import SAID_AT
from recallmem.extraction.threads import Role as Role  # re-exported: it used to live here
from recallmem.extraction.threads import Utterance as Utterance
from recallmem.facts.validation import check_said_at
from recallmem.prompts import compiled_patterns, load_data
from recallmem.secrets.detector import SecretRules, load_secret_rules, redact
from recallmem.text.quoting import stored_text

MessageLike = BaseMessage | Mapping[str, Any]
_FLAGS = re.IGNORECASE | re.MULTILINE
_ACK_SPLIT = re.compile(r"[\s\W_]+", re.UNICODE)
_BLANK_LINES = re.compile(r"\n\s*\n\s*\n+")
_OUR_MARKER = "recallmem"  # additional_kwargs key of messages the middleware adds


class ByLanguage(BaseModel):
    """A list per language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    zh: list[str] = Field(min_length=1)


class NarrationPatterns(ByLanguage):
    """Regular expressions per language; each must compile."""

    _compile = field_validator("en", "zh")(compiled_patterns)


class FilterSpec(BaseModel):
    """``prompts/filter.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["filter"]
    version: str = Field(min_length=1)
    acknowledgements: ByLanguage
    injected_blocks: list[str] = Field(min_length=1)
    narration: NarrationPatterns

    @field_validator("injected_blocks")
    @classmethod
    def _tag_names(cls, tags: list[str]) -> list[str]:
        if bad := [t for t in tags if not re.fullmatch(r"[A-Za-z][\w\-]*", t)]:
            raise ValueError(f"not tag names: {bad}")
        return tags


@dataclass(frozen=True)
class FilterRules:
    """Compiled filter rules, plus the secret rules applied to what is kept."""

    acknowledgements: frozenset[str]
    removals: tuple[re.Pattern[str], ...]
    secrets: SecretRules

    def clean(self, text: str) -> str:
        """``text`` without injected blocks, narration and secrets, as it is stored (no
        terminal escapes, controls or bidi overrides: ``text.quoting.stored_text``)."""
        text = stored_text(text)
        for pattern in self.removals:
            text = pattern.sub("", text)
        text = _BLANK_LINES.sub("\n\n", redact(text, self.secrets))
        return text.strip()

    def is_acknowledgement(self, text: str) -> bool:
        """Whether ``text`` is made only of acknowledgement words."""
        words = [w for w in _ACK_SPLIT.split(text.casefold()) if w]
        if not words or len(words) > 6:
            return not words
        joined = " ".join(words)
        if joined in self.acknowledgements or "".join(words) in self.acknowledgements:
            return True
        return all(w in self.acknowledgements for w in words)


@lru_cache(maxsize=8)
def load_filter_rules(prompt_dir: Path | None = None) -> FilterRules:
    """Load and compile ``prompts/filter.yaml`` and ``prompts/secrets.yaml``."""
    spec = load_data("filter", FilterSpec, prompt_dir)
    blocks = [
        re.compile(rf"<{tag}\b[^>]*>[\s\S]*?(?:</{tag}\s*>|\Z)", re.IGNORECASE)
        for tag in spec.injected_blocks
    ]
    narration = [re.compile(p, _FLAGS) for p in [*spec.narration.en, *spec.narration.zh]]
    acks = {" ".join(_ACK_SPLIT.split(a.casefold())).strip() for a in
            [*spec.acknowledgements.en, *spec.acknowledgements.zh]}  # fmt: skip
    return FilterRules(frozenset(acks), (*blocks, *narration), load_secret_rules(prompt_dir))


def as_messages(messages: Sequence[MessageLike]) -> list[BaseMessage]:
    """LangChain messages from messages or ``{"role": ..., "content": ...}`` dicts."""
    if isinstance(messages, BaseMessage | Mapping | str):
        raise InvalidInputError("messages must be a list of messages, not a single one")
    try:
        return convert_to_messages([dict(m) if isinstance(m, Mapping) else m for m in messages])
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise InvalidInputError(
            f"could not read the messages: {exc}. Pass LangChain messages or dicts with "
            "'role' (user/assistant/system/tool) and 'content'."
        ) from exc


def _ours(message: BaseMessage) -> bool:
    # The agent middleware marks every message it adds (memory blocks, cue notes) this
    # way; they carry memory or instructions, never the user's words.
    marker = message.additional_kwargs.get(_OUR_MARKER)
    return isinstance(marker, Mapping) and bool(marker.get("hidden"))


def _role(message: BaseMessage) -> Role | None:
    if _ours(message):
        return None
    if isinstance(message, HumanMessage):
        return "user"
    if isinstance(message, AIMessage):
        # A reply that calls tools is an intermediate step, not the final answer.
        return None if (message.tool_calls or message.invalid_tool_calls) else "assistant"
    if isinstance(message, ChatMessage):
        return {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}.get(
            message.role
        )  # type: ignore[return-value]
    return None


def message_id(role: str, content: str, given: str | None) -> str:
    """The message's own id, or a stable one derived from its role and text."""
    if given:
        return str(given)
    digest = hashlib.blake2b(f"{role}\n{content}".encode(), digest_size=8).hexdigest()
    return f"h{digest}"


def _said_at(message: BaseMessage, position: int, default: float | None) -> float | None:
    """When the message says it was said (its ``said_at`` metadata), else ``default``."""
    given = message.additional_kwargs.get(SAID_AT)
    if given is None:
        return default
    said = check_said_at(given, f"{SAID_AT} of message {position}")
    return said.timestamp() if said else default


def filter_messages(
    messages: Sequence[MessageLike],
    rules: FilterRules | None = None,
    *,
    said_at: datetime | str | None = None,
) -> list[Utterance]:
    """The user's words and final assistant replies worth extracting from, cleaned.

    Each keeps when it was said: its own ``said_at`` metadata, else ``said_at`` (the
    whole transcript's time), else none (the queue takes the time it arrives).
    """
    rules = rules or load_filter_rules()
    transcript = check_said_at(said_at)
    default = transcript.timestamp() if transcript else None
    kept: list[Utterance] = []
    for position, message in enumerate(as_messages(messages), 1):
        when = _said_at(message, position, default)  # checked even if the message is dropped
        role = _role(message)
        if role is None:
            continue
        text = rules.clean(message.text)
        if not text or rules.is_acknowledgement(text):
            continue
        # The id is derived from the cleaned text: a hash of the raw one would put a
        # digest of any secret it held into the queue.
        message_key = message_id(role, text, message.id)
        kept.append(Utterance(id=message_key, role=role, content=text, said_at=when))
    return kept
