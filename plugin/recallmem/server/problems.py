"""Errors as JSON problem bodies (RFC 9457): what was wrong and what to do about it.

Every error the service returns has ``type``, ``title``, ``status`` and ``detail``;
validation errors add ``errors`` (one entry per bad field) and rejected imports add
``rejected`` (one entry per bad row).

>>> problem = Problem(status=404, title="Fact not found", detail="no fact 'x'")
>>> problem.model_dump(exclude_none=True)["type"]
'about:blank'
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from recallmem.errors import (
    AmbiguousIdError,
    EmbeddingMismatchError,
    FactNotFoundError,
    ForgottenMeanwhileError,
    ImportRejectedError,
    InvalidInputError,
    ModelNotConfiguredError,
    RecallmemError,
    StoreError,
)
from recallmem.limits import MAX_ID_CHARS, NOT_BLANK
from recallmem.text.jsontext import UNREADABLE, why_unreadable

MEDIA_TYPE = "application/problem+json"


class FieldError(BaseModel):
    """One invalid field: where it is and what is wrong with it."""

    location: str
    message: str


class RejectedRow(BaseModel):
    """One rejected import row (``row`` -1 means the document as a whole)."""

    row: int
    reason: str


class Problem(BaseModel):
    """The body of every error response."""

    model_config = ConfigDict(extra="forbid")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[FieldError] | None = None
    rejected: list[RejectedRow] | None = None


class ProblemError(Exception):
    """Raised by routes to answer with a problem body."""

    def __init__(self, status: int, title: str, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.problem = Problem(status=status, title=title, detail=detail, **extra)
        self.headers: dict[str, str] = {}


def respond(problem: Problem, headers: dict[str, str] | None = None) -> JSONResponse:
    """The HTTP response carrying ``problem``."""
    return JSONResponse(
        problem.model_dump(mode="json", exclude_none=True),
        status_code=problem.status,
        media_type=MEDIA_TYPE,
        headers=headers,
    )


def _from_library(exc: RecallmemError) -> Problem:
    """The problem a library error means to an HTTP client."""
    if isinstance(exc, FactNotFoundError):
        detail = f"no fact with id {exc.fact_id!r} for this user; list the facts to find ids"
        return Problem(status=404, title="Fact not found", detail=detail)
    if isinstance(exc, ImportRejectedError):
        rows = [RejectedRow(row=row, reason=reason) for row, reason in exc.rejected]
        return Problem(status=422, title="Import rejected", detail=str(exc), rejected=rows)
    if isinstance(exc, AmbiguousIdError):  # the path is well formed: the facts clash with it
        return Problem(status=409, title="Ambiguous id prefix", detail=str(exc))
    if isinstance(exc, InvalidInputError):
        return Problem(status=400, title="Invalid input", detail=str(exc))
    if isinstance(exc, ForgottenMeanwhileError):
        return Problem(status=409, title="Forgotten meanwhile", detail=str(exc))
    if isinstance(exc, ModelNotConfiguredError):
        return Problem(status=409, title="No chat model configured", detail=str(exc))
    if isinstance(exc, EmbeddingMismatchError | StoreError):
        return Problem(status=503, title="Memory store unavailable", detail=str(exc))
    return Problem(status=400, title="Request failed", detail=str(exc))


def _field_message(location: str, err: dict[str, Any]) -> str:
    """The error in words: a refused pattern says what the field needs, never the regex."""
    if err.get("type") != "string_pattern_mismatch":
        return str(err.get("msg", "invalid"))
    if location.endswith("user_id"):
        return (
            f"a user id is 1 to {MAX_ID_CHARS} characters with no spaces and no '/' "
            "('me' names the user of the token)"
        )
    if err.get("ctx", {}).get("pattern") == NOT_BLANK:
        return "must contain something besides whitespace"
    return str(err.get("msg", "invalid"))


def _validation_problem(exc: RequestValidationError) -> Problem:
    errors = []
    for err in exc.errors():
        location = ".".join(str(part) for part in err.get("loc", ()))
        errors.append(FieldError(location=location, message=_field_message(location, err)))
    listing = "; ".join(f"{e.location}: {e.message}" for e in errors[:10])
    return Problem(
        status=422,
        title="Invalid request",
        detail=f"the request does not match the API schema ({listing}); see /openapi.json",
        errors=errors,
    )


def _query_names(dependant: Any) -> set[str]:
    """The query parameters a route and its dependencies declare."""
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def reject_unknown_query(request: Request) -> None:
    """Refuse query parameters the route does not know: a misspelt filter must not
    silently widen a listing or a clear to everything."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    known = _query_names(dependant)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise ProblemError(
            422,
            "Invalid request",
            f"unknown query parameter(s) {', '.join(map(repr, unknown))}; this route takes "
            f"{', '.join(sorted(known)) or 'none'}",
            errors=[FieldError(location=f"query.{name}", message="unknown parameter")
                    for name in unknown],
        )  # fmt: skip


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this request's path, found by asking the
    router itself (Starlette names only the first route's, and FastAPI nests routers)."""
    allowed = []
    for method in _METHODS:
        probe = {**request.scope, "method": method}
        if any(route.matches(probe)[0] == Match.FULL for route in request.app.router.routes):
            allowed.append(method)
    return allowed


_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    413: "Payload too large",
    415: "Unsupported media type",
    503: "Service unavailable",
}


def install(app: FastAPI) -> None:
    """Answer every error of ``app`` with a problem body."""

    async def on_problem(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ProblemError)
        return respond(exc.problem, exc.headers)

    async def on_library(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RecallmemError)
        return respond(_from_library(exc))

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return respond(_validation_problem(exc))

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        title = _TITLES.get(exc.status_code, "Error")
        detail = str(exc.detail)
        headers = dict(exc.headers or {})
        if exc.status_code == 404:
            detail = "no such route; the API is described at /openapi.json and /docs"
        if exc.status_code == 405:
            allowed = allowed_methods(request)
            headers["Allow"] = ", ".join(allowed)
            detail = f"{request.method} is not supported here; use {' or '.join(allowed)}"
        if exc.status_code == 400 and isinstance(exc.__cause__, UNREADABLE):
            # FastAPI's own words for a body json.loads refused are "There was an error
            # parsing the body"; the cause says what the client can fix.
            detail = (
                f"the request body cannot be read: {why_unreadable(exc.__cause__)}; "
                "send a JSON document matching the API schema (see /openapi.json)"
            )
        problem = Problem(status=exc.status_code, title=title, detail=detail)
        return respond(problem, headers)

    async def on_unexpected(_: Request, exc: Exception) -> JSONResponse:
        problem = Problem(
            status=500,
            title="Internal error",
            detail=f"the service failed on this request ({type(exc).__name__}); the "
            "service's log has the details. Retry, or report it with the log",
        )
        # Starlette raises the error on after this answer and the server then drops the
        # connection; saying so keeps a client from sending its next request down it.
        return respond(problem, {"Connection": "close"})

    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(Exception, on_unexpected)
    app.add_exception_handler(RecallmemError, on_library)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)


def problem_response(description: str) -> dict[str, Any]:
    """An OpenAPI response entry for a problem body."""
    schema = {"$ref": "#/components/schemas/Problem"}
    return {"model": Problem, "description": description,
            "content": {MEDIA_TYPE: {"schema": schema}}}  # fmt: skip


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: problem_response("Invalid input"),
    401: problem_response("Missing or unknown bearer token"),
    403: problem_response("The token may not act for this user"),
    405: problem_response("Method not allowed"),
    413: problem_response("Payload too large"),
    415: problem_response("A write without 'Content-Type: application/json'"),
    422: problem_response("The request does not match the schema"),
}
