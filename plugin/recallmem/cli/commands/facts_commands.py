"""Fact commands: remember, recall, list, forget, export, import."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from recallmem.cli.common import Subparsers, open_memory, scope_args, table
from recallmem.errors import InvalidInputError
from recallmem.integrations.lookup import resolve_fact_id
from recallmem.limits import DEFAULT_PAGE, SHORT_ID_CHARS
from recallmem.text.jsontext import parse_json
from recallmem.types import Category, Fact, Status


def _shown(fact: Fact) -> str:
    """The content, and its keywords and search keys when it has any (as the inspector
    shows them)."""
    extra = [f"[keywords: {', '.join(fact.keywords)}]"] if fact.keywords else []
    extra += [f"[keys: {' | '.join(fact.questions)}]"] if fact.questions else []
    return "  ".join([fact.content, *extra])


def _fact_rows(facts: Sequence[Fact]) -> list[list[str]]:
    return [
        [f.id[:SHORT_ID_CHARS], f.category.value, f"{f.confidence:.2f}", f.status.value, _shown(f)]
        for f in facts
    ]


def cmd_remember(args: argparse.Namespace, out: TextIO) -> int:
    fact = open_memory(args).remember(
        args.content,
        user_id=args.user,
        agent_id=args.agent,
        category=args.category,
        confidence=args.confidence,
        valid_until=args.valid_until,
        keywords=args.keyword or (),
        questions=args.question or (),
    )
    out.write(f"{fact.id}  [{fact.category.value}] {_shown(fact)}\n")
    return 0


def cmd_recall(args: argparse.Namespace, out: TextIO) -> int:
    hits = open_memory(args).recall(args.query, user_id=args.user, agent_id=args.agent, k=args.k)
    rows = [
        [f"{h.score:.3f}", f"{h.parts.dense:.2f}", f"{h.parts.lexical:.2f}",
         h.fact.id[:SHORT_ID_CHARS], h.fact.category.value, _shown(h.fact)]
        for h in hits
    ]  # fmt: skip
    if not rows:
        out.write(f"no facts of user {args.user!r}{_agent(args)} match {args.query!r}\n")
        return 0
    out.write(table(rows, ["score", "dense", "lexical", "id", "category", "content"]))
    return 0


def cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    facts = open_memory(args).list(
        user_id=args.user,
        agent_id=args.agent,
        category=args.category,
        status=None if args.status == "all" else args.status,
        text=args.text,
        limit=args.limit,
        offset=args.offset,
    )
    if not facts:
        out.write(_nothing_listed(args) + "\n")
        return 0
    out.write(table(_fact_rows(facts), ["id", "category", "conf", "status", "content"]))
    return 0


def _agent(args: argparse.Namespace) -> str:
    return f" (shared or agent {args.agent!r})" if args.agent else ""


def _nothing_listed(args: argparse.Namespace) -> str:
    status = "" if args.status == "all" else f"{args.status} "
    narrowed = [f"category {args.category}"] if args.category else []
    narrowed += [f"containing {args.text!r}"] if args.text else []
    narrowed += [f"agent {args.agent!r}"] if args.agent else []
    where = f" ({', '.join(narrowed)})" if narrowed else ""
    page = f" past the first {args.offset}" if args.offset else ""
    return f"user {args.user!r} has no {status}facts{where}{page}"


def cmd_forget(args: argparse.Namespace, out: TextIO) -> int:
    if not args.fact_id and not args.user:
        raise InvalidInputError("give a fact id, or --user (optionally with --thread/--agent)")
    memory = open_memory(args)
    fact_id = resolve_fact_id(memory, args.fact_id, user_id=args.user) if args.fact_id else None
    count = memory.forget(
        fact_id, user_id=args.user, thread_id=args.thread, agent_id=args.agent, purge=args.purge
    )
    if fact_id is not None and count == 0:  # a soft forget of a fact forgotten before
        out.write(f"fact {fact_id[:SHORT_ID_CHARS]} was already forgotten; nothing changed "
                  "(--purge erases it)\n")  # fmt: skip
    else:
        out.write(f"{'purged' if args.purge else 'forgot'} {count} fact(s)\n")
    return 0


def cmd_move(args: argparse.Namespace, out: TextIO) -> int:
    memory = open_memory(args)
    fact = memory.move(resolve_fact_id(memory, args.fact_id, user_id=args.user),
                       user_id=args.user, agent_id=args.to_agent)  # fmt: skip
    where = f"agent {args.to_agent}" if args.to_agent else "the user's shared memory"
    out.write(f"moved {fact.id[:12]} to {where}\n")
    return 0


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    data = open_memory(args).export(user_id=args.user, agent_id=args.agent,
                                    embeddings=args.embeddings)  # fmt: skip
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        out.write(f"exported {len(data['facts'])} fact(s) to {args.output}\n")
    else:
        out.write(text + "\n")
    return 0


def cmd_import(args: argparse.Namespace, out: TextIO) -> int:
    raw = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    try:
        data = parse_json(raw)
    except InvalidInputError as exc:
        raise InvalidInputError(
            f"{args.file} cannot be imported: {exc}. Import a file `recallmem export` wrote; "
            "nothing was imported"
        ) from exc
    report = open_memory(args).import_(data)
    users = ", ".join(report.users) or "no users"
    out.write(f"imported {report.imported} fact(s), {report.profiles} profile(s) for {users}\n")
    return 0


def register(sub: Subparsers) -> None:
    """Add the fact commands."""
    categories = [c.value for c in Category]

    p = sub.add_parser("remember", help="store a fact")
    p.add_argument("content")
    scope_args(p)
    p.add_argument("--category", required=True, choices=categories)
    p.add_argument("--confidence", type=float, default=0.9)
    p.add_argument("--valid-until", help="when it stops being true: ISO time with offset")
    p.add_argument("--keyword", action="append",
                   help="a search word recall matches too (repeat it for several)")  # fmt: skip
    p.add_argument("--question", action="append",
                   help="a search key: a question the fact answers, embedded with it (repeat "
                        "it for several; default: the keying step writes some)")  # fmt: skip
    p.set_defaults(handler=cmd_remember)

    p = sub.add_parser("recall", help="search a user's facts")
    p.add_argument("query")
    scope_args(p)
    p.add_argument("-k", type=int, default=None, help="facts to return (default: recall_k)")
    p.set_defaults(handler=cmd_recall)

    p = sub.add_parser("list", help="list a user's facts")
    scope_args(p)
    p.add_argument("--category", choices=categories)
    p.add_argument("--status", default="active", choices=[*(s.value for s in Status), "all"])
    p.add_argument("--text", help="only facts containing this text")
    p.add_argument("--limit", type=int, default=DEFAULT_PAGE)
    p.add_argument("--offset", type=int, default=0)
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser("forget", help="forget a fact, a thread, an agent or a whole user")
    p.add_argument("fact_id", nargs="?", help="the id, or any unique prefix of it")
    scope_args(p, user_required=False)
    p.add_argument("--thread")
    p.add_argument("--purge", action="store_true", help="erase instead of soft-delete")
    p.set_defaults(handler=cmd_forget)

    p = sub.add_parser("move", help="move a fact to the user's shared memory or one agent's")
    p.add_argument("fact_id", help="the id, or any unique prefix of it")
    p.add_argument("--user", help="the fact's user (narrows a prefix)")
    to = p.add_mutually_exclusive_group(required=True)
    to.add_argument("--to-agent", metavar="AGENT", help="into this agent's own memory")
    to.add_argument("--shared", dest="to_agent", action="store_const", const=None,
                    help="into the user's shared memory, seen by every agent")  # fmt: skip
    p.set_defaults(handler=cmd_move)

    p = sub.add_parser("export", help="write a user's memory as JSON")
    scope_args(p)
    p.add_argument("-o", "--output")
    p.add_argument(
        "--embeddings", action="store_true",
        help="carry the vectors (an import with the same embedder keeps them)",
    )  # fmt: skip
    p.set_defaults(handler=cmd_export)

    p = sub.add_parser("import", help="read an export (all rows validated first)")
    p.add_argument("file", help="path, or - for stdin")
    p.set_defaults(handler=cmd_import)
