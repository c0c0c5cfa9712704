"""``recallmem maintain``: expire, fade and purge now, for one user or all;
``recallmem rekey``: search keys for the facts that have none."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import TextIO

from recallmem.cli.common import Subparsers, open_memory
from recallmem.errors import InvalidInputError


def _now(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(
            f"--now {text!r} is not an ISO 8601 time; write it like 2026-12-08T00:00:00+00:00"
        ) from None


def cmd_maintain(args: argparse.Namespace, out: TextIO) -> int:
    report = open_memory(args).maintain(now=_now(args.now), user_id=args.user)
    counts = ", ".join(f"{n} {what}" for what, n in report.counts().items())
    users = f"user {args.user!r}" if args.user else f"{len(report.users)} user(s)"
    out.write(f"maintained {users}: {counts}\n")
    for what in ("expired", "faded", "purged"):
        for fact_id in getattr(report, what):
            out.write(f"  {what:<8} {fact_id}\n")
    for user_id in report.repaired:
        out.write(f"  rebuilt the collection of user {user_id!r} from its records\n")
    for failed in report.unconsolidated:
        out.write(f"  could not consolidate user {failed.user_id!r} (tried again at the next "
                  f"run): {failed.error}\n")  # fmt: skip
    return 0


def cmd_rekey(args: argparse.Namespace, out: TextIO) -> int:
    memory = open_memory(args)
    if memory.model is None:
        out.write("no model configured: nothing was keyed (set RECALLMEM_LLM_MODEL and "
                  "RECALLMEM_OPENAI_API_KEY, and RECALLMEM_OPENAI_BASE_URL for another "
                  "endpoint)\n")  # fmt: skip
        return 0
    report = memory.rekey(user_id=args.user, max_facts=args.max_facts)
    out.write(f"keyed {len(report.keyed)} fact(s), {len(report.declined)} without a usable "
              f"key; {report.remaining} still to key; {report.usage.calls} model call(s), "
              f"{report.usage.total_tokens} tokens\n")  # fmt: skip
    for line in report.set_aside:
        out.write(f"  set aside {line}\n")
    for failed in report.failed:
        out.write(f"  could not key user {failed.user_id!r} (tried again at the next run): "
                  f"{failed.error}\n")  # fmt: skip
    return 1 if report.failed else 0


def register(sub: Subparsers) -> None:
    """Add the lifecycle commands."""
    p = sub.add_parser("maintain", help="expire, fade and purge facts now")
    p.add_argument("--user", default=None, help="user id (default: every user)")
    p.add_argument("--now", default=None, help="as of this ISO time with offset (default: now)")
    p.set_defaults(handler=cmd_maintain)
    p = sub.add_parser("rekey", help="write search keys for facts that have none (needs a model)")
    p.add_argument("--user", default=None, help="user id (default: every user)")
    p.add_argument("--max-facts", type=int, default=None,
                   help="facts to key at most (default: keying_max_facts, 200)")  # fmt: skip
    p.set_defaults(handler=cmd_rekey)
