"""Store items as facts: the text a value is recalled by, where a fact sits, value filters.

The text of a value is, in order: the fields named by ``put(..., index=[...])``; else its
``content`` (a string, or any JSON, as LangMem's tools write it); else its ``text``; else
the whole value as JSON. That text is what is embedded and ranked; the value is kept whole.

>>> text_of({"content": "Prefers dark mode", "tags": ["ui"]})
'Prefers dark mode'
>>> text_of({"title": "Stack", "body": "Rust"})
'{"body": "Rust", "title": "Stack"}'
>>> matches_filter({"n": 3, "kind": "note"}, {"n": {"$gte": 2}, "kind": "note"})
True
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.store.base.embed import get_text_at_path

from recallmem.errors import InvalidInputError
from recallmem.integrations.langgraph.namespaces import AGENT, NamespaceRule, NamespaceScope
from recallmem.text.jsontext import value_problem
from recallmem.types import Fact, Placement, StoreItem

_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def check_value(value: Mapping[str, Any]) -> dict[str, Any]:
    """A plain JSON copy of the value, or an error saying why it cannot be stored.

    >>> check_value({"score": float("nan")})
    Traceback (most recent call last):
    ...
    recallmem.errors.InvalidInputError: a store value must be JSON: value['score'] is nan, \
and JSON has no NaN or Infinity: store a finite number; nothing was stored
    """
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"a store value is a dict, got {type(value).__name__}")
    if why := value_problem(value):
        raise InvalidInputError(f"a store value must be JSON: {why}; nothing was stored")
    try:
        copied: dict[str, Any] = json.loads(json.dumps(dict(value), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"a store value must be JSON (strings, numbers, lists, dicts): {exc}; "
            "nothing was stored"
        ) from exc
    return copied


def text_of(value: Mapping[str, Any], index: Sequence[str] | None = None) -> str:
    """The text a value is embedded and ranked by (see the module docstring)."""
    if index:
        texts = [text for path in index for text in get_text_at_path(value, path)]
        if texts:
            return "\n".join(texts)
    for field in ("content", "text"):
        found = value.get(field)
        if isinstance(found, str) and found.strip():
            return found
        if field == "content" and found not in (None, ""):
            return _json(found)
    return _json(value)


def placements(fact: Fact, rule: NamespaceRule) -> list[Placement]:
    """Every namespace and key under which the store shows a fact (none if out of the rule).

    A fact not written through a store sits in its scope's root namespace, keyed by its id.
    """
    if fact.item is not None:
        return [(fact.item.namespace, fact.item.key), *fact.item.aliases]
    if (fact.agent_id is None) != (AGENT not in rule.template):
        return []
    return [(rule.root(NamespaceScope(fact.user_id, fact.agent_id)), fact.id)]


def value_of(fact: Fact) -> dict[str, Any]:
    """The value the store returns for a fact: its item's, or its content and category."""
    if fact.item is not None:
        return fact.item.value
    return {"content": fact.content, "category": fact.category.value}


def with_placement(fact: Fact, placement: Placement, value: dict[str, Any]) -> StoreItem:
    """The fact's item once a put at ``placement`` confirmed or enriched it."""
    namespace, key = placement
    own = StoreItem(namespace=namespace, key=key, value=value)
    old = fact.item
    if old is None:
        return own
    enriched = text_of(old.value).strip() != fact.content == text_of(value).strip()
    if enriched:  # the put said more, its text replaced the fact's: it becomes the item
        kept = [(old.namespace, old.key), *old.aliases]
        return own.model_copy(update={"aliases": tuple(p for p in kept if p != placement)})
    if placement == (old.namespace, old.key) or placement in old.aliases:
        return old
    return old.model_copy(update={"aliases": (*old.aliases, placement)})


def without_placement(item: StoreItem, placement: Placement) -> StoreItem | None:
    """The item once ``placement`` is deleted; None when no placement is left."""
    rest = [p for p in [(item.namespace, item.key), *item.aliases] if p != placement]
    if not rest:
        return None
    (namespace, key), *aliases = rest
    return item.model_copy(update={"namespace": namespace, "key": key, "aliases": tuple(aliases)})


def matches_filter(value: Any, wanted: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter semantics: equality, nested dicts, ``$eq $ne $gt $gte $lt $lte``."""
    if not wanted:
        return True
    if not isinstance(value, Mapping):
        return False
    return all(_compare(value.get(key), expected) for key, expected in wanted.items())


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, Mapping) and any(str(k).startswith("$") for k in expected):
        return all(_apply(actual, op, operand) for op, operand in expected.items())
    if isinstance(expected, Mapping):
        return matches_filter(actual, expected)
    return bool(actual == expected)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    compare = _OPERATORS.get(op)
    if compare is None:
        raise InvalidInputError(f"unknown filter operator {op!r}; use one of {sorted(_OPERATORS)}")
    try:
        return compare(actual, operand)
    except TypeError:
        return False  # a missing field or another type simply does not match
