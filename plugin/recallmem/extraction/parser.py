"""Reading what the extraction model returned, however messy, into a typed result.

Models wrap JSON in chatter, code fences and ``<think>`` blocks, leave trailing commas,
write ``True`` for ``true``, spell categories in capitals or give confidence as "90%".
:func:`parse_extraction` reads all of that. One unusable item (a fact without a
category, say) is set aside in ``rejected`` with the reason, and the rest is kept; so
are the facts past a reply's first ``MAX_FACTS_PER_WINDOW``. Output with no JSON object
at all (found by :func:`~recallmem.extraction.reply_json.find_json`) is an
:class:`~recallmem.errors.ExtractionError`, which keeps the conversation
queued for a retry.

>>> result = parse_extraction('''<think>The user states a preference.</think>
... Here you go:
... ```json
... {"facts": [{"content": "Prefers reports in Chinese", "category": "Preference",
...   "confidence": "90%", "evidence": "reports in Chinese", "message_ids": ["m1"],},],}
... ```''')
>>> fact = result.facts[0]
>>> fact.category.value, fact.confidence, fact.message_ids
('preference', 0.9, ('m1',))
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import ExtractionError
from recallmem.extraction.reply_json import find_json as find_json  # re-exported
from recallmem.facts.expiry import normalise_local
from recallmem.limits import (
    MAX_FACTS_PER_WINDOW,
    MAX_KEYWORD_CHARS,
    MAX_KEYWORDS,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
)
from recallmem.types import PROFILE_SECTIONS, Category, StoredText
from recallmem.types import TokenUsage as TokenUsage  # re-exported: it used to live here

_WORD_CONFIDENCE = {"high": 0.9, "medium": 0.75, "moderate": 0.75, "low": 0.5}


class CandidateFact(BaseModel):
    """A fact the model proposes; hygiene decides whether it is stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: StoredText = Field(min_length=1)
    category: Category
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: StoredText = ""
    message_ids: tuple[str, ...] = ()
    source_error: StoredText | None = None
    valid_until: str | None = Field(
        default=None,
        description=(
            "For a time-bound fact (a due date, a trip, 'this week'): the last local day "
            "it holds, YYYY-MM-DD, or YYYY-MM-DDTHH:MM for a time of day; else null."
        ),
    )
    keywords: tuple[str, ...] = Field(
        default=(),
        max_length=MAX_KEYWORDS,
        description=(
            "A few short search words for the fact in the user's other language (or "
            "languages), only words the fact says; never a secret."
        ),
    )
    questions: tuple[str, ...] = Field(
        default=(),
        max_length=MAX_QUESTIONS,
        description=(
            "2-3 short questions the fact answers, as the user would ask them: one in the "
            "user's language, one in the other; then perhaps a paraphrase of the fact in "
            f"the other language. At most {MAX_QUESTION_CHARS} characters each; only what "
            "the fact says; never a secret."
        ),
    )
    scope: Literal["user", "agent"] = Field(
        default="user",
        description=(
            "'user' for a fact about the user, shared with every assistant (most facts); "
            "'agent' only for the state of this assistant's own work that no other needs."
        ),
    )

    @field_validator("content")
    @classmethod
    def _content_left(cls, value: str) -> str:
        if not value.strip():  # nothing left once stored (controls and escapes only)
            raise ValueError("content holds no visible text")
        # Stripped once stored too: "\x1b\r0" is "\r0" once its escape is gone.
        return value.strip()


class SupersedeRequest(BaseModel):
    """An existing fact (by the id the model was shown) that the window replaces."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    # The model writes "id" (the prompt's shape); the code reads fact_id.
    fact_id: str = Field(min_length=1, alias="id")
    reason: str = ""
    replacement: str | None = None
    effective_from: str | None = Field(
        default=None,
        alias="from",
        description=(
            "For a change still ahead (moving on the 28th): the first local day of the new "
            "state, YYYY-MM-DD, or YYYY-MM-DDTHH:MM; the old fact holds until then. Null "
            "when the change has happened."
        ),
    )


class ProfileUpdate(BaseModel):
    """One profile section as the model would rewrite it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    should_update: bool = False
    summary: str = ""


class Rejected(BaseModel):
    """A piece of the model's output that could not be used, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: str
    reason: str


class ExtractionOutput(BaseModel):
    """What the model is asked to write; the structured-output schema is derived from it.

    Record the facts about the user found in the conversation window.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    facts: tuple[CandidateFact, ...] = ()
    supersede: tuple[SupersedeRequest, ...] = ()
    confirmed: tuple[str, ...] = ()
    todos_done: tuple[str, ...] = ()
    profile: dict[str, ProfileUpdate] = Field(
        default_factory=dict, json_schema_extra={"propertyNames": {"enum": list(PROFILE_SECTIONS)}}
    )


class ExtractionResult(ExtractionOutput):
    """Everything one model call said about a window, typed but not yet vetted."""

    rejected: tuple[Rejected, ...] = ()
    usage: TokenUsage = TokenUsage()
    model_name: str | None = None


# -- coercing items ----------------------------------------------------------------


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def parse_category(value: Any) -> Category:
    """A category from a loosely written name ("Preferences", " TODO ")."""
    name = str(value).strip().lower().replace(" ", "_")
    for candidate in (name, name.rstrip("s")):
        if candidate in Category._value2member_map_:
            return Category(candidate)
    raise ValueError(f"unknown category {value!r}")


def parse_confidence(value: Any) -> float:
    """A confidence in [0, 1] from 0.9, "0.9", "90%", 90 or "high"."""
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _WORD_CONFIDENCE:
            return _WORD_CONFIDENCE[word]
        value = float(word.rstrip("%")) / (100 if word.endswith("%") else 1)
    number = float(value)
    if 1.0 < number <= 100.0:
        number /= 100.0
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"confidence {value!r} is outside 0-1")
    return round(number, 4)


def _ids(value: Any) -> tuple[str, ...]:
    out = []
    for item in _as_list(value):
        if isinstance(item, Mapping):
            item = item.get("id")
        if item is not None and str(item).strip():
            out.append(str(item).strip().strip("[]"))
    return tuple(out)


def parse_local_time(value: Any, name: str = "valid_until") -> str | None:
    """A local date or date and time as the model wrote it, normalised; None if absent.

    >>> parse_local_time("2026-12-08"), parse_local_time(" 2026-12-08 18:30 "), parse_local_time("")
    ('2026-12-08', '2026-12-08T18:30', None)
    """
    text = _text(value)
    if not text or text.lower() in {"null", "none"}:
        return None
    try:
        return normalise_local(text)
    except ValueError:
        raise ValueError(
            f"{name} {text!r} is not a local date (YYYY-MM-DD) or time (YYYY-MM-DDTHH:MM)"
        ) from None


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


_KEYWORD_SEPARATORS = re.compile(r"[,，、;；\n]")


def parse_keywords(value: Any, rejected: list[Rejected]) -> tuple[str, ...]:
    """A fact's keywords from a list (or one comma-separated string); an unusable keyword
    goes to ``rejected`` and the fact keeps the others, since keywords only help recall.

    >>> parse_keywords(["咖啡机", " 漏水 ", "", "咖啡机", 42], [])
    ('咖啡机', '漏水', '42')
    >>> parse_keywords("coffee machine, leak", [])
    ('coffee machine', 'leak')
    """
    if isinstance(value, str):
        value = _KEYWORD_SEPARATORS.split(value)
    kept: dict[str, str] = {}
    for raw in _as_list(value):
        if isinstance(raw, Mapping | list | tuple | bool):
            rejected.append(Rejected(item=f"keyword {str(raw)[:60]}", reason="not a word"))
            continue
        word = " ".join(_text(raw).split())
        if len(word) > MAX_KEYWORD_CHARS:
            reason = f"longer than {MAX_KEYWORD_CHARS} characters; a keyword is a word or two"
            rejected.append(Rejected(item=f"keyword {word[:60]}", reason=reason))
        elif len(kept) == MAX_KEYWORDS and word.casefold() not in kept:
            reason = f"more than {MAX_KEYWORDS} keywords; the first {MAX_KEYWORDS} are kept"
            rejected.append(Rejected(item=f"keyword {word[:60]}", reason=reason))
        elif word:
            kept.setdefault(word.casefold(), word)
    return tuple(kept.values())


def parse_questions(value: Any, rejected: list[Rejected]) -> tuple[str, ...]:
    """A fact's search keys as written: a list (or lines of one string), whitespace
    collapsed, at most ``MAX_QUESTIONS``; what they may say is for hygiene
    (:mod:`recallmem.extraction.search_keys`), so only their shape is read here.

    >>> parse_questions(["What am I allergic to?", " 我对什么过敏？ ", {"q": 1}], [])
    ('What am I allergic to?', '我对什么过敏？')
    """
    lines = value.splitlines() if isinstance(value, str) else _as_list(value)
    kept: list[str] = []
    for raw in lines:
        line = " ".join(raw.split()) if isinstance(raw, str) else None
        if line is None:
            rejected.append(Rejected(item=f"question {str(raw)[:60]}", reason="not a line of text"))
        elif line and len(kept) == MAX_QUESTIONS:
            reason = f"more than {MAX_QUESTIONS} questions; the first {MAX_QUESTIONS} are kept"
            rejected.append(Rejected(item=f"question {line[:60]}", reason=reason))
        elif line:
            kept.append(line)
    return tuple(kept)


def _fact(item: Any, rejected: list[Rejected]) -> CandidateFact:
    if not isinstance(item, Mapping):
        raise ValueError("a fact must be an object with content, category and confidence")
    if "confidence" not in item:
        raise ValueError("no confidence given; the prompt requires one")
    return CandidateFact(
        content=_text(item.get("content")),
        category=parse_category(item.get("category")),
        confidence=parse_confidence(item["confidence"]),
        evidence=_text(item.get("evidence")),
        message_ids=_ids(item.get("message_ids")),
        source_error=_text(item.get("source_error")) or None,
        valid_until=parse_local_time(item.get("valid_until")),
        keywords=parse_keywords(item.get("keywords"), rejected),
        questions=parse_questions(item.get("questions"), rejected),
        scope=parse_scope(item.get("scope")),
    )


def parse_scope(value: Any) -> Literal["user", "agent"]:
    """Whose fact the model says it is; anything but a clear "agent" is the user's, so a
    fact about the user is never hidden from the user's other assistants.

    >>> parse_scope("Agent"), parse_scope("assistant"), parse_scope(None), parse_scope("both")
    ('agent', 'agent', 'user', 'user')
    """
    return "agent" if _text(value).lower() in {"agent", "assistant"} else "user"


def _supersede(item: Any) -> SupersedeRequest:
    if isinstance(item, str):
        return SupersedeRequest(fact_id=item.strip("[] "))
    if not isinstance(item, Mapping):
        raise ValueError("a supersede entry must be an object with id, reason, replacement, from")
    return SupersedeRequest(
        fact_id=_text(item.get("id")).strip("[]"),
        reason=_text(item.get("reason")),
        replacement=_text(item.get("replacement")) or None,
        effective_from=parse_local_time(item.get("from"), "from"),
    )


def _profile(value: Any, rejected: list[Rejected]) -> dict[str, ProfileUpdate]:
    out: dict[str, ProfileUpdate] = {}
    if not isinstance(value, Mapping):
        return out
    for name, section in value.items():
        if name not in PROFILE_SECTIONS:
            rejected.append(Rejected(item=f"profile.{name}", reason="unknown profile section"))
        elif isinstance(section, Mapping):
            should = section.get("should_update")
            out[name] = ProfileUpdate(
                should_update=should is True or str(should).lower() == "true",
                summary=_text(section.get("summary")),
            )
        elif isinstance(section, str) and section.strip():
            out[name] = ProfileUpdate(should_update=True, summary=section.strip())
    return out


def _collect(items: list[Any], convert: Any, rejected: list[Rejected]) -> list[Any]:
    kept = []
    for item in items:
        try:
            kept.append(convert(item))
        except (ValueError, TypeError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            rejected.append(
                Rejected(item=json.dumps(item, ensure_ascii=False)[:300], reason=reason)
            )
    return kept


def coerce_result(data: Any) -> ExtractionResult:
    """An :class:`ExtractionResult` from decoded JSON; bad items go to ``rejected``."""
    if isinstance(data, list):
        data = {"facts": data}
    if not isinstance(data, Mapping):
        raise ExtractionError(f"the model returned {type(data).__name__}, not a JSON object")
    if "content" in data and "category" in data:  # one fact, unwrapped
        data = {"facts": [data]}
    known = ExtractionOutput.model_fields
    rejected = [
        Rejected(item=str(key), reason="unknown top-level key; see the prompt's output shape")
        for key in data
        if key not in known
    ]
    facts = _as_list(data.get("facts"))
    if (surplus := len(facts) - MAX_FACTS_PER_WINDOW) > 0:
        why = f"one reply proposes at most {MAX_FACTS_PER_WINDOW} facts; the rest were not read"
        rejected.append(Rejected(item=f"{surplus} facts past the first {MAX_FACTS_PER_WINDOW}",
                                 reason=why))  # fmt: skip
    return ExtractionResult(
        facts=tuple(
            _collect(facts[:MAX_FACTS_PER_WINDOW], lambda item: _fact(item, rejected), rejected)
        ),
        supersede=tuple(_collect(_as_list(data.get("supersede")), _supersede, rejected)),
        confirmed=_ids(data.get("confirmed")),
        todos_done=_ids(data.get("todos_done")),
        profile=_profile(data.get("profile"), rejected),
        rejected=tuple(rejected),
    )


def parse_extraction(text: str) -> ExtractionResult:
    """Parse a model's text reply; raises ExtractionError if no JSON object is in it."""
    return coerce_result(find_json(text))
