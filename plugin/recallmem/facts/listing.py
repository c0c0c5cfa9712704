"""Pure filtering and paging of a user's facts, for ``Memory.list`` and the inspector.

>>> from recallmem.types import Fact
>>> facts = [Fact(content=f"fact {n}", category="context", user_id="u") for n in range(3)]
>>> [f.content for f in select(facts, text="FACT 1")]
['fact 1']
"""

from __future__ import annotations

from collections.abc import Iterable

from recallmem.errors import InvalidInputError
from recallmem.facts.validation import check_integer, optional_key, optional_text, parse_category
from recallmem.limits import DEFAULT_PAGE, MAX_ID_CHARS, MAX_PAGE
from recallmem.types import Category, Fact, Status


def select(
    facts: Iterable[Fact],
    *,
    agent_id: str | None = None,
    category: str | Category | None = None,
    status: str | Status | None = None,
    thread_id: str | None = None,
    text: str | None = None,
    limit: int = DEFAULT_PAGE,
    offset: int = 0,
) -> list[Fact]:
    """Facts matching every filter given, newest first, one page of them."""
    check_integer(limit, "limit", 1, MAX_PAGE)
    check_integer(offset, "offset", 0)
    agent_id, thread_id = optional_key(agent_id, "agent_id"), optional_key(thread_id, "thread_id")
    text = optional_text(text, "text")
    if text is not None and len(text) > MAX_ID_CHARS:  # the id limit, as by the API
        raise InvalidInputError(
            f"text must be at most {MAX_ID_CHARS} characters, got {len(text)}; search a "
            "shorter piece of the fact"
        )
    wanted_category = parse_category(category) if category is not None else None
    try:
        wanted_status = Status(status) if status is not None else None
    except ValueError:
        raise InvalidInputError(
            f"unknown status {status!r}; use one of: {', '.join(s.value for s in Status)}"
        ) from None
    needle = text.casefold() if text else None
    chosen = [
        f
        for f in facts
        if (agent_id is None or f.agent_id == agent_id)
        and (wanted_category is None or f.category is wanted_category)
        and (wanted_status is None or f.status is wanted_status)
        and (thread_id is None or f.thread_id == thread_id)
        and (needle is None or needle in f.content.casefold())
    ]
    chosen.sort(key=lambda f: (f.updated_at, f.id), reverse=True)
    return chosen[offset : offset + limit]
