"""``recallmem migrate``: move a store of the single-collection layout to a collection
per user (docs/decisions/0003-storage-layout.md)."""

from __future__ import annotations

import argparse
from typing import TextIO

from recallmem.cli.common import Subparsers, config_from


def cmd_migrate(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.store.chroma.migration import migrate_store

    def progress(done: int, total: int) -> None:
        out.write(f"copied {done:,}/{total:,} facts\n")
        out.flush()

    moved = migrate_store(config_from(args, ("home", "chroma_url", "collection")), progress)
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
