"""Keying requests for the measurement sets, and the keys read back from the replies.

Keys for measurement must be written by a real language model that sees only the facts,
as the product's keying step shows them (``prompts/keys.yaml``, ``limits.
KEYING_FACTS_PER_CALL`` facts of one user per call, rendered by
``recallmem.lifecycle.keying_prompt``), never the questions. So this module writes, per
set, one request per call the product would make:

- ``<requests>/<set>/NNN.json``: the messages exactly as the model would get them, the
  fact each shown id stands for, and where the reply goes;
- ``<requests>/<set>/NNN.md``: the same to read (and to paste into a model session).

A fresh model session answers each request with the JSON the prompt asks for, saved as
``<replies>/<set>/NNN.json`` (the model's whole answer; chatter around the JSON is read
as the product reads it). :func:`load_keys` reads the replies through the product's own
reader and vetting (``keying_prompt.read_keys``, ``search_keys.vet_questions``), so a
measurement uses exactly the keys the product would store.

``python -m bench.keys_requests render [--sets set_a set_i ...]`` writes the requests;
``python -m bench.keys_requests status`` counts the replies.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bilingual_data import BLIND_DIR, load_locomo_set, load_madial_set

BLIND_ROOT = Path(os.environ.get("RECALLMEM_BLIND_ROOT", "/work/blind"))
REQUESTS = BLIND_ROOT / "keys_requests"
REPLIES = BLIND_ROOT / "keys_replies"
# set_i, set_j: two query forms per question
NEW_BLIND = Path(os.environ.get("RECALLMEM_BENCH_NEW_BLIND", "/work/blind/retrieval"))
CONFLICTS_DEV = BLIND_DIR.parent / "conflicts_dev.json"
PUBLIC = ("locomo", "madial")  # read from ../shared/bench; their requests stay outside the repo


@dataclass(frozen=True)
class SetFact:
    """A fact of a measurement set as the keying step sees it: its text and category."""

    id: str
    text: str
    category: str


def set_paths() -> dict[str, Path]:
    """Every set file by name: set_a..h in the repository, set_i/j when present, and the
    hand-written development set of changes (``conflicts_dev``)."""
    found = {p.stem: p for p in sorted(BLIND_DIR.glob("*.json"))}
    found["conflicts_dev"] = CONFLICTS_DEV
    if NEW_BLIND.is_dir():
        found.update({p.stem: p for p in sorted(NEW_BLIND.glob("set_*.json"))})
    return found


def set_facts(name: str) -> list[tuple[str, list[SetFact]]]:
    """Per user, in the file's order, the facts of set ``name`` (never its questions)."""
    if name == "locomo":
        users = load_locomo_set("fact").users
    elif name == "madial":
        users = load_madial_set().users
    else:
        raw = json.loads(set_paths()[name].read_text(encoding="utf-8"))
        return [(str(u["user_id"]), [SetFact(str(f["id"]), str(f["text"]),
                                             str(f.get("category") or "context"))
                                     for f in u["facts"]]) for u in raw["users"]]  # fmt: skip
    return [(u.user_id, [SetFact(f.id, f.text, f.category) for f in u.facts]) for u in users]


def _product_fact(user_id: str, fact: SetFact) -> Any:
    from recallmem.types import Category, Fact

    category = fact.category if fact.category in set(Category) else "context"
    return Fact(id=_safe_id(fact.id), content=fact.text, category=category, user_id=user_id)


def _safe_id(fact_id: str) -> str:
    # LoCoMo and MADial ids hold '/' and ':'; a Fact id may not. The request maps them back.
    return fact_id.replace("/", "_").replace(":", "_")


def batches(name: str) -> Iterator[tuple[str, list[SetFact]]]:
    """The calls the product would make for the set: each user's facts in order, at most
    ``KEYING_FACTS_PER_CALL`` per call, one user per call."""
    from recallmem.limits import KEYING_FACTS_PER_CALL

    for user_id, facts in set_facts(name):
        for start in range(0, len(facts), KEYING_FACTS_PER_CALL):
            yield user_id, facts[start : start + KEYING_FACTS_PER_CALL]


def render(
    names: Sequence[str], requests: Path = REQUESTS, replies: Path = REPLIES
) -> dict[str, int]:
    """Write every request of the sets ``names``; how many per set."""
    from recallmem.lifecycle.keying_prompt import render_facts
    from recallmem.prompts import load_prompt

    prompt = load_prompt("keys")
    counts = {}
    for name in names:
        folder = requests / name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.*"):
            old.unlink()
        number = 0
        for number, (user_id, facts) in enumerate(batches(name), 1):
            shown = render_facts([_product_fact(user_id, f) for f in facts])
            messages = [{"role": role, "content": text}
                        for role, text in prompt.render(facts=shown.text)]  # fmt: skip
            reply = replies / name / f"{number:03d}.json"
            request = {"set": name, "number": number, "user_id": user_id, "prompt": prompt.label,
                       "refs": {ref: f.id for ref, f in zip(shown.refs, facts, strict=True)},
                       "reply_to": str(reply), "messages": messages}  # fmt: skip
            stem = folder / f"{number:03d}"
            stem.with_suffix(".json").write_text(
                json.dumps(request, ensure_ascii=False, indent=1), encoding="utf-8"
            )
            stem.with_suffix(".md").write_text(_readable(request), encoding="utf-8")
        counts[name] = number
    return counts


def _readable(request: dict[str, Any]) -> str:
    parts = [
        f"# Keying request {request['set']} {request['number']:03d} ({request['prompt']})\n",
        "You are the keying model. Read the two messages below (the system message, then "
        "the user's) and answer exactly as they ask: only the JSON object, nothing else. "
        f"Save your whole answer to `{request['reply_to']}`.\n",
    ]
    for message in request["messages"]:
        parts.append(f"## {message['role']}\n\n```text\n{message['content'].rstrip()}\n```\n")
    return "\n".join(parts)


@dataclass
class LoadedKeys:
    """Fact id -> vetted keys, read from the replies of one set, and what was missing."""

    keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    requests: int = 0
    answered: int = 0
    set_aside: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


def load_keys(name: str, requests: Path = REQUESTS, replies: Path = REPLIES) -> LoadedKeys:
    """The keys the replies of set ``name`` give each fact, vetted as the product vets
    them; a request without a reply leaves its facts without keys."""
    from recallmem.errors import ExtractionError
    from recallmem.extraction.scope_rules import load_scope_rules
    from recallmem.extraction.search_keys import vet_questions
    from recallmem.lifecycle.keying_prompt import read_keys, render_facts
    from recallmem.secrets.detector import load_secret_rules

    secrets, scope = load_secret_rules(), load_scope_rules()
    texts = {f.id: f for _, facts in set_facts(name) for f in facts}
    loaded = LoadedKeys()
    for path in sorted((requests / name).glob("*.json")):
        loaded.requests += 1
        request = json.loads(path.read_text(encoding="utf-8"))
        reply = replies / name / path.name
        if not reply.is_file():
            continue
        facts = [texts[i] for i in request["refs"].values()]
        shown = render_facts([_product_fact(request["user_id"], f) for f in facts])
        try:
            raw, unreadable = read_keys(reply.read_text(encoding="utf-8"), shown)
        except ExtractionError as exc:
            loaded.unreadable.append(f"{path.stem}: {exc}")
            continue
        loaded.answered += 1
        loaded.unreadable += [f"{path.stem}: {u}" for u in unreadable]
        for ref, value in raw.items():
            fact = texts[request["refs"][ref]]
            vetted = vet_questions(value, fact.text, secrets, scope)
            loaded.keys[fact.id] = vetted.kept
            loaded.set_aside += [f"{fact.id}: {r.key} ({r.reason})" for r in vetted.rejected]
    return loaded


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.keys_requests")
    parser.add_argument("action", choices=("render", "status"))
    parser.add_argument("--sets", nargs="*", help="default: every blind set found")
    args = parser.parse_args(argv)
    names = args.sets or list(set_paths())
    if args.action == "render":
        for name, count in render(names).items():
            print(f"{name}: {count} requests in {REQUESTS / name}")
        return
    for name in names:
        got = load_keys(name)
        print(f"{name}: {got.answered}/{got.requests} answered, {len(got.keys)} facts keyed, "
              f"{sum(map(len, got.keys.values()))} keys, {len(got.set_aside)} set aside, "
              f"{len(got.unreadable)} unreadable")  # fmt: skip


if __name__ == "__main__":
    main()
