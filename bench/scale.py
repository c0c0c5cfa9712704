"""How recall latency, remember throughput and cold start grow with the corpus.

Synthetic facts (bench.synthetic), 100 per user, so 100k facts are 1,000 users; the 1M
run has 1,000 per user (1,000 users) and a hashing embedder (see ``_memory``); plus one
user holding every fact, up to 10k, the worst case for the per-user index. Recall is
timed over users drawn at random, first in a fresh process (each user's index is loaded
from Chroma), then again (cached, up to ``index_cache_facts``), and over one hot user.
Each size runs in its own process, in a fresh home.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.metrics import percentiles_ms
from bench.report import (
    load_results,
    machine_note,
    markdown_table,
    save_results,
    write_section,
)
from bench.runner import peak_rss_mb
from bench.synthetic import synthetic_fact, synthetic_query, synthetic_questions

FACTS_PER_USER = 100
SIZES = (1_000, 10_000, 100_000, 1_000_000)
# One user with 100k facts loads in pages since recallmem 0.1.0 but takes minutes of USE
# embedding to store; the design caps a scope at max_facts_per_scope (1,000) anyway.
SINGLE_USER_SIZES = (1_000, 10_000)
BATCH = 2_000
QUERIES = 200
HASHING_FROM = 1_000_000  # from this size on, the load uses a hashing embedder (see _memory)


def _memory(home: Path, hashing: bool = False) -> Any:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory

    if not hashing:
        return Memory(MemoryConfig(home=home))
    from recallmem.testing import HashingEmbeddings

    # 1M facts through USE is hours of embedding on two shared cores; a hashing embedder
    # of the same width keeps the storage and index work real and makes embedding free.
    return Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(dimension=512))


def _load(memory: Any, size: int, users: int, keys: bool = False) -> float:
    """Store ``size`` facts over ``users`` users with remember_many (each with its
    synthetic search keys if ``keys``); seconds taken."""
    per_user = size // users
    started = time.perf_counter()
    for user in range(users):
        first = user * per_user
        for start in range(first, first + per_user, BATCH):
            stop = min(start + BATCH, first + per_user)
            items = [
                {"content": synthetic_fact(i), "category": "context",
                 **({"questions": synthetic_questions(i)} if keys else {})}
                for i in range(start, stop)
            ]  # fmt: skip
            memory.remember_many(items, user_id=f"user-{user}")
    return time.perf_counter() - started


def _time_recalls(memory: Any, users: list[str], seed: int, queries: int) -> dict[str, float]:
    rng = random.Random(seed)
    durations = []
    for n in range(queries):
        user = users[rng.randrange(len(users))]
        started = time.perf_counter()
        memory.recall(synthetic_query(n), user_id=user, k=10)
        durations.append(time.perf_counter() - started)
    return percentiles_ms(durations)


def measure(
    size: int, users: int, queries: int = QUERIES, hashing: bool = False, keys: bool = False
) -> dict[str, Any]:
    """Load ``size`` facts over ``users`` users (with search keys if ``keys``), then time
    recalls; in this process."""
    with tempfile.TemporaryDirectory(prefix="recallmem-scale-") as home:
        memory = _memory(Path(home), hashing)
        memory.recall("warm up", user_id="warm-up", k=1)
        load_seconds = _load(memory, size, users, keys)
        store_mb = sum(p.stat().st_size for p in Path(home).rglob("*") if p.is_file()) / 2**20
        names = [f"user-{u}" for u in range(users)]
        # A fresh process sees every user cold: drop what loading left in the cache.
        memory.close()
        memory = _memory(Path(home), hashing)
        memory.recall("warm up", user_id="warm-up", k=1)
        # The same random users twice: first each user's index loads (cold), then it is
        # in the process's cache (warm; 200 users fit the default cache of 512).
        cold_users = _time_recalls(memory, names, seed=size, queries=queries)
        random_users = _time_recalls(memory, names, seed=size, queries=queries)
        memory.recall("warm up", user_id=names[0], k=1)
        hot_user = _time_recalls(memory, names[:1], seed=size + 1, queries=queries)
        # list() pages at most 1,000: enough to see that no synthetic fact was merged.
        stored = len(memory.list(user_id=names[0], limit=min(size // users, 1000)))
        memory.close()
    return {
        "size": size,
        "users": users,
        "stored_first_user": stored,
        "remember_per_second": round(size / load_seconds, 1),
        "recall_cold_user_ms": cold_users,
        "recall_random_user_ms": random_users,
        "recall_hot_user_ms": hot_user,
        "peak_rss_mb": peak_rss_mb(),
        "store_mb": round(store_mb, 1),
        "keys": keys,
        "embedder": "hashing (no model)" if hashing else "USE",
    }


def _child(size: int, users: int, queue: Any, hashing: bool = False) -> None:
    try:
        queue.put(("ok", measure(size, users, hashing=hashing)))
    except BaseException as error:  # the parent reports it
        queue.put(("error", f"{type(error).__name__}: {error}"))


def measure_isolated(size: int, users: int, hashing: bool = False) -> dict[str, Any]:
    """``measure`` in a spawned process, so sizes do not share caches or memory."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(size, users, queue, hashing))
    process.start()
    status, payload = queue.get()
    process.join()
    if status != "ok":
        raise RuntimeError(f"scale run at {size} facts failed: {payload}")
    result: dict[str, Any] = payload
    return result


_COLD_START = """
import json, sys, time
t0 = time.perf_counter()
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
t1 = time.perf_counter()
memory = Memory(MemoryConfig(home=sys.argv[1]))
t2 = time.perf_counter()
memory.recall("What did Ada do with a kayak?", user_id="user-0", k=6)
t3 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "open_ms": (t2 - t1) * 1e3,
                  "first_recall_ms": (t3 - t2) * 1e3, "total_ms": (t3 - t0) * 1e3}))
"""


def cold_start(facts: int = 1_000, runs: int = 3) -> dict[str, float]:
    """Median time from a fresh interpreter's import to its first recall, on a stored home."""
    with tempfile.TemporaryDirectory(prefix="recallmem-cold-") as home:
        memory = _memory(Path(home))
        _load(memory, facts, max(1, facts // FACTS_PER_USER))
        memory.close()
        samples = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", _COLD_START, home],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            for _ in range(runs)
        ]
    return {key: round(sorted(s[key] for s in samples)[runs // 2], 1) for key in samples[0]}


def scale(
    quick: bool = False, write: bool = True, sizes: tuple[int, ...] = SIZES
) -> dict[str, Any]:
    """Run every size; print and (optionally) write the section."""
    if not sizes:
        raise ValueError(f"no corpus size selected; sizes are {', '.join(map(str, SIZES))}")
    single: tuple[int, ...]
    if quick:
        sizes, single = (200,), (200,)
    else:
        single = tuple(s for s in SINGLE_USER_SIZES if min(sizes) <= s <= max(sizes))
    spread = [_attempt(s, _users(s), hashing=s >= HASHING_FROM) for s in sizes]
    one_user = [_attempt(s, 1) for s in single]
    cold = cold_start(200 if quick else 1_000, runs=1 if quick else 3)
    results = {"spread": spread, "single_user": one_user, "cold_start": cold}
    if write and not quick:
        results = _merged(results)
    body = render(results)
    print(body)
    if write:
        save_results("scale", results)
        write_section("scale", body)
    return results


def _attempt(size: int, users: int, hashing: bool = False) -> dict[str, Any]:
    """``measure_isolated``, or the failure as a row: one size failing loses no other."""
    try:
        return measure_isolated(size, users, hashing)
    except RuntimeError as error:
        print(error, flush=True)
        return {"size": size, "users": users, "error": str(error)}


def _users(size: int) -> int:
    # 100 facts per user; the 1M run uses 1,000 per user so that remember_many writes in
    # batches of 1,000 (10,000 small writes would measure Chroma's per-call overhead).
    per_user = 1_000 if size >= HASHING_FROM else FACTS_PER_USER
    return max(1, size // per_user)


def _merged(fresh: dict[str, Any]) -> dict[str, Any]:
    """Fresh runs replace saved ones of the same size; other saved sizes are kept, so
    the slow 1M run can be measured on its own (``--max-facts``/``--min-facts``)."""
    try:
        saved = load_results("scale")
    except FileNotFoundError:
        return fresh
    merged: dict[str, Any] = {"cold_start": fresh["cold_start"]}
    for group in ("spread", "single_user"):
        by_size = {run["size"]: run for run in saved.get(group, [])}
        by_size.update({run["size"]: run for run in fresh[group]})
        merged[group] = [by_size[size] for size in sorted(by_size)]
    return merged


def render(results: dict[str, Any]) -> str:
    """The scale section as markdown."""
    headers = [
        "facts",
        "users",
        "remember_many facts/s",
        "first recall of a user p50 ms",
        "p95",
        "recall p50 ms (random user)",
        "p95",
        "recall p50 ms (hot user)",
        "p95",
        "peak RSS MB",
        "embedder",
    ]

    def rows(runs: list[dict[str, Any]]) -> list[list[Any]]:
        return [
            [f"{r['size']:,}", f"{r['users']:,}", f"failed: {r['error']}"] + [None] * 8
            if "error" in r
            else [
                f"{r['size']:,}",
                f"{r['users']:,}",
                r["remember_per_second"],
                r.get("recall_cold_user_ms", {}).get("p50"),
                r.get("recall_cold_user_ms", {}).get("p95"),
                r["recall_random_user_ms"]["p50"],
                r["recall_random_user_ms"]["p95"],
                r["recall_hot_user_ms"]["p50"],
                r["recall_hot_user_ms"]["p95"],
                r["peak_rss_mb"],
                r.get("embedder", "USE"),
            ]
            for r in runs
        ]

    cold = results["cold_start"]
    return (
        "## Scale\n\n"
        f"Synthetic facts, {FACTS_PER_USER} per user, stored with `remember_many`; "
        f"{QUERIES} recalls (k=10) per size. 'first recall of a user' draws users at random "
        "in a fresh process, so each recall first loads that user's index from Chroma; "
        "'random user' asks the same users again, indexes now cached; 'hot user' repeats "
        "one user. Latencies include embedding the query. The 1M row "
        "stores its facts through a hashing embedder of the same width (USE would take "
        "hours here): storage, index and ranking are real, the embedding is free, so add "
        "the USE query embedding (a few ms, see the 100k row) to its recall times; it has "
        "1,000 facts per user, so its 200 'random users' (200k facts) exceed the default "
        "index cache (`index_cache_facts` 150,000): there, every recall reloads its user "
        "from Chroma, and that load is what grows with the collection.\n\n"
        + markdown_table(headers, rows(results["spread"]))
        + "\n\nOne user holding every fact (the per-user index's worst case):\n\n"
        + markdown_table(headers, rows(results["single_user"]))
        + "\n\nCold start (fresh interpreter, stored home; median of runs): import "
        f"{cold['import_ms']:.0f} ms, open {cold['open_ms']:.0f} ms, first recall "
        f"(loads the embedder) {cold['first_recall_ms']:.0f} ms, total "
        f"{cold['total_ms']:.0f} ms.\n\n{machine_note()}\n"
    )
