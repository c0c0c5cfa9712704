"""The memory service as a FastAPI app: the API under ``/v1``, the inspector at ``/``.

>>> import tempfile
>>> from fastapi.testclient import TestClient
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> client = TestClient(create_app(memory))
>>> client.post("/v1/users/ada/facts",
...             json={"content": "Writes TypeScript", "category": "knowledge"}).status_code
201
>>> [f["content"] for f in client.get("/v1/users/ada/facts").json()["items"]]
['Writes TypeScript']
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from langchain_core.language_models import BaseChatModel

from recallmem.limits import inspector_limits
from recallmem.memory import Memory
from recallmem.server import chat, facts, health, portability, profile, queue, search
from recallmem.server.limits import BodyLimit
from recallmem.server.problems import install, reject_unknown_query
from recallmem.server.schemas import ExportDocument
from recallmem.server.settings import ServerSettings
from recallmem.server.state import ServiceState

STATIC = Path(__file__).with_name("static")

DESCRIPTION = """\
Long-term memory of LangChain agents, per user: facts, recall, profiles, export and
import, the extraction queue, and memory-enabled chat over server-sent events.

Authenticate with `Authorization: Bearer <token>`. A user's token acts for its own
user only (write `me` or its user id in paths); an admin token names any user.
Errors are `application/problem+json` bodies that say what was wrong.
"""


def _with_import_schema(app: FastAPI) -> None:
    """Publish the import body's schema, which no route validates as a model (the route
    validates row by row, to name bad rows); its parts get an ``Import`` prefix so they
    never replace the response models of the same name."""
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
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def inspector_page() -> str:
    """The inspector's page, its form fields bounded by :mod:`recallmem.limits`."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    for name, value in inspector_limits().items():
        page = page.replace("{{" + name + "}}", html.escape(value))
    return page


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
    settings = settings or ServerSettings()
    app = FastAPI(
        title="recallmem",
        version=health.service_version(),
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.service = ServiceState(memory=memory, settings=settings, model=model)
    install(app)
    strict = [Depends(reject_unknown_query)]
    for module in (facts, search, profile, portability, queue, health, chat):
        app.include_router(module.router, dependencies=strict)

    page = inspector_page()

    @app.get("/", include_in_schema=False)
    async def inspector() -> HTMLResponse:
        return HTMLResponse(page)

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def limit_for(path: str) -> int:
        return settings.max_import_bytes if path.endswith("/import") else settings.max_body_bytes

    app.add_middleware(BodyLimit, limit_for=limit_for)
    _with_import_schema(app)
    return app
