"""Fact ids as people type them: any unique prefix, as git takes short hashes.

Tables (the CLI, the inspector) show the first 12 characters of an id; every place that
takes an id accepts any prefix that names exactly one fact, within the user when one is
given, else among every user's facts.

>>> import tempfile
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> fact = memory.remember("Drinks green tea", user_id="ada", category="preference")
>>> resolve_fact_id(memory, fact.id[:8], user_id="ada") == fact.id
True
"""

from __future__ import annotations

from recallmem.errors import AmbiguousIdError, FactNotFoundError, InvalidInputError
from recallmem.facts.validation import require_user
from recallmem.memory import Memory
from recallmem.types import Fact

_SHOWN = 10  # candidates an ambiguity error lists


def _describe(fact: Fact) -> str:
    text = fact.content if len(fact.content) <= 40 else fact.content[:37] + "..."
    return f"{fact.id} (user {fact.user_id!r}, {fact.status.value}: {text})"


def resolve_fact_id(memory: Memory, prefix: str, *, user_id: str | None = None) -> str:
    """The whole id of the one fact whose id starts with ``prefix``.

    Searches the user's facts of every status when ``user_id`` is given, else every user's.
    Raises ``FactNotFoundError`` when none matches and ``AmbiguousIdError`` (listing the
    candidates) when several do; a whole id always wins.
    """
    prefix = prefix.strip()
    if not prefix:
        raise InvalidInputError("the fact id is empty; give the id, or any unique prefix of it")
    user_id = None if user_id is None else require_user(user_id)
    found = memory.repository.with_id_prefix(prefix, user_id=user_id)
    candidates = sorted(found, key=lambda f: f.id)
    if len(candidates) == 1:
        return candidates[0].id
    if not candidates:
        raise FactNotFoundError(prefix, user_id)
    shown = [_describe(f) for f in candidates[:_SHOWN]]
    if len(candidates) > _SHOWN:
        shown.append(f"and {len(candidates) - _SHOWN} more")
    raise AmbiguousIdError(prefix, shown)
