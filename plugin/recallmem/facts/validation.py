"""Turning caller input into valid facts, with errors that say how to fix the call.

>>> parse_category("preference")
<Category.PREFERENCE: 'preference'>
>>> parse_category("hobby")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
recallmem.errors.InvalidInputError: unknown category 'hobby'; use one of: identity, ...
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from recallmem.config import SecretPolicy
from recallmem.errors import InvalidInputError
from recallmem.limits import (
    FOREVER_HINT,
    ID_FORM,
    MAX_SUMMARY_CHARS,
    USER_ID_PATTERN,
    check_k,
    check_keywords,
    check_questions,
    check_scope_id,
    check_time,
    check_user_id,
)
from recallmem.limits import check_query as _check_query_text
from recallmem.secrets.detector import screen_fact, screen_profile, screen_text
from recallmem.text.jsontext import value_problem
from recallmem.text.quoting import stored_text, visible_text
from recallmem.types import (
    MANUAL_SOURCE,
    MAX_CONTENT_CHARS,
    Category,
    Fact,
    Profile,
    Revision,
    Source,
    Status,
)

VALID_CATEGORIES = ", ".join(c.value for c in Category)
_ITEM_KEYS = frozenset(
    {"content", "category", "confidence", "source", "pinned", "source_error", "item",
     "valid_until", "keywords", "questions"}
)  # fmt: skip


def require_user(user_id: object) -> str:
    """The user id, or an error naming the argument to pass (:func:`limits.check_user_id`)."""
    return check_user_id(user_id)


def _type_name(value: object) -> str:
    return type(value).__name__


def optional_key(value: object, name: str) -> str | None:
    """An optional scope key (``agent_id``, ``thread_id``): a string or None (``""`` too)."""
    if value is None or isinstance(value, str):
        return check_scope_id(value, name) if value else None
    raise InvalidInputError(f"{name} must be a string or None, got {_type_name(value)}")


def optional_text(value: object, name: str) -> str | None:
    """An optional text argument (a filter, a reason): a string or None."""
    if value is None or isinstance(value, str):
        return value
    raise InvalidInputError(f"{name} must be a string or None, got {_type_name(value)}")


def check_integer(value: object, name: str, low: int, high: int | None = None) -> int:
    """An integer (not a bool, not a numeric string) from ``low`` to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an integer, got {_type_name(value)} {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise InvalidInputError(f"{name} must be an integer {bounds}, got {value}")
    return value


def check_flag(value: object, name: str) -> bool:
    """A boolean argument; ``"no"`` or ``1`` would silently mean something else."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be True or False, got {_type_name(value)} {value!r}")
    return value


def check_min_score(value: object) -> float | None:
    """An optional minimum recall score: a number, or None for no minimum."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInputError(
            f"min_score must be a number (scores run from 0 to about 1) or None, got "
            f"{_type_name(value)} {value!r}"
        )
    return float(value)


def parse_category(value: object) -> Category:
    """A category from its name; unknown names list the valid ones."""
    try:
        return Category(str(value).strip().lower())
    except ValueError:
        raise InvalidInputError(
            f"unknown category {value!r}; use one of: {VALID_CATEGORIES}"
        ) from None


def parse_categories(values: Iterable[object] | None) -> frozenset[Category] | None:
    """A set of categories, or None for all."""
    if values is None:
        return None
    if isinstance(values, str | Category):
        values = [values]
    if not isinstance(values, Iterable) or isinstance(values, Mapping):
        raise InvalidInputError(
            f"categories must be a list of category names, got {_type_name(values)}; use "
            f"any of: {VALID_CATEGORIES}"
        )
    return frozenset(parse_category(v) for v in values)


def id_problem(fact_id: str) -> str | None:
    """Why a fact id an import or a put gives cannot be stored, if it cannot: it names
    the fact in API paths (``/v1/users/{user}/facts/{id}``), so it follows the user id's rule.

    >>> id_problem("f-1"), id_problem("../x")  # doctest: +ELLIPSIS
    (None, "'id' '../x' cannot name a fact in the API's paths: ...")
    """
    if re.fullmatch(USER_ID_PATTERN, fact_id):
        return None
    return (
        f"'id' {fact_id[:40]!r} cannot name a fact in the API's paths: give {ID_FORM}, or "
        "leave 'id' out to get a new one"
    )


def check_fact_id(value: object) -> str:
    """A fact id: a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError(
            f"fact_id must be a non-empty string (a fact's id), got {_type_name(value)} {value!r}"
        )
    return value


def check_items(items: object) -> list[Any]:
    """The items of a ``remember_many`` call: a list (or other iterable) of mappings."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"items must be a list of mappings with content and category, got {_type_name(items)}"
        )
    return list(items)


def check_content(content: object) -> str:
    """Visible text within the size limit."""
    if not isinstance(content, str):
        raise InvalidInputError(
            f"content must be a string, got {_type_name(content)}; a fact is one "
            "self-contained sentence"
        )
    content = stored_text(content)  # no escapes, controls or bidi overrides are stored
    if not visible_text(content).strip():
        raise InvalidInputError("content is empty; a fact is one self-contained sentence")
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidInputError(
            f"content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}. "
            "Store one fact per call, as a short sentence"
        )
    return content.strip()


def check_confidence(value: object) -> float:
    """A confidence in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInputError(
            f"confidence must be a number from 0 to 1 (0.9 stated outright, 0.7 implied), "
            f"got {value!r}"
        )
    return float(value)


def _aware_time(value: object, what: str, hint: str, range_hint: str = "") -> datetime | None:
    """A timezone-aware datetime or ISO 8601 string with an offset, as UTC; None stays."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInputError(
                f"{what} {value!r} is not an ISO 8601 time; write it like "
                "'2026-12-08T18:00:00+08:00' (with the offset of the user's time zone)"
            ) from None
    if not isinstance(value, datetime):
        raise InvalidInputError(
            f"{what} must be a datetime or an ISO 8601 string, got {_type_name(value)}"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(
            f"{what} {value.isoformat()} has no time zone; give one, e.g. "
            f"datetime(2026, 12, 8, 18, tzinfo=ZoneInfo('Asia/Shanghai')) or "
            f"'2026-12-08T18:00:00+08:00'{hint}"
        )
    return check_time(value, what, range_hint)


def check_valid_until(value: object) -> datetime | None:
    """When a fact stops being true: a timezone-aware datetime, an ISO 8601 string with an
    offset, or None; in UTC. A naive time is refused: it could be any of 24 time zones;
    so is one outside the range :func:`recallmem.limits.check_time` allows."""
    return _aware_time(
        value, "valid_until", " (a past time stores the fact already expired)", FOREVER_HINT
    )


def check_said_at(value: object, what: str = "said_at") -> datetime | None:
    """When a message was said, as :func:`check_valid_until` takes a time; in UTC.

    >>> check_said_at("2026-03-10T21:10:00+08:00").isoformat()
    '2026-03-10T13:10:00+00:00'
    """
    return _aware_time(value, what, " (when the message was said, where the user was)")


def check_query(query: object, k: object) -> tuple[str, int]:
    """A query with visible text and a sane k (:mod:`recallmem.limits`)."""
    return _check_query_text(query), check_k(k)


def new_fact(
    item: Mapping[str, Any],
    *,
    user_id: str,
    agent_id: str | None,
    thread_id: str | None,
    now: datetime,
    secrets: SecretPolicy = "refuse",
) -> Fact:
    """A fresh fact from one ``remember_many`` item; a secret in it is refused or redacted."""
    if not isinstance(item, Mapping):
        raise InvalidInputError(
            f"each item must be a mapping with content and category, got {item!r}"
        )
    if unknown := set(item) - _ITEM_KEYS:
        raise InvalidInputError(
            f"unknown item keys {sorted(unknown)}; allowed: {sorted(_ITEM_KEYS)}"
        )
    agent_id, thread_id = optional_key(agent_id, "agent_id"), optional_key(thread_id, "thread_id")
    source = item.get("source") or Source(thread_id=thread_id, at=now, extractor=MANUAL_SOURCE)
    try:
        fact = Fact(
            content=check_content(item.get("content")),
            category=parse_category(item.get("category")),
            confidence=check_confidence(item.get("confidence", 0.9)),
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            sources=(source if isinstance(source, Source) else Source.model_validate(source),),
            source_error=optional_text(item.get("source_error"), "source_error"),
            pinned=check_flag(item.get("pinned", False), "pinned"),
            item=item.get("item"),
            valid_until=check_valid_until(item.get("valid_until")),
            keywords=check_keywords(item.get("keywords")),
            **given_questions(item.get("questions")),
            created_at=now,
            updated_at=now,
        )
    except ValidationError as exc:
        raise InvalidInputError(f"invalid fact: {exc.errors()[0]['msg']}") from exc
    if fact.item is not None and (why := value_problem(fact.item.value, "item.value")):
        raise InvalidInputError(f"an item's value must be JSON: {why}; nothing was stored")
    return screen_fact(fact, secrets)


GIVEN = "given"  # Fact.keyed_by of keys passed with a fact or set by an edit


def given_questions(value: object) -> dict[str, Any]:
    """A fact's search keys as a caller gives them; none given (None or empty) leaves the
    fact to the keying step, some given are never rewritten by it."""
    questions = check_questions(value)
    return {"questions": questions, "keyed_by": GIVEN} if questions else {}


def check_profile(profile: object, secrets: SecretPolicy = "refuse") -> Profile:
    """A profile to store, with its owner given and no secret in its summaries."""
    if not isinstance(profile, Profile):
        raise InvalidInputError(
            f"profile must be a recallmem.Profile, got {_type_name(profile)}; build one with "
            "Profile(user_id=..., work_context=ProfileSection(summary=...))"
        )
    require_user(profile.user_id)
    check_scope_id(profile.agent_id, "agent_id")
    for name, section in profile.sections().items():
        if len(section.summary) > MAX_SUMMARY_CHARS:
            raise InvalidInputError(
                f"profile section {name!r} is {len(section.summary)} characters; the limit is "
                f"{MAX_SUMMARY_CHARS}: a section is a short summary, the details are facts"
            )
    return screen_profile(profile, secrets)


def edit_fact(
    old: Fact,
    *,
    now: datetime,
    content: str | None = None,
    category: object = None,
    confidence: object = None,
    pinned: bool | None = None,
    status: object = None,
    reason: str | None = None,
    secrets: SecretPolicy = "refuse",
    valid_until: object = None,
    keywords: object = None,
    questions: object = None,
) -> Fact:
    """The fact with the requested changes; a new text or category keeps the old in history.

    New text (content, reason, keywords, questions) holding a secret is refused or
    redacted; ``keywords`` replaces the fact's keywords and ``questions`` its search keys
    (``[]`` clears them, and no model keys the fact again). New content without
    ``questions`` drops the keys, which were about the old text: the keying step writes
    new ones.
    """
    changes: dict[str, Any] = {"updated_at": now}
    if content is not None:
        changes["content"] = screen_text(check_content(content), field="content", policy=secrets)
    if (reason := optional_text(reason, "reason")) is not None:
        reason = screen_text(reason, field="reason", policy=secrets)
    if category is not None:
        changes["category"] = parse_category(category)
    if confidence is not None:
        changes["confidence"] = check_confidence(confidence)
    if pinned is not None:
        changes["pinned"] = check_flag(pinned, "pinned")
    if valid_until is not None:
        changes["valid_until"] = check_valid_until(valid_until)
    if keywords is not None:
        probe = old.model_copy(update={"keywords": check_keywords(keywords)})
        changes["keywords"] = screen_fact(probe, secrets).keywords
    if questions is not None:
        probe = old.model_copy(update={"questions": check_questions(questions)})
        changes.update(questions=screen_fact(probe, secrets).questions, keyed_by=GIVEN)
    if status is not None:
        try:
            changes["status"] = Status(str(status))
        except ValueError:
            raise InvalidInputError(
                f"unknown status {status!r}; use one of: {', '.join(s.value for s in Status)}"
            ) from None
    text_changed = changes.get("content", old.content) != old.content
    if text_changed and questions is None:
        changes.update(questions=(), keyed_by=None)
    if text_changed or changes.get("category", old.category) is not old.category:
        revision = Revision(content=old.content, category=old.category, at=now,
                            reason=reason or "edited")  # fmt: skip
        changes["history"] = (*old.history, revision)
    return old.model_copy(update=changes)


def check_fact_ids(facts: Sequence[Fact]) -> Sequence[Fact]:
    """``facts``, if every id can be stored (:func:`id_problem`); else InvalidInputError
    naming the first that cannot, so that nothing is written.

    >>> from recallmem.types import Fact
    >>> check_fact_ids([Fact(id="../x", content="Writes Go", category="knowledge",
    ...                      user_id="bob")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    recallmem.errors.InvalidInputError: 'id' '../x' cannot name a fact ...; nothing was written
    """
    for fact in facts:
        if (problem := id_problem(fact.id)) is not None:
            raise InvalidInputError(f"{problem}; nothing was written")
    return facts


def foreign_rows(facts: Sequence[Fact], owners: Mapping[str, str]) -> list[int]:
    """The rows of ``facts`` whose id another user's stored fact already has (``owners``:
    each stored id's user): writing them would take that fact over.

    >>> from recallmem.types import Fact
    >>> fact = Fact(id="f1", content="Writes Go", category="knowledge", user_id="bob")
    >>> foreign_rows([fact], {"f1": "ada"}), foreign_rows([fact], {"f1": "bob"})
    ([0], [])
    """
    return [row for row, f in enumerate(facts) if owners.get(f.id, f.user_id) != f.user_id]
