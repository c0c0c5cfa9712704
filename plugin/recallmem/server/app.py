"""The memory service as a FastAPI app: the API under ``/v1``, the inspector at ``/``.

>>> import tempfile
>>> from fastapi.testclient import TestClient
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> client = TestClient(create_app(memory), base_url="http://localhost")
>>> client.post("/v1/users/ada/facts",
...             json={"content": "Writes TypeScript", "category": "knowledge"}).status_code
201
>>> [f["content"] for f in client.get("/v1/users/ada/facts").json()["items"]]
['Writes TypeScript']
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI
from langchain_core.language_models import BaseChatModel

from recallmem.memory import Memory
from recallmem.server.admission import Admission, declare_json_writes
from recallmem.server.problems import install, reject_unknown_query
from recallmem.server.routes import (
    chat_routes,
    copy_routes,
    export_routes,
    facts_routes,
    health_routes,
    maintain_routes,
    page_routes,
    profile_routes,
    queue_routes,
    readiness_routes,
    retrievals_routes,
    search_routes,
    users_routes,
)
from recallmem.server.routes.mcp_routes import McpEndpoint, mcp_route
from recallmem.server.schemas import ExportDocument
from recallmem.server.settings import ServerSettings, load_settings
from recallmem.server.state import ServiceState

DESCRIPTION = """\
Long-term memory of LangChain agents, per user: facts, recall, profiles, export and
import, the extraction queue, and memory-enabled chat over server-sent events. MCP
clients connect to `/v1/users/{user_id}/mcp` (streamable HTTP; docs/mcp.md).

Authenticate with `Authorization: Bearer <token>`. A user's token acts for its own
user only (write `me` or its user id in paths); an admin token names any user.
Every POST, PUT and PATCH sends `Content-Type: application/json`, with or without a
body (`415` otherwise). Without tokens the service answers loopback host names only
(`localhost`, `127.0.0.1`, `[::1]`) and those in `RECALLMEM_ALLOWED_HOSTS`; writes
carrying another site's `Origin` are refused (`403`).
Errors are `application/problem+json` bodies that say what was wrong.
"""


def _published_schema(app: FastAPI) -> None:
    """Publish the import body's schema, which no route validates as a model (the route
    validates row by row, to name bad rows); its parts get an ``Import`` prefix so they
    never replace the response models of the same name. Bodyless writes get an empty
    JSON body (see :func:`.admission.declare_json_writes`)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            document = ExportDocument.model_json_schema(
                ref_template="#/components/schemas/Import{model}"
            )
            parts = schema.setdefault("components", {}).setdefault("schemas", {})
            for name, definition in document.pop("$defs", {}).items():
                parts[f"Import{name}"] = definition
            parts["ExportDocument"] = document
            declare_json_writes(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def create_app(
    memory: Memory,
    settings: ServerSettings | None = None,
    *,
    model: BaseChatModel | None = None,
) -> FastAPI:
    """The service over ``memory``.

    Args:
        memory: the memory to serve.
        settings: tokens, bounds; by default from ``RECALLMEM_*`` environment variables.
        model: the chat model of ``/v1/chat/stream``; by default the OpenAI-compatible
            model configured in ``memory.config`` (none: chat answers a clear error).
    """
    settings = settings or load_settings()
    mcp = McpEndpoint(memory)
    app = FastAPI(
        title="recallmem",
        version=health_routes.service_version(),
        description=DESCRIPTION,
        docs_url=None,  # served by routes.page_routes from local files
        redoc_url=None,
        lifespan=lambda _: mcp.running(),
    )
    app.state.service = ServiceState(memory=memory, settings=settings, model=model)
    install(app)
    strict = [Depends(reject_unknown_query)]
    routes = (
        facts_routes,
        search_routes,
        retrievals_routes,
        profile_routes,
        export_routes,
        queue_routes,
        maintain_routes,
        health_routes,
        readiness_routes,
        chat_routes,
        copy_routes,
        users_routes,
    )
    for module in routes:
        app.include_router(module.router, dependencies=strict)
    app.include_router(page_routes.router)
    app.router.routes.append(mcp_route(mcp))  # MCP over streamable HTTP (not in the schema)
    app.add_middleware(Admission, settings=settings)
    _published_schema(app)
    return app
