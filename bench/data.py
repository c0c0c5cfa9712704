"""Benchmark datasets as plain corpora: per user, the documents to store and the queries.

Every benchmark reduces to the same shape, so one runner scores them all: a ``Corpus``
is one user's memories (``Doc``) and questions (``Query``); a document *cites* evidence
ids and a query names its *gold* ids. Recall@k is the share of a query's gold ids cited
by the top-k documents (see ``bench.metrics``).

The data is read from ``../shared/bench`` beside the repository at run time (LoCoMo is
licensed for non-commercial research only: it is never copied into the project).
Override the folder with ``RECALLMEM_BENCH_DATA``.

>>> normalize_evidence("D8:6; D9:17")
('D8:6', 'D9:17')
>>> normalize_evidence("D30:05")
('D30:5',)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
LOCOMO_DEV_CONVERSATIONS = range(5)  # conversations 0-4 tune; 5-9 are the held-out result

_EVIDENCE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Doc:
    """One memory to store; ``evidence`` are the gold ids it stands for."""

    id: str
    text: str
    evidence: frozenset[str]
    time: datetime | None = None


@dataclass(frozen=True)
class Query:
    """One question; ``gold`` are the evidence ids a good answer must draw on."""

    id: str
    text: str
    gold: frozenset[str]
    category: str


@dataclass(frozen=True)
class Corpus:
    """One user's memories and the questions asked of them."""

    user_id: str
    docs: tuple[Doc, ...]
    queries: tuple[Query, ...]


@dataclass(frozen=True)
class Dataset:
    """A named benchmark: its corpora and the cut-offs k it is scored at."""

    name: str
    corpora: tuple[Corpus, ...]
    ks: tuple[int, ...]

    @property
    def n_docs(self) -> int:
        return sum(len(c.docs) for c in self.corpora)

    @property
    def n_queries(self) -> int:
        return sum(len(c.queries) for c in self.corpora)

    def subset(self, max_corpora: int, max_queries: int | None = None) -> Dataset:
        """The first corpora that have queries (and their first queries), for a quick run."""
        asked = [c for c in self.corpora if c.queries][:max_corpora]
        corpora = tuple(
            Corpus(c.user_id, c.docs, c.queries[:max_queries] if max_queries else c.queries)
            for c in asked
        )
        return Dataset(self.name, corpora, self.ks)


def data_dir() -> Path:
    """Where the shared benchmark data lives (``RECALLMEM_BENCH_DATA`` overrides)."""
    override = os.environ.get("RECALLMEM_BENCH_DATA")
    return Path(override) if override else REPO_ROOT.parent / "shared" / "bench"


def normalize_evidence(raw: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical dialog ids ``D<session>:<turn>`` from a possibly malformed annotation.

    LoCoMo's annotations hold several ids in one string ("D8:6; D9:17", "D9:1 D4:4"),
    zero-padded turns ("D30:05"), a stray colon ("D:11:26") and bare "D"; the last
    carries no id and is dropped.

    >>> normalize_evidence(["D:11:26", "D", "D21:18 D11:15"])
    ('D11:26', 'D21:18', 'D11:15')
    """
    parts = [raw] if isinstance(raw, str) else list(raw)
    ids: list[str] = []
    for part in parts:
        for session, turn in _EVIDENCE_ID.findall(part):
            canonical = f"D{int(session)}:{int(turn)}"
            if canonical not in ids:
                ids.append(canonical)
    return tuple(ids)


# --- LoCoMo -------------------------------------------------------------------------


def load_locomo_raw(path: Path | None = None) -> list[dict[str, Any]]:
    """The LoCoMo conversations as parsed JSON (ten of them)."""
    file = path or data_dir() / "locomo" / "locomo10.json"
    if not file.exists():
        raise FileNotFoundError(
            f"LoCoMo data not found at {file}; set RECALLMEM_BENCH_DATA to the folder "
            "holding locomo/locomo10.json"
        )
    data: list[dict[str, Any]] = json.loads(file.read_text(encoding="utf-8"))
    return data


def parse_locomo_time(text: str) -> datetime:
    """LoCoMo session times look like ``1:56 pm on 8 May, 2023``."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _session_times(conversation: dict[str, Any]) -> dict[int, datetime]:
    times = {}
    for key, value in conversation.items():
        match = re.fullmatch(r"session_(\d+)_date_time", key)
        if match and isinstance(value, str):
            times[int(match.group(1))] = parse_locomo_time(value)
    return times


def locomo_queries(sample: dict[str, Any]) -> tuple[Query, ...]:
    """Questions of categories 1-4 whose evidence names at least one dialog id."""
    queries = []
    for number, qa in enumerate(sample["qa"]):
        category = LOCOMO_CATEGORIES.get(int(qa.get("category", 0)))
        gold = frozenset(normalize_evidence(qa.get("evidence", [])))
        if category is None or not gold:
            continue  # adversarial questions, or no usable evidence to score against
        queries.append(Query(f"{sample['sample_id']}/q{number}", qa["question"], gold, category))
    return tuple(queries)


def locomo_fact_docs(sample: dict[str, Any]) -> tuple[Doc, ...]:
    """Each ``observation`` fact, citing the dialog ids it was distilled from."""
    times = _session_times(sample["conversation"])
    docs = []
    for session_key, by_speaker in sample["observation"].items():
        session = int(re.findall(r"\d+", session_key)[0])
        for speaker, facts in by_speaker.items():
            for number, (text, evidence) in enumerate(facts):
                doc_id = f"{sample['sample_id']}/s{session}/{speaker}/{number}"
                ids = frozenset(normalize_evidence(evidence))
                docs.append(Doc(doc_id, text, ids, times.get(session)))
    return tuple(docs)


def locomo_turn_docs(sample: dict[str, Any]) -> tuple[Doc, ...]:
    """Each dialog turn as ``Speaker: text`` (with the shared image's caption, if any)."""
    conversation = sample["conversation"]
    times = _session_times(conversation)
    docs = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if not match or not isinstance(turns, list):
            continue
        for turn in turns:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            ids = frozenset(normalize_evidence(turn["dia_id"]))
            doc_id = f"{sample['sample_id']}/{next(iter(ids))}"
            docs.append(Doc(doc_id, text, ids, times.get(int(match.group(1)))))
    return tuple(docs)


def load_locomo(level: str = "fact", split: str = "all", path: Path | None = None) -> Dataset:
    """LoCoMo at ``fact`` or ``turn`` level; ``split`` is ``dev`` (0-4), ``test`` or ``all``."""
    builders = {"fact": locomo_fact_docs, "turn": locomo_turn_docs}
    if level not in builders:
        raise ValueError(f"unknown LoCoMo level {level!r}; use 'fact' or 'turn'")
    corpora = [
        Corpus(sample["sample_id"], builders[level](sample), locomo_queries(sample))
        for index, sample in enumerate(load_locomo_raw(path))
        if _in_split(index in LOCOMO_DEV_CONVERSATIONS, split)
    ]
    return Dataset(f"locomo-{level}", tuple(corpora), (5, 10, 20))


def _in_split(is_dev: bool, split: str) -> bool:
    if split not in ("dev", "test", "all"):
        raise ValueError(f"unknown split {split!r}; use 'dev', 'test' or 'all'")
    return split == "all" or (split == "dev") == is_dev


# --- MADial-Bench (Chinese) -----------------------------------------------------------

_UTTERANCE = re.compile(r'^<([^>]+)>\s*[:：]\s*"?(.*?)"?\s*$', re.DOTALL)


def _json_lines(file: Path) -> list[dict[str, Any]]:
    if not file.exists():
        raise FileNotFoundError(
            f"MADial-Bench data not found at {file}; set RECALLMEM_BENCH_DATA to the folder "
            "holding madial_bench_zh/"
        )
    lines = file.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def madial_query(dialogue: Sequence[str], test_turns: Sequence[int]) -> str:
    """The words of the conversation before the first test turn, one utterance a line.

    Speaker tags (``<Bart>:``, ``<Assistant>:``) and the ``<BOD>`` marker are dropped:
    they are markup, not content, and with them dense recall@10 falls by eight points.

    >>> madial_query(['<BOD>\\n', '<Bart>:"我要表演魔术！"\\n', '<Assistant>:"太棒了"\\n'], [2])
    '我要表演魔术！'
    """
    lines = []
    for utterance in dialogue[: min(test_turns)]:
        match = _UTTERANCE.match(utterance.strip())
        if match:
            lines.append(match.group(2))
    return "\n".join(lines)


def load_madial(split: str = "all", folder: Path | None = None) -> Dataset:
    """MADial-Bench zh: per user, the memories' ``event`` texts and the dialogue queries.

    Dialogues with an even ``id`` are the development half, odd ones the held-out half.
    """
    base = folder or data_dir() / "madial_bench_zh"
    memories = [
        record
        for line in _json_lines(base / "MADial-Bench-zh-memory.json")
        for record in line.values()
    ]
    dialogues = _json_lines(base / "MADial-Bench-zh-dialogue.json")
    users = sorted({str(m["user-id"]) for m in memories})
    corpora = []
    for user in users:
        docs = tuple(
            Doc(str(m["id"]), m["event"], frozenset({str(m["id"])}), _madial_time(m["time"]))
            for m in memories
            if str(m["user-id"]) == user
        )
        queries = tuple(
            Query(
                f"madial/{d['id']}",
                madial_query(d["dialogue"], d["test-turn"]),
                frozenset(str(i) for i in d["relevant-id"]),
                "all",
            )
            for d in dialogues
            if str(d["user-id"]) == user and _in_split(int(d["id"]) % 2 == 0, split)
        )
        corpora.append(Corpus(f"madial-user-{user}", docs, queries))
    return Dataset("madial", tuple(corpora), (1, 3, 5, 10))


def _madial_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None


DATASET_NAMES = ("locomo-fact", "locomo-turn", "madial")


def load_dataset(name: str, split: str = "all", max_corpora: int | None = None) -> Dataset:
    """A dataset by name (``locomo-fact``, ``locomo-turn``, ``madial``) and split."""
    if name == "madial":
        dataset = load_madial(split)
    elif name.startswith("locomo-"):
        dataset = load_locomo(name.removeprefix("locomo-"), split)
    else:
        raise ValueError(f"unknown dataset {name!r}; choose one of {', '.join(DATASET_NAMES)}")
    return dataset.subset(max_corpora) if max_corpora else dataset
