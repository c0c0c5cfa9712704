"""Turning caller input into valid facts, with errors that say how to fix the call.

>>> parse_category("preference")
<Category.PREFERENCE: 'preference'>
>>> parse_category("hobby")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
recallmem.errors.InvalidInputError: unknown category 'hobby'; use one of: identity, ...
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from recallmem.errors import InvalidInputError
from recallmem.limits import MAX_CONTENT_CHARS, check_k, check_scope_id, check_user_id
from recallmem.limits import check_query as _check_query_text
from recallmem.types import Category, Fact, Revision, Source, Status

VALID_CATEGORIES = ", ".join(c.value for c in Category)
_ITEM_KEYS = frozenset(
    {"content", "category", "confidence", "source", "pinned", "source_error", "item"}
)


def require_user(user_id: object) -> str:
    """The user id, or an error naming the argument to pass (:func:`limits.check_user_id`)."""
    return check_user_id(user_id)


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
    if isinstance(values, str):
        values = [values]
    return frozenset(parse_category(v) for v in values)


def check_content(content: object) -> str:
    """Non-blank text within the size limit."""
    if not isinstance(content, str) or not content.strip():
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


def check_query(query: object, k: object) -> tuple[str, int]:
    """A non-empty query and a sane k (:mod:`recallmem.limits`)."""
    return _check_query_text(query), check_k(k)


def new_fact(
    item: Mapping[str, Any],
    *,
    user_id: str,
    agent_id: str | None,
    thread_id: str | None,
    now: datetime,
) -> Fact:
    """A fresh fact from one ``remember_many`` item."""
    if not isinstance(item, Mapping):
        raise InvalidInputError(
            f"each item must be a mapping with content and category, got {item!r}"
        )
    if unknown := set(item) - _ITEM_KEYS:
        raise InvalidInputError(
            f"unknown item keys {sorted(unknown)}; allowed: {sorted(_ITEM_KEYS)}"
        )
    agent_id = check_scope_id(agent_id, "agent_id")
    thread_id = check_scope_id(thread_id, "thread_id")
    source = item.get("source") or Source(thread_id=thread_id, at=now, extractor="manual")
    try:
        return Fact(
            content=check_content(item.get("content")),
            category=parse_category(item.get("category")),
            confidence=check_confidence(item.get("confidence", 0.9)),
            user_id=user_id,
            agent_id=agent_id,
            thread_id=thread_id,
            sources=(source if isinstance(source, Source) else Source.model_validate(source),),
            source_error=item.get("source_error"),
            pinned=bool(item.get("pinned", False)),
            item=item.get("item"),
            created_at=now,
            updated_at=now,
        )
    except ValidationError as exc:
        raise InvalidInputError(f"invalid fact: {exc.errors()[0]['msg']}") from exc


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
) -> Fact:
    """The fact with the requested changes; a new text or category keeps the old in history."""
    changes: dict[str, Any] = {"updated_at": now}
    if content is not None:
        changes["content"] = check_content(content)
    if category is not None:
        changes["category"] = parse_category(category)
    if confidence is not None:
        changes["confidence"] = check_confidence(confidence)
    if pinned is not None:
        changes["pinned"] = bool(pinned)
    if status is not None:
        try:
            changes["status"] = Status(str(status))
        except ValueError:
            raise InvalidInputError(
                f"unknown status {status!r}; use one of: {', '.join(s.value for s in Status)}"
            ) from None
    text_changed = changes.get("content", old.content) != old.content
    if text_changed or changes.get("category", old.category) is not old.category:
        revision = Revision(content=old.content, category=old.category, at=now,
                            reason=reason or "edited")  # fmt: skip
        changes["history"] = (*old.history, revision)
    return old.model_copy(update=changes)
