"""The pages of the service: the inspector at ``/`` and the API docs at ``/docs``.

Every file they load comes from this package (the inspector) or an installed one (Swagger
UI, from ``swagger-ui-bundle-v2``); no page asks another host for anything, so both work
offline. Only the files listed here are served.
"""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse
from starlette.exceptions import HTTPException
from swagger_ui_bundle import swagger_ui_path

from recallmem.limits import inspector_limits

INSPECTOR = Path(__file__).parent.parent / "static"  # server/static
SWAGGER_UI = Path(str(swagger_ui_path))
DOCS_ASSETS = "/docs/assets"

_INSPECTOR_FILES = {"app.js": "text/javascript", "style.css": "text/css"}
_SWAGGER_FILES = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}

router = APIRouter(include_in_schema=False)

# No other site may frame these pages: inside a frame, a page's clicks and the writes it
# makes pass the origin check as the inspector's own. The inspector loads nothing but its
# own files; Swagger UI's page starts with an inline script, so only framing is denied.
_NO_FRAMING = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"}
INSPECTOR_HEADERS = {
    **_NO_FRAMING,
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'",
}
DOCS_HEADERS = {**_NO_FRAMING, "Content-Security-Policy": "frame-ancestors 'none'"}


def _served(folder: Path, files: dict[str, str], name: str) -> FileResponse:
    if name not in files:
        raise HTTPException(404)
    return FileResponse(folder / name, media_type=files[name], headers=_NO_FRAMING)


def inspector_page() -> str:
    """The inspector's page, its form fields bounded by :mod:`recallmem.limits`."""
    page = (INSPECTOR / "index.html").read_text(encoding="utf-8")
    for name, value in inspector_limits().items():
        page = page.replace("{{" + name + "}}", html.escape(value))
    return page


@router.get("/")
async def inspector() -> HTMLResponse:
    """The inspector page."""
    return HTMLResponse(inspector_page(), headers=INSPECTOR_HEADERS)


@router.get("/static/{name}")
async def inspector_file(name: str) -> FileResponse:
    """The inspector's script and style sheet."""
    return _served(INSPECTOR, _INSPECTOR_FILES, name)


@router.get("/docs")
async def docs() -> HTMLResponse:
    """Swagger UI over ``/openapi.json``, from local files, with no online validator."""
    page = get_swagger_ui_html(
        openapi_url="/openapi.json",
        title="recallmem API",
        swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_ASSETS}/favicon-32x32.png",
        oauth2_redirect_url=None,
        swagger_ui_parameters={"validatorUrl": None},
    )
    page.headers.update(DOCS_HEADERS)
    return page


@router.get(DOCS_ASSETS + "/{name}")
async def docs_file(name: str) -> FileResponse:
    """Swagger UI's script, style sheet and icon, from the installed package."""
    return _served(SWAGGER_UI, _SWAGGER_FILES, name)
