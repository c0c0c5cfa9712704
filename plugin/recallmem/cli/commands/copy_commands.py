"""``recallmem copy``: copy facts from one scope (a template user, an agent) to another."""

from __future__ import annotations

import argparse
from typing import TextIO

from recallmem.cli.common import Subparsers, open_memory, table
from recallmem.integrations.lookup import resolve_fact_id
from recallmem.limits import SHORT_ID_CHARS
from recallmem.types import Category


def cmd_copy(args: argparse.Namespace, out: TextIO) -> int:
    memory = open_memory(args)
    ids = [resolve_fact_id(memory, i, user_id=args.from_user) for i in args.id] or None
    facts = memory.copy(
        from_user_id=args.from_user,
        to_user_id=args.to_user,
        from_agent_id=args.from_agent,
        to_agent_id=args.to_agent,
        categories=args.category or None,
        ids=ids,
    )
    new = [f for f in facts if f.copied_from is not None and f.confirmations == 0]
    rows = [[f.id[:SHORT_ID_CHARS], "copied" if f in new else "confirmed", f.category.value,
             f.content] for f in facts]  # fmt: skip
    if rows:
        out.write(table(rows, ["id", "outcome", "category", "content"]))
    out.write(f"copied {len(new)} new fact(s), confirmed {len(facts) - len(new)} existing\n")
    return 0


def register(sub: Subparsers) -> None:
    """Add ``copy``."""
    p = sub.add_parser(
        "copy",
        help="copy a scope's facts to another user or agent (team templates)",
        description="Copy the active facts of one scope into another as new facts that "
        "say where they came from; duplicates of destination facts confirm them instead.",
    )
    p.add_argument("--from-user", required=True, help="source user id (e.g. a template user)")
    p.add_argument("--to-user", required=True, help="destination user id")
    p.add_argument("--from-agent", default=None, help="source agent (default: shared facts)")
    p.add_argument("--to-agent", default=None, help="destination agent (default: shared)")
    categories = [c.value for c in Category]
    p.add_argument("--category", action="append", default=[], choices=categories,
                   help="only this category (repeatable)")  # fmt: skip
    p.add_argument("--id", action="append", default=[],
                   help="only this fact (id or unique prefix; repeatable)")  # fmt: skip
    p.set_defaults(handler=cmd_copy)
