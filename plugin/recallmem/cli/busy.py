"""When ``recallmem serve`` owns the home: the HTTP request that does what was asked.

The CLI does not open a home another process owns (embedded Chroma belongs to one
process). When the owner is a recallmem service, the CLI says so and prints the
``curl`` that asks the running service to do the same thing.

>>> import argparse
>>> args = argparse.Namespace(command="list", user="ada", agent=None, handler=None)
>>> curl_for(args, "http://127.0.0.1:8765", open_access=True)
'curl -sS http://127.0.0.1:8765/v1/users/ada/facts'
"""

from __future__ import annotations

import argparse
import json
import shlex
from typing import Any
from urllib.parse import quote

_AUTH = ' -H "Authorization: Bearer $RECALLMEM_TOKEN"'
_JSON = " -H 'Content-Type: application/json'"


def _request(args: argparse.Namespace) -> tuple[str, str, Any] | None:
    """(method, path under /v1/users/USER, JSON body or None) for a CLI command."""
    command = args.command
    if command == "remember":
        body = {"content": args.content, "category": args.category, "confidence": args.confidence}
        return "POST", "/facts", {**body, **({"agent_id": args.agent} if args.agent else {})}
    if command == "recall":
        return "POST", "/search", {"query": args.query, "k": args.k}
    if command == "list":
        return "GET", "/facts", None
    if command == "export":
        carry = "?embeddings=true" if getattr(args, "embeddings", False) else ""
        return "GET", "/export" + carry, None
    if command == "forget" and args.fact_id:
        purge = "?purge=true" if args.purge else ""
        return "DELETE", f"/facts/{quote(args.fact_id, safe='')}{purge}", None
    if command == "forget":
        return "DELETE", "/memory" + ("?purge=true" if args.purge else ""), None
    if command == "maintain":
        return "POST", "/maintain", None
    if command in ("pending", "dead-letters"):
        return "GET", "/queue", None
    return None


def curl_for(args: argparse.Namespace, serve_url: str, *, open_access: bool) -> str | None:
    """The curl doing ``args``'s command through the service, or None if it has none."""
    request = _request(args)
    user = getattr(args, "user", None)
    if request is None or not user:
        return None
    method, path, body = request
    url = f"{serve_url}/v1/users/{quote(user, safe='')}{path}"
    parts = "curl -sS" + ("" if method == "GET" else f" -X {method}") + f" {shlex.quote(url)}"
    if not open_access:
        parts += _AUTH
    if body is not None:
        parts += _JSON + " -d " + shlex.quote(json.dumps(body, ensure_ascii=False))
    return parts


def busy_message(args: argparse.Namespace, holder: Any) -> str | None:
    """The line to print when a service owns the home, or None if the owner is not one."""
    serve_url = getattr(holder, "serve_url", None)
    if not serve_url:
        return None
    curl = curl_for(args, serve_url, open_access=bool(getattr(holder, "open_access", True)))
    how = f"run instead:\n  {curl}" if curl else f"see {serve_url}/docs for the API"
    if args.command == "mcp":
        user = quote(args.user, safe="")
        how = f"point the MCP client at {serve_url}/v1/users/{user}/mcp instead (docs/mcp.md)"
    return (
        f"a recallmem service (pid {holder.pid}) owns this memory and serves it at "
        f"{serve_url}; the CLI does not open a home another process owns. Ask the service: " + how
    )
