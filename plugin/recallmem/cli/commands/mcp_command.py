"""``recallmem mcp``: serve one user's memory to an MCP client over stdin and stdout.

The user (and agent) are fixed by the command line, as the client's configuration
launches it; the model's arguments never name one. While ``recallmem serve`` owns the
home, a client connects to the service's ``/v1/users/USER/mcp`` instead (docs/mcp.md).
"""

from __future__ import annotations

import argparse
from typing import TextIO

from recallmem.cli.common import Subparsers, open_memory


def cmd_mcp(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.agent.scope import Scope
    from recallmem.facts.validation import optional_key, require_user
    from recallmem.integrations.mcp.server import serve_stdio
    from recallmem.retrieval.when import user_zone

    scope = Scope(user_id=require_user(args.user), agent_id=optional_key(args.agent, "agent_id"),
                  timezone=args.timezone)  # fmt: skip
    if args.timezone:
        user_zone(args.timezone)
    with open_memory(args) as memory:  # nothing is written to stdout: it is the protocol's
        serve_stdio(memory, scope)
    return 0


def register(sub: Subparsers) -> None:
    """Add ``mcp``."""
    p = sub.add_parser(
        "mcp",
        help="serve a user's memory to an MCP client over stdio (tools recall, remember, "
        "forget, list); the service serves the same over HTTP at /v1/users/USER/mcp",
    )
    p.add_argument("--user", required=True, help="the user whose memory the client uses")
    p.add_argument("--agent", default=None, help="the agent's own scope (default: shared)")
    p.add_argument("--timezone", default=None, help="the user's IANA timezone, e.g. Asia/Shanghai")
    p.set_defaults(handler=cmd_mcp)
