"""Scope rules: what is never stored, even when the user's words support it.

Permissions granted to the assistant ("you can push to main without asking") and the
assistant's statements about itself are not facts about the user. The prompt says so;
these patterns (data, in ``prompts/scope_rules.yaml``) hold the line when a model
proposes them anyway.

>>> load_scope_rules().violation("Allows the assistant to push directly to main")
'a permission granted to the assistant, not a fact about the user'
>>> load_scope_rules().violation("Prefers reports in Chinese") is None
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.prompts import compiled_patterns, load_data

_FLAGS = re.IGNORECASE | re.MULTILINE


class RuleSpec(BaseModel):
    """One rule: why it drops a fact, and its patterns per language."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str = Field(min_length=10)
    en: list[str] = Field(min_length=1)
    zh: list[str] = Field(min_length=1)

    _compile = field_validator("en", "zh")(compiled_patterns)


class ScopeRulesSpec(BaseModel):
    """``prompts/scope_rules.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["scope_rules"]
    version: str = Field(min_length=1)
    rules: dict[str, RuleSpec] = Field(min_length=1)


@dataclass(frozen=True)
class ScopeRules:
    """Compiled scope rules: (reason, patterns) pairs."""

    rules: tuple[tuple[str, tuple[re.Pattern[str], ...]], ...]

    def violation(self, content: str) -> str | None:
        """Why ``content`` must not be stored, or None."""
        for reason, patterns in self.rules:
            if any(p.search(content) for p in patterns):
                return reason
        return None


@lru_cache(maxsize=8)
def load_scope_rules(prompt_dir: Path | None = None) -> ScopeRules:
    """Load and compile ``prompts/scope_rules.yaml`` (cached per directory)."""
    spec = load_data("scope_rules", ScopeRulesSpec, prompt_dir)
    return ScopeRules(
        tuple(
            (rule.reason, tuple(re.compile(p, _FLAGS) for p in [*rule.en, *rule.zh]))
            for rule in spec.rules.values()
        )
    )
