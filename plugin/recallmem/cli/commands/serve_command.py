"""``recallmem serve``: the HTTP API and the inspector page."""

from __future__ import annotations

import argparse
from typing import TextIO

from recallmem.cli.common import Subparsers


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.server.running import serve

    return serve(
        host=args.host, port=args.port, chroma_url=args.chroma_url, home=args.home,
        workers=args.workers, out=out,
    )  # fmt: skip


def register(sub: Subparsers) -> None:
    """Add ``serve``."""
    p = sub.add_parser("serve", help="run the HTTP API and the inspector page")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1; loopback without tokens)")
    p.add_argument("--port", type=int, help="port (default 8765)")
    p.add_argument("--chroma-url", help="a Chroma server, e.g. http://127.0.0.1:8000")
    p.add_argument(
        "--workers", type=int,
        help="worker processes on the port (default 1; more need --chroma-url)",
    )  # fmt: skip
    p.set_defaults(handler=cmd_serve)
