"""One codec between a :class:`Fact` and Chroma's flat scalar metadata.

Chroma metadata holds only scalars and cannot hold ``None``. A record is the whole fact
as JSON in ``record`` (so the round trip loses nothing), plus the keys reads filter on:
``user_id`` always, ``agent_id`` and ``thread_id`` when the fact has one (a ``where`` on
them only ever asks for a given value, which an absent key never matches).

Records of schema 1 (every store written before schema 2) kept the content as Chroma's
document and eight more scalar keys that no read used; they still decode. Schema 2 writes
no document: Chroma indexes every document for full-text search at each write, and
recallmem never searches it, so that index and the unused keys were about a third of a
write's cost in Chroma (docs/decisions/0070-write-steps-and-per-call-costs.md).

>>> from recallmem.types import Fact
>>> fact = Fact(content="Uses TypeScript", category="knowledge", user_id="u1")
>>> decode(fact.id, None, encode(fact)) == fact
True
>>> tagged = fact.model_copy(update={"keywords": ("TypeScript", "类型脚本")})
>>> decode(fact.id, None, encode(tagged)).keywords
('TypeScript', '类型脚本')
>>> keyed = fact.model_copy(update={"questions": ("What do I code in?",), "keyed_by": "given"})
>>> decode(fact.id, None, encode(keyed)).questions
('What do I code in?',)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from recallmem.types import Fact

SCHEMA_VERSION = 2

Metadata = dict[str, str | int | float | bool]


def encode(fact: Fact) -> Metadata:
    """The metadata Chroma stores for a fact (no document: the content is in ``record``)."""
    # A fact without keywords or search keys is written without those fields, byte for
    # byte as before they existed: a process of an older version sharing the store still
    # reads it; an absent field decodes to its default.
    record = fact.model_dump_json(exclude=_unset_optional(fact) or None)
    metadata: Metadata = {"user_id": fact.user_id, "record": record}
    if fact.agent_id is not None:
        metadata["agent_id"] = fact.agent_id
    if fact.thread_id is not None:
        metadata["thread_id"] = fact.thread_id
    return metadata


def _unset_optional(fact: Fact) -> set[str]:
    return {name for name in ("keywords", "questions", "keyed_by") if not getattr(fact, name)}


def decode(fact_id: str, document: str | None, metadata: Mapping[str, Any] | None) -> Fact:
    """Rebuild the fact Chroma returned; ``record`` is truth (its content, or for a
    schema-1 record the document)."""
    if metadata is None or "record" not in metadata:
        raise ValueError(f"record {fact_id!r} was not written by recallmem (no 'record' field)")
    data = json.loads(str(metadata["record"]))
    if "content" not in data:  # schema 1: the content was the document
        data["content"] = document or ""
    if "accessed_at" in metadata:  # written alone by touch(), newer than the record
        data["last_accessed_at"] = datetime.fromtimestamp(float(metadata["accessed_at"]), UTC)
    return Fact.model_validate(data)


def scope_where(
    user_id: str, *, agent_id: str | None = None, thread_id: str | None = None
) -> dict[str, Any]:
    """A Chroma ``where`` that always pins the user, plus any narrower scope given."""
    clauses: list[dict[str, Any]] = [{"user_id": {"$eq": user_id}}]
    if agent_id is not None:
        clauses.append({"agent_id": {"$eq": agent_id}})
    if thread_id is not None:
        clauses.append({"thread_id": {"$eq": thread_id}})
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}
