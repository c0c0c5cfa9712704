"""The vocabulary every stage speaks: facts, their provenance, scores and profiles.

All timestamps are timezone-aware UTC. Models are immutable: a change is a new copy
(``fact.model_copy(update=...)``), so a fact handed to a caller never mutates under it.

>>> fact = Fact(content="Prefers reports in Chinese", category="preference", user_id="u1")
>>> fact.status, fact.confidence
(<Status.ACTIVE: 'active'>, 0.9)
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import InvalidInputError

# Re-exported: the limit a Fact's content is held to.
from recallmem.limits import MAX_CONTENT_CHARS as MAX_CONTENT_CHARS
from recallmem.limits import check_keywords, check_questions
from recallmem.text.quoting import stored_text


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    # A naive timestamp is ambiguous; we refuse to guess its zone.
    if value.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware (use datetime.now(UTC))")
    try:
        return value.astimezone(UTC)
    except OverflowError:  # a ValueError is reported as invalid input, not a crash
        raise ValueError(
            f"timestamp {value.isoformat()} is outside the calendar once in UTC (years 1-9999)"
        ) from None


UtcDatetime = Annotated[datetime, AfterValidator(_as_utc)]
# Text as stored: no terminal escapes, controls or bidi overrides (text.quoting.stored_text).
StoredText = Annotated[str, AfterValidator(stored_text)]


class Category(StrEnum):
    """What kind of thing a fact says about the user."""

    IDENTITY = "identity"
    PREFERENCE = "preference"
    KNOWLEDGE = "knowledge"
    CONTEXT = "context"
    BEHAVIOR = "behavior"
    GOAL = "goal"
    TODO = "todo"
    DECISION = "decision"
    CORRECTION = "correction"


class Status(StrEnum):
    """Lifecycle of a fact. Only ``active`` facts are recalled unless asked otherwise."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DONE = "done"
    DELETED = "deleted"
    FADED = "faded"  # decayed below ``fade_below``: out of recall, restorable, purged later
    EXPIRED = "expired"  # past its ``valid_until``: kept for audit (recallmem.lifecycle)


MANUAL_SOURCE = "manual"  # Source.extractor of a write by a person or a program
PLANNER_SOURCE = "planner"  # ... by an agent's model, through the remember tool
DEDUP_SOURCE = "dedup"  # ... by consolidation without a model
SourceKind = Literal["manual", "planner", "extraction", "consolidation", "unknown"]
_KIND_OF: dict[str | None, SourceKind] = {
    MANUAL_SOURCE: "manual",
    PLANNER_SOURCE: "planner",
    DEDUP_SOURCE: "consolidation",
    None: "unknown",
}


class Source(BaseModel):
    """Where a fact came from: the thread, the messages and the quoted evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    thread_id: str | None = None
    message_ids: tuple[str, ...] = ()
    quote: StoredText | None = Field(
        default=None, description="The user's own words supporting it."
    )
    at: UtcDatetime = Field(default_factory=utcnow)
    extractor: str | None = Field(
        default=None,
        description=(
            "Who wrote it: 'manual' (a person or a program: the API, the CLI, the inspector, "
            "Memory.remember), 'planner' (an agent's model, through the remember tool), "
            "'dedup' (consolidation without a model), or the name of the model that "
            "extracted or merged it."
        ),
    )
    prompt_version: str | None = None
    agent_id: str | None = Field(
        default=None,
        description="The agent in whose run it was learned (the fact's scope may be shared).",
    )

    @property
    def kind(self) -> SourceKind:
        """The kind of writer ``extractor`` names (a model's name says extraction,
        unless its prompt was consolidation's).

        >>> Source(extractor="planner").kind, Source(extractor="gpt-4o-mini").kind
        ('planner', 'extraction')
        """
        if self.extractor in _KIND_OF:
            return _KIND_OF[self.extractor]
        merged = (self.prompt_version or "").startswith("consolidate@")
        return "consolidation" if merged else "extraction"


class Revision(BaseModel):
    """An earlier text of a fact, kept when the fact is edited."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: StoredText
    category: Category
    at: UtcDatetime
    reason: StoredText | None = None


class Origin(BaseModel):
    """Where a copied fact was copied from (``Memory.copy``): the scope and the fact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    agent_id: str | None = None
    fact_id: str
    at: UtcDatetime = Field(default_factory=utcnow)


Placement = tuple[tuple[str, ...], str]  # a LangGraph store namespace and key


class StoreItem(BaseModel):
    """The LangGraph store item a fact holds (``recallmem.integrations.langgraph``): its
    value, whole.

    ``aliases`` are other namespace/key pairs whose puts confirmed this fact as a duplicate.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    aliases: tuple[Placement, ...] = ()


class Fact(BaseModel):
    """One typed memory about a user, with its scope, provenance and lifecycle."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    content: StoredText = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    category: Category
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    user_id: str = Field(min_length=1)
    agent_id: str | None = None
    thread_id: str | None = None
    sources: tuple[Source, ...] = ()
    source_error: StoredText | None = Field(
        default=None, description="For a correction: the wrong approach to avoid."
    )
    status: Status = Status.ACTIVE
    supersedes: str | None = None
    superseded_by: str | None = None
    pinned: bool = False
    confirmations: int = Field(default=0, ge=0)
    history: tuple[Revision, ...] = ()
    created_at: UtcDatetime = Field(default_factory=utcnow)
    updated_at: UtcDatetime = Field(default_factory=utcnow)
    last_accessed_at: UtcDatetime | None = None
    last_confirmed_at: UtcDatetime | None = None
    valid_until: UtcDatetime | None = Field(
        default=None,
        description="When a time-bound fact stops being true; from then on it is not recalled.",
    )
    item: StoreItem | None = Field(
        default=None, description="Set when the fact was written through a LangGraph store."
    )
    merged_from: tuple[str, ...] = Field(
        default=(), description="Ids of the facts consolidated into this one (superseded)."
    )
    copied_from: Origin | None = Field(
        default=None, description="Set on a copy: the fact and scope it was copied from."
    )
    keywords: tuple[str, ...] = Field(
        default=(),
        description=(
            "A few short search words (often in the user's other language) indexed "
            "lexically with the content; data for recall, never shown as instructions."
        ),
    )
    questions: tuple[str, ...] = Field(
        default=(),
        description=(
            "Search keys: short questions the fact answers, in the user's language and the "
            "other, and perhaps a paraphrase in the other language; embedded with the "
            "content so that the user's own words find it; never shown to a model."
        ),
    )
    keyed_by: str | None = Field(
        default=None,
        description=(
            "Who wrote ``questions``: 'given' (passed with the fact or set by an edit; never "
            "rewritten by the keying step), else the prompt and model that wrote them "
            "('keys@1 gpt-4o-mini'); None: not keyed yet."
        ),
    )

    @field_validator("content")
    @classmethod
    def _content_not_blank(cls, value: str) -> str:
        stripped = value.strip()
        if not stripped:
            raise ValueError("content is blank; a fact needs one self-contained sentence")
        return stripped

    @field_validator("keywords", mode="before")
    @classmethod
    def _keywords_checked(cls, value: Any) -> tuple[str, ...]:
        try:
            return check_keywords(value)
        except InvalidInputError as exc:  # pydantic reports a ValueError as a field error
            raise ValueError(str(exc)) from None

    @field_validator("questions", mode="before")
    @classmethod
    def _questions_checked(cls, value: Any) -> tuple[str, ...]:
        try:
            return check_questions(value)
        except InvalidInputError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("agent_id", "thread_id")
    @classmethod
    def _empty_scope_is_none(cls, value: str | None) -> str | None:
        return value or None


class ScoreParts(BaseModel):
    """Why a fact ranked where it did; each part is in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    dense: float = 0.0
    lexical: float = 0.0
    recency: float = 0.0
    confidence: float = 0.0
    time: float = Field(default=0.0, description="Match with the time the query names, if any.")
    newer: float = Field(
        default=0.0,
        description="The lift that put a fact stating a change just above the older fact it "
        "replaces (recallmem.retrieval.newer_first); 0 for most hits.",
    )
    key: str | None = Field(
        default=None,
        description="The fact's search key (Fact.questions) sharing most words with the "
        "query, if any shares one: which key matched.",
    )


class ScoreWeights(BaseModel):
    """What each part of a score counted for this query: ``score = sum(weight * part)``."""

    model_config = ConfigDict(frozen=True)

    dense: float = 0.0
    lexical: float = 0.0
    recency: float = 0.0
    confidence: float = 0.0
    time: float = 0.0
    newer: float = 0.0


class ScoredFact(BaseModel):
    """A recalled fact, its final score, the parts the score was made of and their weights.

    ``weights`` is set for hits of a ranked recall (``Memory.recall``); the score is then
    the weighted sum of the parts, to rounding.
    """

    model_config = ConfigDict(frozen=True)

    fact: Fact
    score: float
    parts: ScoreParts
    weights: ScoreWeights | None = None


PROFILE_SECTIONS = (
    "work_context",
    "personal_context",
    "top_of_mind",
    "recent",
    "earlier",
    "background",
)


class ProfileSection(BaseModel):
    """One short summary of the user, with when it was last rewritten."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    summary: StoredText = ""
    updated_at: UtcDatetime | None = None


class Profile(BaseModel):
    """A per-user (and optionally per-agent) summary, injected before the facts."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    agent_id: str | None = None
    work_context: ProfileSection = ProfileSection()
    personal_context: ProfileSection = ProfileSection()
    top_of_mind: ProfileSection = ProfileSection()
    recent: ProfileSection = ProfileSection()
    earlier: ProfileSection = ProfileSection()
    background: ProfileSection = ProfileSection()

    def sections(self) -> dict[str, ProfileSection]:
        """The non-empty sections, in display order."""
        return {
            name: section
            for name in PROFILE_SECTIONS
            if (section := getattr(self, name)).summary.strip()
        }


ERASED_USER = "(erased)"  # the origin of a copy whose source user was erased


def without_origin(fact: Fact) -> Fact:
    """A copy whose source user was erased: its origin names no user, agent or thread.

    >>> copy = Fact(content="Writes Go", category="knowledge", user_id="bob",
    ...             copied_from=Origin(user_id="ada", agent_id="coder", fact_id="f1"),
    ...             sources=(Source(thread_id="t1", message_ids=("m1",), quote="I write Go"),))
    >>> erased = without_origin(copy)
    >>> erased.copied_from.user_id, erased.copied_from.agent_id, erased.sources[0].thread_id
    ('(erased)', None, None)
    """
    origin = fact.copied_from
    sources = tuple(s.model_copy(update={"thread_id": None, "message_ids": ()})
                    for s in fact.sources)  # fmt: skip
    if origin is not None:
        origin = origin.model_copy(update={"user_id": ERASED_USER, "agent_id": None})
    return fact.model_copy(update={"copied_from": origin, "sources": sources})


class TokenUsage(BaseModel):
    """Tokens spent on model calls (as the provider reported them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )
