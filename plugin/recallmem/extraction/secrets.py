"""Secrets are never stored: redact them before anything is queued, refuse facts holding one.

Two kinds of patterns, as data in ``prompts/secrets.yaml``: tokens recognisable by their
shape (``sk-...``, ``ghp_...``, private-key blocks, JWTs) and values named by a label
("my password is ...", "密码是 ..."), where only the value is the secret.

>>> redact("my OpenAI key is sk-proj-abcdefghijklmnopqrstuv, keep it")
'my OpenAI key is [REDACTED], keep it'
>>> redact("我的密码是 hunter2，帮我记住")
'我的密码是 [REDACTED]，帮我记住'
>>> find_secret("The password is stored in 1Password") is None
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
_EXPLICIT = re.compile(r"[:=：]")


class AssignmentPatterns(BaseModel):
    """Label-then-value patterns per language; each must define the group ``value``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    zh: list[str] = Field(min_length=1)

    @field_validator("en", "zh")
    @classmethod
    def _named_value(cls, patterns: list[str]) -> list[str]:
        for pattern in compiled_patterns(patterns):
            if "value" not in re.compile(pattern).groupindex:
                raise ValueError(f"pattern {pattern!r} has no (?P<value>...) group")
        return patterns


class SecretsSpec(BaseModel):
    """``prompts/secrets.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["secrets"]
    version: str = Field(min_length=1)
    redaction: str = Field(min_length=1)
    tokens: list[str] = Field(min_length=1)
    assignments: AssignmentPatterns
    ignore_values: list[str] = Field(default_factory=list)

    _tokens_compile = field_validator("tokens")(compiled_patterns)


@dataclass(frozen=True)
class SecretRules:
    """Compiled secret patterns."""

    redaction: str
    tokens: tuple[re.Pattern[str], ...]
    assignments: tuple[re.Pattern[str], ...]
    ignore_values: frozenset[str]

    def _ignorable(self, match: re.Match[str]) -> bool:
        # "the token is expired" names no secret; "token: expired" may well be one.
        label = match.string[match.start() : match.start("value")]
        return match.group("value").casefold() in self.ignore_values and not _EXPLICIT.search(label)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where the secrets in ``text`` are, sorted and merged."""
        found = [m.span() for p in self.tokens for m in p.finditer(text)]
        for pattern in self.assignments:
            for match in pattern.finditer(text):
                if not self._ignorable(match):
                    found.append(match.span("value"))
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged


@lru_cache(maxsize=8)
def load_secret_rules(prompt_dir: Path | None = None) -> SecretRules:
    """Load and compile ``prompts/secrets.yaml`` (cached per directory)."""
    spec = load_data("secrets", SecretsSpec, prompt_dir)
    return SecretRules(
        redaction=spec.redaction,
        tokens=tuple(re.compile(p, _FLAGS) for p in spec.tokens),
        assignments=tuple(
            re.compile(p, _FLAGS) for p in [*spec.assignments.en, *spec.assignments.zh]
        ),
        ignore_values=frozenset(v.casefold() for v in [*spec.ignore_values, spec.redaction]),
    )


def redact(text: str, rules: SecretRules | None = None) -> str:
    """``text`` with every secret replaced by the redaction marker."""
    rules = rules or load_secret_rules()
    pieces: list[str] = []
    last = 0
    for start, end in rules.spans(text):
        pieces += [text[last:start], rules.redaction]
        last = end
    return "".join([*pieces, text[last:]])


def find_secret(text: str, rules: SecretRules | None = None) -> str | None:
    """The first secret (or redaction marker) in ``text``, else None.

    A fact that names a redacted secret is refused as well: it would store that a
    secret exists next to the words that led to it.
    """
    rules = rules or load_secret_rules()
    if rules.redaction.casefold() in text.casefold():
        return rules.redaction
    spans = rules.spans(text)
    return text[spans[0][0] : spans[0][1]] if spans else None
