"""The shapes of request and response bodies, with their size bounds.

Facts, scored facts, profiles and revisions travel as the library's own models
(:mod:`recallmem.types`), so the API and the export format say the same thing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field

from recallmem.errors import InvalidInputError
from recallmem.facts.validation import check_valid_until
from recallmem.limits import (
    DEFAULT_K,
    EARLIEST_TIME,
    MAX_CONTENT_CHARS,
    MAX_ID_CHARS,
    MAX_IMPORT_ROWS,
    MAX_K,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_PAGE,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    MAX_SUMMARY_CHARS,
    NOT_BLANK,
    SCOPE_ID_PATTERN,
    TIMES_END,
)
from recallmem.types import (
    Category,
    Fact,
    Profile,
    Revision,
    ScoredFact,
    SourceKind,
    Status,
)

# The bounds are recallmem.limits', shared with the library, the CLI and the inspector.
MAX_PAGE_SIZE = MAX_PAGE
MAX_SEARCH_K = MAX_K

ScopeId = Field(default=None, pattern=SCOPE_ID_PATTERN)
Keyword = Annotated[str, Field(min_length=1, max_length=MAX_KEYWORD_CHARS, pattern=NOT_BLANK)]
KEYWORDS_HELP = "A few short search words (say, in the user's other language) matched too."
Question = Annotated[str, Field(min_length=1, max_length=MAX_QUESTION_CHARS, pattern=NOT_BLANK)]
QUESTIONS_HELP = (
    "Search keys: questions the fact answers (in the user's language and the other) and "
    "perhaps a paraphrase, embedded with it; without any, the keying step writes some."
)


def _in_range(value: datetime | None) -> datetime | None:
    # The library's check (a 400 there); in a body, a 422 naming the field like the rest.
    try:
        return check_valid_until(value)
    except InvalidInputError as error:
        raise ValueError(str(error)) from None


ValidUntil = Annotated[AwareDatetime | None, AfterValidator(_in_range)]
TIME_RANGE = f"from {EARLIEST_TIME:%Y-%m-%d} up to {TIMES_END:%Y-%m-%d} UTC, else 422"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FactCreate(_Body):
    """A fact written by hand (its source is recorded as ``manual``)."""

    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS, pattern=NOT_BLANK)
    category: Category
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    agent_id: str | None = ScopeId
    thread_id: str | None = ScopeId
    pinned: bool = False
    quote: str | None = Field(
        default=None, max_length=MAX_CONTENT_CHARS, description="Evidence in the user's words."
    )
    valid_until: ValidUntil = Field(
        default=None,
        description=f"When it stops being true (with an offset; {TIME_RANGE}); past: expired.",
    )
    keywords: list[Keyword] = Field(default=[], max_length=MAX_KEYWORDS, description=KEYWORDS_HELP)
    questions: list[Question] = Field(
        default=[], max_length=MAX_QUESTIONS, description=QUESTIONS_HELP
    )


class FactMove(_Body):
    """Where a fact goes: the user's shared memory (``agent_id`` null), seen by every agent,
    or one agent's own."""

    agent_id: str | None = Field(max_length=MAX_ID_CHARS, pattern=SCOPE_ID_PATTERN)


class FactPatch(_Body):
    """Fields to change; new content is re-embedded and the old text kept in history."""

    content: str | None = Field(
        default=None, min_length=1, max_length=MAX_CONTENT_CHARS, pattern=NOT_BLANK
    )
    category: Category | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    pinned: bool | None = None
    status: Status | None = None
    reason: str | None = Field(default=None, max_length=MAX_ID_CHARS)
    valid_until: ValidUntil = Field(
        default=None,
        description=f"A new end (with an offset; {TIME_RANGE}): a later one brings an expired "
        "fact back.",
    )
    keywords: list[Keyword] | None = Field(
        default=None, max_length=MAX_KEYWORDS, description=f"{KEYWORDS_HELP} [] clears them."
    )
    questions: list[Question] | None = Field(
        default=None,
        max_length=MAX_QUESTIONS,
        description="Replaces the search keys; [] clears them for good. New content without "
        "them drops the old keys (the keying step writes new ones).",
    )

    def changes_nothing(self) -> bool:
        """Whether no field would change (the patch is then a read)."""
        changes = (self.content, self.category, self.confidence, self.pinned, self.status,
                   self.valid_until, self.keywords, self.questions)  # fmt: skip
        return all(value is None for value in changes)


class FactPage(BaseModel):
    """One page of facts, newest first; ``next_offset`` is null on the last page."""

    items: list[Fact]
    limit: int
    offset: int
    next_offset: int | None


class Evidence(BaseModel):
    """A source of a fact: who wrote it, where it was said and the user's words that
    support it. ``kind``: ``manual`` (a person or a program: the API, the CLI, the
    inspector), ``planner`` (an agent's model, through the ``remember`` tool; its
    ``message_ids`` name the user message the call answered), ``extraction`` (the model
    ``extractor`` names), ``consolidation`` or ``unknown``."""

    kind: SourceKind
    thread_id: str | None
    message_ids: list[str]
    quote: str | None
    at: datetime
    extractor: str | None
    prompt_version: str | None


class FactDetail(BaseModel):
    """A fact with its evidence, its edit history and its supersede lineage.

    ``lineage`` runs oldest first: the facts it replaced, this fact, then the facts
    that replaced it (following ``supersedes`` / ``superseded_by``).
    """

    fact: Fact
    source: SourceKind = Field(
        description="Who first wrote the fact: the kind of its oldest recorded source."
    )
    evidence: list[Evidence]
    history: list[Revision]
    lineage: list[Fact]


class SearchRequest(_Body):
    """A recall query."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=NOT_BLANK)
    k: int | None = Field(default=None, ge=1, le=MAX_SEARCH_K, description="Default: recall_k.")
    agent_id: str | None = ScopeId
    categories: list[Category] | None = Field(default=None, max_length=len(Category))
    include_inactive: bool = False
    min_score: float | None = Field(default=None, ge=0.0, le=1.0)


class SearchResult(BaseModel):
    """Ranked hits, each with the parts its score was made of."""

    query: str
    hits: list[ScoredFact]
    took_ms: float
    floor: float = Field(
        description="The recall floor: hits scoring below it stay out of the memory block "
        "and the recall tool (the configured recall_floor, else the embedder's)"
    )


class ExplainRequest(_Body):
    """A recall query and one fact: where does that fact rank for it, and why (all
    candidates are ranked, with no score floor)."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, pattern=NOT_BLANK)
    fact_id: str = Field(min_length=1, max_length=MAX_ID_CHARS)
    k: int = Field(
        default=DEFAULT_K, ge=1, le=MAX_SEARCH_K, description="The top k to compare with."
    )
    agent_id: str | None = ScopeId
    categories: list[Category] | None = Field(default=None, max_length=len(Category))
    include_inactive: bool = False


class Explanation(BaseModel):
    """One fact's place in a recall: its rank among the first ``depth`` candidates, its
    score parts and weights, and the score it had to beat to be in the top ``k``."""

    query: str
    fact: Fact
    k: int
    depth: int = Field(description="How many ranked candidates were searched for the fact.")
    rank: int | None = Field(description="1 is best; null when not among the first depth.")
    in_top_k: bool
    hit: ScoredFact | None = Field(description="The fact's score, parts and weights.")
    kth_score: float | None = Field(description="The score of the k-th hit (the bar to pass).")
    reason: str = Field(description="Why it ranked where it did, or why it was not ranked.")


class SectionIn(_Body):
    """One profile section's new summary."""

    summary: str = Field(default="", max_length=MAX_SUMMARY_CHARS)


class ProfileIn(_Body):
    """A whole profile; sections left out become empty. Each section is an object whose
    text is ``summary``."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "work_context": {"summary": "Front-end team, React and TypeScript"},
                    "top_of_mind": {"summary": "Vue migration due in March"},
                }
            ]
        }
    )

    work_context: SectionIn = SectionIn()
    personal_context: SectionIn = SectionIn()
    top_of_mind: SectionIn = SectionIn()
    recent: SectionIn = SectionIn()
    earlier: SectionIn = SectionIn()
    background: SectionIn = SectionIn()


class Affected(BaseModel):
    """How many facts an operation changed or erased."""

    affected: int
    purged: bool


class Health(BaseModel):
    """Liveness and the shape of the deployment (no user data)."""

    status: str = Field(description="'ok', or 'degraded' when a part listed in problems fails")
    version: str
    store: str
    auth: str
    problems: list[str] = Field(default_factory=list, description="What fails, and what to do")


class FactCounts(BaseModel):
    """Facts by status (per-status counts are given for one user, not for all users)."""

    active: int | None = None
    superseded: int | None = None
    done: int | None = None
    deleted: int | None = None
    total: int


class RecallStats(BaseModel):
    """Recalls served by this process: how many, how many found something, how fast."""

    count: int
    with_hits: int
    hit_rate: float | None
    p50_ms: float | None
    p95_ms: float | None


class ExtractionStats(BaseModel):
    """Extraction model calls and their token cost, as far as this process knows."""

    calls: int
    input_tokens: int
    output_tokens: int
    keying_calls: int = Field(default=0, description="Of the calls, the keying step's.")


class Metrics(BaseModel):
    """Counts, recall latency and hit rate, extraction cost: the caller's user, or all."""

    scope: str
    facts: FactCounts
    recall: RecallStats
    extraction: ExtractionStats


class CarriedEmbeddings(BaseModel):
    """The facts' vectors an export carries (``GET /export?embeddings=true``): an import
    into a store of the same embedder and dimension keeps them, any other embeds."""

    embedder: str
    dimension: int = Field(gt=0)
    encoding: Literal["float32-le-base64"]
    vectors: dict[str, str] = Field(description="fact id: its vector, float32 LE, base64")


class ExportDocument(BaseModel):
    """The versioned export format (documentation of the import body; the route itself
    reads the JSON and validates it row by row, so that bad rows can be named)."""

    format: Literal["recallmem.export"]
    version: Literal[1]
    exported_at: str | None = None
    user_id: str | None = None
    facts: list[Fact] = Field(max_length=MAX_IMPORT_ROWS)
    profiles: list[Profile] = []
    embeddings: CarriedEmbeddings | None = None
