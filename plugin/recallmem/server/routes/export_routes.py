"""Whole memory: export (streamed), import (all or nothing) and clear (cascade).

The format is the library's own (:mod:`recallmem.facts.export_format`), so a file written by
``recallmem export`` imports here and the other way round. An import names one user in
the path, and every row must belong to that user: a token for one user can never write
into another's memory, whatever the file says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from recallmem.errors import ImportRejectedError, InvalidInputError
from recallmem.facts.export_format import FORMAT, ImportReport, validate_import
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.body_limits import large_body
from recallmem.server.problems import (
    PROBLEM_RESPONSES,
    ProblemError,
    RejectedRow,
    problem_response,
)
from recallmem.server.routes.facts_routes import ScopeFilter
from recallmem.server.schemas import Affected
from recallmem.server.state import MemoryDep
from recallmem.text.jsontext import parse_json

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["memory"],
    responses=PROBLEM_RESPONSES,
    route_class=AdmittedRoute,
)

_FACTS_PER_CHUNK = 500


def stream_document(document: Mapping[str, Any]) -> Iterator[bytes]:
    """The export document as JSON, written in chunks of facts rather than one string.

    >>> doc = {"format": "f", "facts": [{"id": "a"}, {"id": "b"}], "profiles": []}
    >>> json.loads(b"".join(stream_document(doc))) == doc
    True
    """
    head = {k: v for k, v in document.items() if k not in ("facts", "profiles")}
    yield (json.dumps(head, ensure_ascii=False)[:-1] + ', "facts": [').encode()
    facts = document["facts"]
    for start in range(0, len(facts), _FACTS_PER_CHUNK):
        batch = facts[start : start + _FACTS_PER_CHUNK]
        text = ", ".join(json.dumps(f, ensure_ascii=False) for f in batch)
        yield ((", " if start else "") + text).encode()
    profiles = json.dumps(document["profiles"], ensure_ascii=False)
    yield f'], "profiles": {profiles}}}'.encode()


@router.get(
    "/export",
    summary="Export the user's memory",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/json": {}}, "description": "The export file"}},
)
async def export_memory(
    user: UserId, memory: MemoryDep, agent_id: ScopeFilter = None, embeddings: bool = False
) -> StreamingResponse:
    """Every fact (all statuses) and profile of the user, in the versioned export format;
    ``embeddings=true`` carries the facts' vectors (an import with the same embedder keeps
    them instead of embedding again)."""
    document = await memory.aexport(user_id=user, agent_id=agent_id, embeddings=embeddings)
    filename = f"recallmem-export-{len(document['facts'])}-facts.json"
    return StreamingResponse(
        stream_document(document),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


def foreign_rows(document: object, user: str) -> list[tuple[int, str]]:
    """Rows of an import that name a user other than ``user``."""
    if not isinstance(document, Mapping):
        return []
    found: list[tuple[int, str]] = []
    for key, label in (("facts", ""), ("profiles", "profiles[{}]: ")):
        rows = document.get(key)
        for row, raw in enumerate(rows if isinstance(rows, list) else []):
            owner = raw.get("user_id") if isinstance(raw, Mapping) else None
            if owner is not None and owner != user:
                found.append(
                    (row, label.format(row) + f"belongs to user {owner!r}, but this import is "
                     f"for {user!r}; import it as that user")
                )  # fmt: skip
    return found


async def _read_json(request: Request) -> object:
    try:
        return parse_json(await request.body())
    except InvalidInputError as exc:
        raise ProblemError(
            422,
            "Import rejected",
            f"the body is not JSON that can be read ({exc}); send the file "
            "`recallmem export` wrote. Nothing was written",
            rejected=[RejectedRow(row=-1, reason="not JSON")],
        ) from exc


_IMPORT_BODY = {
    "requestBody": {
        "required": True,
        "description": f"A '{FORMAT}' document, as written by export.",
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/ExportDocument"}}
        },
    }
}


@router.post(
    "/import", response_model=ImportReport, summary="Import an export file",
    openapi_extra=_IMPORT_BODY,
    responses={503: problem_response("Too many large imports at once; retry later")},
)  # fmt: skip
@large_body
async def import_memory(user: UserId, memory: MemoryDep, request: Request) -> ImportReport:
    """Validate every row, then write all of them, or nothing: bad rows are named in
    ``rejected`` and the existing memory is left untouched. Every row must belong to the
    user in the path."""
    document = await _read_json(request)
    foreign = foreign_rows(document, user)
    if foreign:
        rejected = sorted({*foreign, *validate_import(document).rejected})
        listing = "; ".join(f"row {r}: {why}" for r, why in rejected[:20])
        raise ImportRejectedError(
            f"import rejected, nothing was written ({len(rejected)} bad rows): {listing}",
            rejected,
        )
    return await memory.aimport_(document)


@router.delete("/memory", response_model=Affected, summary="Clear memory (cascade)")
async def clear_memory(
    user: UserId,
    memory: MemoryDep,
    agent_id: ScopeFilter = None,
    thread_id: ScopeFilter = None,
    purge: bool = False,
) -> Affected:
    """Forget all of the user's facts, or those of one agent or one thread.

    Soft by default (out of recall, kept for audit and export); ``purge=true`` erases
    them with the scope's retrieval records, and purging the whole user also erases the
    profiles.
    """
    affected = await memory.aforget(
        user_id=user, agent_id=agent_id, thread_id=thread_id, purge=purge
    )
    return Affected(affected=affected, purged=purge)
