"""``recallmem``: the command line over the same Memory the library uses.

    recallmem remember "Prefers reports in Chinese" --user ada --category preference
    recallmem recall "report language" --user ada
    recallmem list --user ada
    recallmem forget FACT_ID [--purge]  |  recallmem forget --user ada [--thread T]
    recallmem export --user ada > ada.json  |  recallmem import ada.json
    recallmem serve --host 127.0.0.1 --port 8765

Errors print one line on stderr that says what to do, and exit with status 2 (bad
input) or 1 (anything else).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from recallmem.errors import FactNotFoundError, InvalidInputError, RecallmemError
from recallmem.types import Category, Fact, ScoredFact

Handler = Callable[[argparse.Namespace, TextIO], int]


def _memory(args: argparse.Namespace) -> Any:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory

    overrides = {"home": args.home} if args.home else {}
    return Memory(MemoryConfig(**overrides))


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """Rows as aligned, plain-text columns (the last column is not padded).

    >>> print(table([["1", "ada"]], ["n", "user"]))
    n  user
    1  ada
    """
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row[:-1], widths, strict=False))
        + ("  " if len(row) > 1 else "")
        + str(row[-1])
        for row in [header, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines)


def _fact_rows(facts: Sequence[Fact]) -> list[list[str]]:
    return [
        [f.id[:12], f.category.value, f"{f.confidence:.2f}", f.status.value, f.content]
        for f in facts
    ]


def cmd_remember(args: argparse.Namespace, out: TextIO) -> int:
    fact = _memory(args).remember(
        args.content,
        user_id=args.user,
        agent_id=args.agent,
        category=args.category,
        confidence=args.confidence,
    )
    out.write(f"{fact.id}  [{fact.category.value}] {fact.content}\n")
    return 0


def cmd_recall(args: argparse.Namespace, out: TextIO) -> int:
    hits: list[ScoredFact] = _memory(args).recall(
        args.query, user_id=args.user, agent_id=args.agent, k=args.k
    )
    rows = [
        [f"{h.score:.3f}", f"{h.parts.dense:.2f}", f"{h.parts.lexical:.2f}", h.fact.id[:12],
         h.fact.category.value, h.fact.content]
        for h in hits
    ]  # fmt: skip
    out.write(table(rows, ["score", "dense", "lexical", "id", "category", "content"]) + "\n")
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    facts = _memory(args).list(
        user_id=args.user,
        agent_id=args.agent,
        category=args.category,
        status=None if args.status == "all" else args.status,
        text=args.text,
        limit=args.limit,
        offset=args.offset,
    )
    out.write(table(_fact_rows(facts), ["id", "category", "conf", "status", "content"]) + "\n")
    return 0


def cmd_forget(args: argparse.Namespace, out: TextIO) -> int:
    if not args.fact_id and not args.user:
        raise InvalidInputError("give a fact id, or --user (optionally with --thread/--agent)")
    memory = _memory(args)
    fact_id = _resolve_id(memory, args.fact_id, args.user) if args.fact_id else None
    count = memory.forget(
        fact_id, user_id=args.user, thread_id=args.thread, agent_id=args.agent, purge=args.purge
    )
    out.write(f"{'purged' if args.purge else 'forgot'} {count} fact(s)\n")
    return 0


def _resolve_id(memory: Any, prefix: str, user_id: str | None) -> str:
    """Accept the 12-character ids the tables show, as git accepts short hashes."""
    if len(prefix) == 32 or not user_id:
        return prefix
    matches: list[str] = [f.id for f in memory.list(user_id=user_id, status=None, limit=1000)
               if f.id.startswith(prefix)]  # fmt: skip
    if len(matches) != 1:
        raise InvalidInputError(f"{len(matches)} facts match id prefix {prefix!r}; give more of it")
    return matches[0]


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    data = _memory(args).export(user_id=args.user, agent_id=args.agent)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        out.write(f"exported {len(data['facts'])} fact(s) to {args.output}\n")
    else:
        out.write(text + "\n")
    return 0


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{args.file} is not JSON ({exc}); nothing was imported") from exc
    report = _memory(args).import_(data)
    out.write(f"imported {report.imported} fact(s), {report.profiles} profile(s) for "
              f"{', '.join(report.users) or 'no users'}\n")  # fmt: skip
    return 0


def cmd_serve(args: argparse.Namespace, out: TextIO) -> int:
    from recallmem.server.serve import serve

    return serve(host=args.host, port=args.port, chroma_url=args.chroma_url, home=args.home,
                 out=out)  # fmt: skip


def _scope_args(parser: argparse.ArgumentParser, *, user_required: bool = True) -> None:
    parser.add_argument("--user", required=user_required, help="user id")
    parser.add_argument("--agent", default=None, help="agent id (default: shared)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="recallmem", description="Long-term memory for agents.")
    parser.add_argument("--home", help="data directory (default: $RECALLMEM_HOME)")
    sub = parser.add_subparsers(dest="command", required=True)
    categories = [c.value for c in Category]

    p = sub.add_parser("remember", help="store a fact")
    p.add_argument("content")
    _scope_args(p)
    p.add_argument("--category", required=True, choices=categories)
    p.add_argument("--confidence", type=float, default=0.9)
    p.set_defaults(handler=cmd_remember)

    p = sub.add_parser("recall", help="search a user's facts")
    p.add_argument("query")
    _scope_args(p)
    p.add_argument("-k", type=int, default=6)
    p.set_defaults(handler=cmd_recall)

    p = sub.add_parser("list", help="list a user's facts")
    _scope_args(p)
    p.add_argument("--category", choices=categories)
    p.add_argument("--status", default="active",
                   choices=["active", "superseded", "done", "deleted", "all"])  # fmt: skip
    p.add_argument("--text", help="only facts containing this text")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("forget", help="forget a fact, a thread, an agent or a whole user")
    p.add_argument("fact_id", nargs="?")
    _scope_args(p, user_required=False)
    p.add_argument("--thread")
    p.add_argument("--purge", action="store_true", help="erase instead of soft-delete")
    p.set_defaults(handler=cmd_forget)

    p = sub.add_parser("export", help="write a user's memory as JSON")
    _scope_args(p)
    p.add_argument("-o", "--output")
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("import", help="read an export (all rows validated first)")
    p.add_argument("file", help="path, or - for stdin")
    p.set_defaults(handler=cmd_import)

    p = sub.add_parser("serve", help="run the HTTP API and the inspector page")
    p.add_argument("--host", help="interface to bind (default 127.0.0.1; loopback without tokens)")
    p.add_argument("--port", type=int, help="port (default 8765)")
    p.add_argument("--chroma-url", help="a Chroma server, e.g. http://127.0.0.1:8000")
    p.set_defaults(handler=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    stream = out or sys.stdout
    try:
        handler: Handler = args.handler
        return handler(args, stream)
    except (InvalidInputError, FactNotFoundError) as exc:
        print(f"recallmem: error: {exc}", file=sys.stderr)
        return 2
    except (RecallmemError, OSError) as exc:
        print(f"recallmem: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
