"""One codec between a :class:`Fact` and Chroma's flat scalar metadata.

Chroma metadata holds only scalars and cannot hold ``None``. The fields we filter on
are stored as scalars (``None`` as ``""``), and the whole record is kept as JSON in
``record`` so that nothing is lost in the round trip; the document is the content.

>>> from recallmem.types import Fact
>>> fact = Fact(content="Uses TypeScript", category="knowledge", user_id="u1")
>>> decode(fact.id, *encode(fact)) == fact
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from recallmem.types import Fact

SCHEMA_VERSION = 1

Metadata = dict[str, str | int | float | bool]


def encode(fact: Fact) -> tuple[str, Metadata]:
    """The document and metadata Chroma stores for a fact."""
    metadata: Metadata = {
        "user_id": fact.user_id,
        "agent_id": fact.agent_id or "",
        "thread_id": fact.thread_id or "",
        "category": fact.category.value,
        "status": fact.status.value,
        "confidence": fact.confidence,
        "pinned": fact.pinned,
        "created_at": fact.created_at.timestamp(),
        "updated_at": fact.updated_at.timestamp(),
        "schema": SCHEMA_VERSION,
        "record": fact.model_dump_json(exclude={"content"}),
    }
    return fact.content, metadata


def decode(fact_id: str, document: str | None, metadata: Mapping[str, Any] | None) -> Fact:
    """Rebuild the fact Chroma returned; the scalar fields are derived, ``record`` is truth."""
    if metadata is None or "record" not in metadata:
        raise ValueError(f"record {fact_id!r} was not written by recallmem (no 'record' field)")
    data = json.loads(str(metadata["record"]))
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
