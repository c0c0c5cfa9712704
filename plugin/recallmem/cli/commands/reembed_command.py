"""``recallmem reembed``: give every stored fact vectors of another embedder, keeping its
record (store/reembedding.py); the way to change ``RECALLMEM_EMBEDDER`` on a store."""

from __future__ import annotations

import argparse
from typing import TextIO

from recallmem.cli.common import Subparsers, config_from


def cmd_reembed(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.store.chroma.reembedding import reembed_store

    def progress(done: int, total: int) -> None:
        out.write(f"re-embedded {done:,}/{total:,} facts\n")
        out.flush()

    report = reembed_store(
        config_from(args, ("home", "chroma_url", "collection", "embedder")), progress=progress
    )
    if report is None:
        out.write("nothing to do: the store already uses these embeddings\n")
    else:
        out.write(
            f"the store now uses {report.embedder} ({report.dimension} dimensions): "
            f"{report.facts:,} facts in {report.collections:,} user collections re-embedded "
            "by this run; nothing was extracted again\n"
        )
    return 0


def register(sub: Subparsers) -> None:
    """Add ``reembed``."""
    p = sub.add_parser(
        "reembed",
        help="re-embed every fact for the configured embedder (RECALLMEM_EMBEDDER and its "
        "settings), keeping the facts; resumable: run it again after an interruption",
    )
    p.add_argument("--embedder", help="the embedder to move to (default: RECALLMEM_EMBEDDER)")
    p.add_argument("--chroma-url", help="a Chroma server (stop every recallmem worker first)")
    p.add_argument("--collection", help="the collection prefix (default: recallmem)")
    p.set_defaults(handler=cmd_reembed)
