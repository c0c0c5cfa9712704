"""The evaluation matrix's data: blind bilingual sets, LoCoMo, MADial and MemoryBank-CN,
all in one shape, with the per-question split, size buckets and padded users.

Every set is users with facts and questions. A fact *cites* ids (a blind fact cites its
own id, a LoCoMo fact the dialog ids it was distilled from); a question names *gold*
ids, and is answerable when it has any. Blind sets live in ``bench/data/bilingual/``
(written by people who have not seen the ranking code); the public benchmarks are read
from ``../shared/bench`` at run time and never copied.

>>> split_of("a1-q01"), split_of("a1-q02")
('test', 'dev')
>>> [size_bucket(n) for n in (14, 60, 150, 600, 1150)]
['~15', '~50', '~150', '~500', '1000+']
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.data import (
    REPO_ROOT,
    Doc,
    data_dir,
    load_locomo_raw,
    load_madial,
    locomo_fact_docs,
    locomo_queries,
    locomo_turn_docs,
)

BLIND_DIR = REPO_ROOT / "bench" / "data" / "bilingual"
BLIND_KINDS = (
    "en_en",
    "zh_zh",
    "en_zh",
    "zh_en",
    "keyword",
    "paraphrase",
    "trap",
    "dialogue",
    "noanswer",
)
NOANSWER = "noanswer"
LANGUAGES = ("mixed", "en", "zh")
PAD_DISTRACTORS = 1000  # distractor memories added to each mixed user's padded variant
SPLITS = ("dev", "test")
_DATED_QUESTION = re.compile(r"(\d{1,2})月(\d{1,2})[日号]")


@dataclass(frozen=True)
class Fact:
    """One memory to store, the ids it cites, and when it was said."""

    id: str
    text: str
    cites: frozenset[str]
    category: str = "context"
    said_at: datetime | None = None


@dataclass(frozen=True)
class Question:
    """One question: its kind and gold ids (none: memory cannot answer it)."""

    id: str
    text: str
    kind: str
    gold: frozenset[str]
    asked_at: datetime | None = None
    labelled: bool = True  # False: no gold could be built honestly (retrieval-only)

    @property
    def answerable(self) -> bool:
        return self.labelled and bool(self.gold)

    @property
    def split(self) -> str:
        return split_of(self.id)


@dataclass(frozen=True)
class User:
    """One user's memory and the questions asked of it."""

    user_id: str
    languages: str
    facts: tuple[Fact, ...]
    questions: tuple[Question, ...]

    @property
    def size(self) -> str:
        return size_bucket(len(self.facts))


@dataclass(frozen=True)
class EvalSet:
    """A named set of users; ``source`` says where it comes from."""

    name: str
    source: str
    users: tuple[User, ...]

    @property
    def n_facts(self) -> int:
        return sum(len(u.facts) for u in self.users)

    @property
    def n_questions(self) -> int:
        return sum(len(u.questions) for u in self.users)


def split_of(question_id: str) -> str:
    """``dev`` when the sha1 of the question id is even, else ``test``."""
    digest = hashlib.sha1(question_id.encode("utf-8")).hexdigest()
    return "dev" if int(digest, 16) % 2 == 0 else "test"


SIZE_BUCKETS = ("~15", "~50", "~150", "~500", "1000+")


def size_bucket(n_facts: int) -> str:
    """The memory-size bucket of a user with ``n_facts`` facts."""
    if n_facts <= 30:
        return "~15"
    if n_facts <= 100:
        return "~50"
    if n_facts <= 400:
        return "~150"
    if n_facts <= 800:
        return "~500"
    return "1000+"


def parse_time(text: str | None) -> datetime | None:
    """An ISO 8601 time (``2026-10-03T09:12:00Z``) in UTC; None stays None."""
    if text is None:
        return None
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


# --- blind bilingual sets --------------------------------------------------------------


class BlindSetError(ValueError):
    """A blind set file does not have the documented shape."""


def load_blind_set(path: Path) -> EvalSet:
    """One ``bench/data/bilingual/<name>.json`` file (format in bench/README.md)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        users = tuple(_blind_user(u) for u in raw["users"])
        name = str(raw.get("name") or path.stem)
    except (KeyError, TypeError, ValueError) as error:
        raise BlindSetError(
            f"{path}: {error}; expected {{'name', 'users': [{{'user_id', 'languages', "
            "'facts': [{'id', 'text', 'lang', 'category', 'said_at'}], 'questions': "
            "[{'id', 'text', 'kind', 'gold', 'asked_at'}]}]} (see bench/README.md); "
            "fix the file and run again"
        ) from error
    return EvalSet(name, "blind", users)


def _blind_user(raw: dict[str, Any]) -> User:
    user_id = str(raw["user_id"])
    languages = str(raw.get("languages", "mixed"))
    if languages not in LANGUAGES:
        raise ValueError(f"user {user_id}: languages {languages!r} is not one of {LANGUAGES}")
    facts = tuple(
        Fact(
            str(f["id"]),
            str(f["text"]),
            frozenset({str(f["id"])}),
            str(f.get("category") or "context"),
            parse_time(f.get("said_at")),
        )
        for f in raw["facts"]
    )
    known = {f.id for f in facts}
    if len(known) != len(facts):
        raise ValueError(f"user {user_id}: two facts share an id")
    questions = tuple(_blind_question(user_id, q, known) for q in raw["questions"])
    return User(user_id, languages, facts, questions)


def _blind_question(user_id: str, raw: dict[str, Any], known: set[str]) -> Question:
    question_id, kind = str(raw["id"]), str(raw["kind"])
    gold = frozenset(str(g) for g in raw.get("gold") or ())
    if kind not in BLIND_KINDS:
        raise ValueError(f"question {question_id}: kind {kind!r} is not one of {BLIND_KINDS}")
    if (kind == NOANSWER) != (not gold):
        raise ValueError(f"question {question_id}: gold must be empty exactly for 'noanswer'")
    if gold - known:
        missing = ", ".join(sorted(gold - known))
        raise ValueError(f"question {question_id}: gold {missing} is not a fact of {user_id}")
    return Question(question_id, str(raw["text"]), kind, gold, parse_time(raw.get("asked_at")))


def blind_dir() -> Path:
    """Where the blind sets are: ``bench/data/bilingual`` (``RECALLMEM_BENCH_BLIND`` overrides)."""
    override = os.environ.get("RECALLMEM_BENCH_BLIND")
    return Path(override) if override else BLIND_DIR


def load_blind_sets(folder: Path | None = None) -> list[EvalSet]:
    """Every blind set in ``folder``, by file name; none when the folder is absent."""
    folder = folder or blind_dir()
    return [load_blind_set(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


# --- public benchmarks in the same shape -----------------------------------------------


def _from_doc(doc: Doc) -> Fact:
    return Fact(doc.id, doc.text, doc.evidence, "context", doc.time)


def load_locomo_set(level: str) -> EvalSet:
    """LoCoMo at ``fact`` or ``turn`` level, every memory with its session's date.

    Kinds are the question categories; category 5 (adversarial: the conversation does not
    say) is ``noanswer``.
    """
    builders = {"fact": locomo_fact_docs, "turn": locomo_turn_docs}
    users = []
    for sample in load_locomo_raw():
        questions = [Question(q.id, q.text, q.category, q.gold) for q in locomo_queries(sample)] + [
            Question(f"{sample['sample_id']}/q{n}", qa["question"], NOANSWER, frozenset())
            for n, qa in enumerate(sample["qa"])
            if int(qa.get("category", 0)) == 5
        ]
        facts = tuple(_from_doc(d) for d in builders[level](sample))
        users.append(User(sample["sample_id"], "en", facts, tuple(questions)))
    return EvalSet(f"locomo-{level}", "locomo", tuple(users))


def load_madial_set() -> EvalSet:
    """MADial-Bench zh: memory events, dialogue queries (kind ``dialogue``)."""
    users = []
    for corpus in load_madial("all").corpora:
        questions = tuple(Question(q.id, q.text, "dialogue", q.gold) for q in corpus.queries)
        facts = tuple(_from_doc(d) for d in corpus.docs)
        users.append(User(corpus.user_id, "zh", facts, questions))
    return EvalSet("madial", "madial", tuple(users))


def _memorybank_files(folder: Path | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    base = folder or data_dir() / "memorybank_cn"
    bank, probes = base / "memory_bank_cn.json", base / "probing_questions_cn.jsonl"
    if not bank.exists() or not probes.exists():
        raise FileNotFoundError(
            f"MemoryBank-CN data not found in {base}; set RECALLMEM_BENCH_DATA to the "
            "folder holding memorybank_cn/"
        )
    lines = probes.read_text(encoding="utf-8").splitlines()
    return json.loads(bank.read_text(encoding="utf-8")), [json.loads(x) for x in lines if x]


def memorybank_turn_text(turn: dict[str, Any]) -> str:
    """A stored turn: the user's words, then the companion's reply, one per line."""
    return f"{turn['query']}\n{turn['response']}"


def load_memorybank_set(folder: Path | None = None) -> EvalSet:
    """MemoryBank-CN: every dated turn is one memory; the probing questions are asked.

    The probing questions come without gold. The one honest rule applied: a question
    that names a day ("5月2日", "4月27号") has as gold every turn of that day of that
    user (kind ``dated``); the others are asked but unlabelled (kind ``unlabelled``),
    counted for coverage and latency only, never in a quality figure.
    """
    bank, probes = _memorybank_files(folder)
    asked = {name: qs for line in probes for name, qs in line.items()}
    users = []
    for number, (name, record) in enumerate(bank.items()):
        user_id = f"memorybank-{number:02d}"
        facts: list[Fact] = []
        days: dict[tuple[int, int], set[str]] = {}
        for day, turns in record["history"].items():
            said = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
            for turn_number, turn in enumerate(turns):
                fact_id = f"{user_id}/{day}/{turn_number}"
                facts.append(
                    Fact(fact_id, memorybank_turn_text(turn), frozenset({fact_id}), "context", said)
                )
                days.setdefault((said.month, said.day), set()).add(fact_id)
        questions = tuple(
            _memorybank_question(f"{user_id}/p{n}", text, days)
            for n, text in enumerate(asked.get(name, ()))
        )
        users.append(User(user_id, "zh", tuple(facts), questions))
    return EvalSet("memorybank-cn", "memorybank", tuple(users))


def _memorybank_question(
    question_id: str, text: str, days: dict[tuple[int, int], set[str]]
) -> Question:
    match = _DATED_QUESTION.search(text)
    gold = days.get((int(match.group(1)), int(match.group(2))), set()) if match else set()
    if gold:
        return Question(question_id, text, "dated", frozenset(gold))
    return Question(question_id, text, "unlabelled", frozenset(), labelled=False)


# --- padded users -----------------------------------------------------------------------


def distractor_pools(
    locomo: EvalSet, madial: EvalSet, memorybank: EvalSet
) -> tuple[list[Fact], list[Fact]]:
    """English (LoCoMo observations) and Chinese (MemoryBank turns, MADial events) facts
    to pad a user with; they cite nothing, so they are never gold."""

    def pool(sets: Sequence[EvalSet]) -> list[Fact]:
        return [
            Fact(f"pad/{f.id}", f.text, frozenset(), "context", f.said_at)
            for s in sets
            for u in s.users
            for f in u.facts
        ]

    return pool([locomo]), pool([memorybank, madial])


def padded(
    user: User, english: Sequence[Fact], chinese: Sequence[Fact], n: int = PAD_DISTRACTORS
) -> User:
    """The user with ``n`` distractors added, half English, half Chinese, drawn with a
    seed from the user id (the same draw every run); questions and gold unchanged."""
    draw = random.Random(hashlib.sha1(user.user_id.encode("utf-8")).hexdigest())
    half = n // 2
    extra = draw.sample(list(english), min(half, len(english)))
    extra += draw.sample(list(chinese), min(n - half, len(chinese)))
    own = {f.text for f in user.facts}
    facts = user.facts + tuple(f for f in extra if f.text not in own)
    return replace(user, user_id=f"{user.user_id}+pad", facts=facts)


def padded_set(
    blind: EvalSet, english: Sequence[Fact], chinese: Sequence[Fact], n: int = PAD_DISTRACTORS
) -> EvalSet:
    """The padded variant of every mixed-language user of a blind set."""
    users = tuple(padded(u, english, chinese, n) for u in blind.users if u.languages == "mixed")
    return EvalSet(f"{blind.name}+pad", "blind-padded", users)
