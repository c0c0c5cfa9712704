"""The secret detector: one set of rules for every path that writes or shows text.

Rules are data in ``prompts/secrets.yaml``: tokens recognisable by their shape
(``sk-...``, ``AKIA...``, private-key blocks, JWTs), values named by a label ("my email
password is ...", ``DB_PASSWORD=...``, "密码是 ..."), where only the value is the secret,
and numbers that pass a checksum (cards by Luhn, 身份证 numbers by ISO 7064, US social
security numbers by their valid ranges). Each finding says its kind, so an error can say
what was found without repeating it.

Library writes call :func:`screen_text` (and :func:`screen_fact`, :func:`screen_profile`):
a text holding a secret is refused with :class:`~recallmem.errors.SecretRefusedError`, or
stored with the secret redacted when ``MemoryConfig.secrets`` is ``"redact"``. Extraction
redacts conversations before they are queued and drops extracted facts holding one.

>>> redact("my OpenAI key is sk-proj-abcdefghijklmnopqrstuv, keep it")
'my OpenAI key is [REDACTED], keep it'
>>> redact("我的密码是 hunter2，帮我记住")
'我的密码是 [REDACTED]，帮我记住'
>>> [f.kind for f in scan("card 4111 1111 1111 1111, order 4111 1111 1111 1112")]
['card number']
>>> find_secret("The password is stored in 1Password") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from recallmem.config import SecretPolicy
from recallmem.errors import SecretRefusedError
from recallmem.prompts import compiled_patterns, load_data
from recallmem.secrets.checks import CHECKS, looks_random, looks_strong
from recallmem.secrets.gates import Gate
from recallmem.secrets.view import view_of
from recallmem.text.words import STOPWORDS
from recallmem.types import PROFILE_SECTIONS, Fact, Profile

_FLAGS = re.IGNORECASE | re.MULTILINE
_LOOK_BACK = 32  # characters of context a rule's `not_after` sees
Shape = Literal["any", "strong", "random"]


class RuleSpec(BaseModel):
    """One rule of ``prompts/secrets.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1)
    patterns: list[str] = Field(min_length=1)
    value: Shape | None = None
    check: Literal["luhn", "china_id", "us_ssn"] | None = None
    not_after: str | None = None

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        return compiled_patterns(patterns, _FLAGS)

    @model_validator(mode="after")
    def _value_groups(self) -> RuleSpec:
        # A shape without a value to apply it to (or the reverse) is a silent mistake.
        for pattern in self.patterns:
            named = "value" in re.compile(pattern, _FLAGS).groupindex
            if self.value is not None and not named:
                raise ValueError(f"pattern {pattern!r} has no (?P<value>...) group")
            if self.value is None and named:
                raise ValueError(f"pattern {pattern!r} has a value group but the rule no shape")
        return self

    @field_validator("not_after")
    @classmethod
    def _context_compiles(cls, pattern: str | None) -> str | None:
        return pattern if pattern is None else compiled_patterns([pattern], _FLAGS)[0]


class SecretsSpec(BaseModel):
    """``prompts/secrets.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["secrets"]
    version: str = Field(min_length=1)
    redaction: str = Field(min_length=1)
    rules: list[RuleSpec] = Field(min_length=1)
    ignore_values: list[str] = Field(default_factory=list)
    placeholders: list[str] = Field(default_factory=list)

    @field_validator("placeholders")
    @classmethod
    def _placeholders_compile(cls, patterns: list[str]) -> list[str]:
        return compiled_patterns(patterns, _FLAGS)


@dataclass(frozen=True)
class Finding:
    """Where a secret is in a text, and what kind it is; never the secret itself."""

    kind: str
    start: int
    end: int


# -- the compiled rules -----------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One compiled rule."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    shape: Shape | None
    check: Callable[[str], bool] | None
    not_after: re.Pattern[str] | None


@dataclass(frozen=True)
class SecretRules:
    """Compiled secret rules."""

    redaction: str
    rules: tuple[Rule, ...]
    ignore_values: frozenset[str]
    placeholder: re.Pattern[str]
    # Which patterns a text must hold one of their words for (secret_gates.py); None:
    # every pattern runs on every text.
    gate: Gate | None = None

    def _value_ok(self, match: re.Match[str], shape: Shape) -> bool:
        value = match.group("value")
        if self.placeholder.fullmatch(value):
            return False
        explicit = "sep" in match.re.groupindex and match.group("sep") is not None
        folded = value.casefold().rstrip(".!?")
        if not explicit and (folded in self.ignore_values or folded in STOPWORDS):
            return False
        if shape == "strong":
            return looks_strong(value)
        return looks_random(value) if shape == "random" else True

    def _accepts(self, rule: Rule, match: re.Match[str]) -> bool:
        named = "value" in match.re.groupindex and match.group("value") is not None
        if named and not self._value_ok(match, rule.shape or "any"):
            return False
        if rule.check and not rule.check(match.group("value") if named else match.group()):
            return False
        if rule.not_after:
            before = match.string[max(0, match.start() - _LOOK_BACK) : match.start()]
            return not rule.not_after.search(before)
        return True

    def scan(self, text: str) -> list[Finding]:
        """Every secret in ``text``, in order, overlapping findings merged.

        The rules read the text as a reader sees it (:mod:`recallmem.secrets.view`:
        hidden characters removed, NFKC, look-alike letters folded), and each finding
        spans the original characters it was read from. A text that lost a hidden
        character is read as written too: there the character parted two words
        ("is\u200bsk-..."), which its removal joins.
        """
        view = view_of(text)
        if view is None:
            found = self._found(text)
        else:
            found = [Finding(f.kind, *view.span(f.start, f.end)) for f in self._found(view.text)]
            if view.removed:
                found += self._found(text)
        merged: list[Finding] = []
        for item in sorted(found, key=lambda f: (f.start, -f.end)):
            if merged and item.start < merged[-1].end:
                last = merged[-1]
                merged[-1] = Finding(last.kind, last.start, max(last.end, item.end))
            else:
                merged.append(item)
        return merged

    def _found(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        gated = self.gate.gated if self.gate is not None else None
        opened = self.gate is None or self.gate.opens(text)
        position = -1
        for rule in self.rules:
            for pattern in rule.patterns:
                position += 1
                if not opened and gated is not None and gated[position]:
                    continue  # it cannot match: the text holds none of its words
                for match in pattern.finditer(text):
                    if self._accepts(rule, match):
                        group = "value" if "value" in pattern.groupindex else 0
                        found.append(Finding(rule.kind, *match.span(group)))
        return found


def _rule(spec: RuleSpec) -> Rule:
    return Rule(
        kind=spec.kind,
        patterns=tuple(re.compile(p, _FLAGS) for p in spec.patterns),
        shape=spec.value,
        check=CHECKS[spec.check] if spec.check else None,
        not_after=re.compile(spec.not_after, _FLAGS) if spec.not_after else None,
    )


@lru_cache(maxsize=8)
def load_secret_rules(prompt_dir: Path | None = None) -> SecretRules:
    """Load and compile ``prompts/secrets.yaml`` (cached per directory)."""
    spec = load_data("secrets", SecretsSpec, prompt_dir)
    ignored = frozenset(v.casefold() for v in [*spec.ignore_values, spec.redaction])
    placeholders = "|".join(f"(?:{p})" for p in [re.escape(spec.redaction), *spec.placeholders])
    rules = tuple(_rule(r) for r in spec.rules)
    return SecretRules(
        redaction=spec.redaction,
        rules=rules,
        ignore_values=ignored,
        placeholder=re.compile(placeholders, re.IGNORECASE),
        gate=Gate([p for rule in rules for p in rule.patterns], _FLAGS),
    )


# -- what callers use -------------------------------------------------------------------


def scan(text: str, rules: SecretRules | None = None) -> list[Finding]:
    """Every secret in ``text``: kind and span."""
    return (rules or load_secret_rules()).scan(text)


def _replace(text: str, findings: list[Finding], marker: str) -> str:
    pieces: list[str] = []
    last = 0
    for finding in findings:
        pieces += [text[last : finding.start], marker]
        last = finding.end
    return "".join([*pieces, text[last:]])


def redact(text: str, rules: SecretRules | None = None) -> str:
    """``text`` with every secret replaced by the redaction marker."""
    rules = rules or load_secret_rules()
    return _replace(text, rules.scan(text), rules.redaction)


def find_secret(
    text: str, rules: SecretRules | None = None, *, count_redacted: bool = False
) -> Finding | None:
    """The first secret in ``text``, else None.

    With ``count_redacted`` the redaction marker counts as one: extraction refuses a
    fact that names a redacted secret, which would store that a secret exists next to
    the words that led to it.
    """
    rules = rules or load_secret_rules()
    if count_redacted:
        view = view_of(text)
        read = text if view is None else view.text
        if marker := re.search(re.escape(rules.redaction), read, re.IGNORECASE):
            span = marker.span() if view is None else view.span(*marker.span())
            return Finding("redacted secret", *span)
    found = rules.scan(text)
    return found[0] if found else None


def screen_text(
    text: str, *, field: str, policy: SecretPolicy, rules: SecretRules | None = None
) -> str:
    """``text`` if it holds no secret; else refused, or redacted under ``"redact"``.

    Raises:
        SecretRefusedError: under ``"refuse"``, naming ``field`` and the kinds found.
    """
    rules = rules or load_secret_rules()
    found = rules.scan(text)
    if not found:
        return text
    if policy == "redact":
        return _replace(text, found, rules.redaction)
    raise SecretRefusedError(field, sorted({f.kind for f in found}))


def screen_fact(fact: Fact, policy: SecretPolicy) -> Fact:
    """The fact with every text it stores screened: content, error, quotes, history."""

    def screened(value: str | None, field: str) -> str | None:
        return None if value is None else screen_text(value, field=field, policy=policy)

    sources = tuple(
        s.model_copy(update={"quote": screened(s.quote, f"sources[{n}].quote")})
        for n, s in enumerate(fact.sources)
    )
    history = tuple(
        r.model_copy(update={"content": screened(r.content, f"history[{n}].content"),
                             "reason": screened(r.reason, f"history[{n}].reason")})
        for n, r in enumerate(fact.history)
    )  # fmt: skip
    changes = {
        "content": screened(fact.content, "content"),
        "source_error": screened(fact.source_error, "source_error"),
        "sources": sources,
        "history": history,
        "keywords": _screened_lines(fact.keywords, "keywords", policy),
        "questions": _screened_lines(fact.questions, "questions", policy),
    }
    return fact if all(changes[k] == getattr(fact, k) for k in changes) else (
        fact.model_copy(update=changes)
    )  # fmt: skip


def _screened_lines(lines: tuple[str, ...], field: str, policy: SecretPolicy) -> tuple[str, ...]:
    # Keywords and search keys are matched, not read: redacted, one would only match the
    # marker, so under "redact" one holding a secret is dropped. Each is also read after
    # the others, so a label and its value split over two ("password", "hunter2") are found.
    rules = load_secret_rules()
    kept: list[str] = []
    for n, line in enumerate(lines):
        found = rules.scan(line)
        if not found and kept:  # the first line alone is all there is to read after
            found = rules.scan(" ".join([*kept, line]))
        if not found:
            kept.append(line)
        elif policy != "redact":
            raise SecretRefusedError(f"{field}[{n}]", sorted({f.kind for f in found}))
    return tuple(kept)


def screen_profile(profile: Profile, policy: SecretPolicy) -> Profile:
    """The profile with each section's summary screened."""
    changes = {}
    for name in PROFILE_SECTIONS:
        section = getattr(profile, name)
        summary = screen_text(section.summary, field=f"profile {name}", policy=policy)
        if summary != section.summary:
            changes[name] = section.model_copy(update={"summary": summary})
    return profile.model_copy(update=changes) if changes else profile


__all__ = [
    "Finding",
    "SecretRules",
    "find_secret",
    "load_secret_rules",
    "redact",
    "scan",
    "screen_fact",
    "screen_profile",
    "screen_text",
]
