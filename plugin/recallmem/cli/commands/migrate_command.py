"""``recallmem migrate``: move a store of the single-collection layout to a collection
per user (docs/decisions/0003-storage-layout.md)."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from recallmem.cli.common import Subparsers


def cmd_migrate(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.config import MemoryConfig
    from recallmem.store.chroma.migration import migrate_store

    settings: dict[str, Any] = {}
    if args.home:
        settings["home"] = args.home
    if args.chroma_url:
        settings["chroma_url"] = args.chroma_url
    if args.collection:
        settings["collection"] = args.collection

    def progress(done: int, total: int) -> None:
        out.write(f"copied {done:,}/{total:,} facts\n")
        out.flush()

    moved = migrate_store(MemoryConfig(**settings), progress)
    if moved is None:
        out.write("nothing to migrate: the store already keeps a collection per user\n")
    else:
        out.write(f"migrated {moved:,} facts to a collection per user\n")
    return 0


def register(sub: Subparsers) -> None:
    """Add ``migrate``."""
    p = sub.add_parser(
        "migrate",
        help="move a store of the older single-collection layout to a collection per user "
        "(resumable: run it again after an interruption)",
    )
    p.add_argument("--chroma-url", help="a Chroma server, e.g. http://127.0.0.1:8000")
    p.add_argument("--collection", help="the collection prefix (default: recallmem)")
    p.set_defaults(handler=cmd_migrate)
