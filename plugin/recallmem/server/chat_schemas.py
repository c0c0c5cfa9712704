"""The body of a chat request, bounded like every other body."""

from __future__ import annotations

import hashlib
from typing import Literal
from zoneinfo import available_timezones

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import InvalidInputError
from recallmem.limits import MAX_ID_CHARS, NOT_BLANK
from recallmem.retrieval.when import user_zone
from recallmem.secrets.detector import redact
from recallmem.server.schemas import ScopeId

MAX_MESSAGE_CHARS = 8000
# The schema lists the names the validator accepts, so a client (or a fuzzer) reading
# the schema never sends a "valid" zone that is refused.
ZONE_NAMES: tuple[str, ...] = tuple(sorted(available_timezones()))
MAX_MESSAGES = 100


class ChatMessage(BaseModel):
    """One message of the conversation so far."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=NOT_BLANK)
    id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Stable id; by default derived from the thread, position and text.",
    )


class ChatRequest(BaseModel):
    """The user's new message, with the conversation before it."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=NOT_BLANK)
    message_id: str | None = Field(
        default=None, min_length=1, max_length=MAX_ID_CHARS, description="Stable id."
    )
    history: list[ChatMessage] = Field(
        default_factory=list, max_length=MAX_MESSAGES, description="Earlier turns, oldest first."
    )
    thread_id: str | None = ScopeId
    agent_id: str | None = ScopeId
    user_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_ID_CHARS,
        description="Admin tokens only: the user to chat as. A user's token acts for itself.",
    )
    timezone: str | None = Field(
        default=None,
        description="The user's IANA timezone (e.g. Asia/Shanghai): where the block's date "
        "and a due date said in the turn ('due tomorrow') are. Default UTC.",
        json_schema_extra={"enum": [None, *ZONE_NAMES]},
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        try:
            user_zone(value)
        except InvalidInputError as error:
            raise ValueError(str(error)) from None
        return value


def history_message_id(thread_id: str, index: int, role: str, content: str) -> str:
    """A stable id for a message sent without one, so a resent turn is not queued twice.

    >>> history_message_id("t1", 0, "user", "hi") == history_message_id("t1", 0, "user", "hi")
    True
    """
    # Of the redacted text: the id is queued, and a digest of a password can be guessed.
    said = redact(content)
    digest = hashlib.sha256(f"{thread_id}\0{index}\0{role}\0{said}".encode()).hexdigest()
    return f"chat-{digest[:24]}"
