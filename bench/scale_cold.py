"""A cold user's first recall against the store's size: the storage layout's bench.

Synthetic facts (bench.synthetic) through a hashing embedder of 512 dimensions (marked
as such: storage, index and ranking are real, embedding is free), 100 facts per user,
so 10k facts are 100 users and 1M facts 10,000 users. Each size is built in a fresh
home, then measured in a fresh process with the default ``index_cache_facts``:

- *first recall of a user*: ``COLD_USERS`` distinct users drawn at random, each asked
  once, so each recall loads that user's index from Chroma;
- *random users*: as many recalls as there are users (at least ``RANDOM_RECALLS``), of
  users drawn at random from all of them, after those (10,000 at 1M facts); once the
  users outgrow the index cache, most of these load again;
- that process's RSS (current and peak), and the facts its index cache holds.

``python -m bench scale-cold [--max-facts N]`` writes its section of docs/benchmarks.md
and the plot docs/img/scale_cold.png; sizes already measured are kept, so a large size
can be run alone (``--min-facts``). ``--max-facts 10000000`` attempts 10M. Building is
what takes time (1M facts: about half an hour here); with ``$RECALLMEM_BENCH_CACHE``
set, each size's home is kept there (resumed if a build was interrupted), so a re-run
only measures (a measured home then carries the access times its recalls noted, as a
store in use does).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.metrics import percentiles_ms
from bench.report import load_results, machine_note, markdown_table, save_results, write_section
from bench.synthetic import synthetic_fact, synthetic_query

PER_USER = 100
SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
DEFAULT_MAX = 1_000_000
COLD_USERS = 300
RANDOM_RECALLS = 1_000
DIMENSION = 512
BUILD_BATCH = 2_000  # facts per bulk write: 20 users
BUILT = "scale-cold-build.json"  # a home's build progress: facts written, seconds taken
CACHE_ENV = "RECALLMEM_BENCH_CACHE"  # where built homes are kept between runs


def _memory(home: str) -> Any:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.testing import HashingEmbeddings

    return Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(dimension=DIMENSION))


def _fact_id(i: int) -> str:
    # Deterministic: a resumed build rewrites a half-written batch by id (an upsert).
    return f"{i:032x}"


def build(home: str, size: int, *, done: int = 0, seconds: float = 0.0) -> dict[str, float]:
    """Store ``size`` facts, PER_USER per user, through the store's bulk write (what an
    import and a migration use: per-user collections and the id directory, no dedup);
    the rate. remember_many would add its dedup and one call per user.

    Resumes after ``done`` facts (written in ``seconds``): each batch's progress is
    recorded in the home (:data:`BUILT`), so an interrupted build of a cached home goes
    on where it stopped.
    """
    import numpy as np
    from recallmem.types import Category, Fact

    memory = _memory(home)
    started = time.perf_counter() - seconds
    for first in range(done - done % BUILD_BATCH, size, BUILD_BATCH):
        numbers = range(first, min(first + BUILD_BATCH, size))
        facts = [Fact(id=_fact_id(i), content=synthetic_fact(i), category=Category.CONTEXT,
                      user_id=f"user-{i // PER_USER}") for i in numbers]  # fmt: skip
        vectors = np.asarray(memory.embeddings.embed_documents([f.content for f in facts]),
                             dtype=np.float32)  # fmt: skip
        memory.repository.store.upsert(facts, vectors)
        elapsed = time.perf_counter() - started
        _record_built(home, size, numbers[-1] + 1, elapsed)
        if (first // BUILD_BATCH) % 50 == 49:
            print(f"  {numbers[-1] + 1:,} facts, {(numbers[-1] + 1) / elapsed:.0f}/s", flush=True)
    seconds = time.perf_counter() - started
    memory.close()
    return {"build_seconds": round(seconds, 1), "build_facts_per_s": round(size / seconds, 1)}


def _record_built(home: str, size: int, done: int, seconds: float) -> None:
    marker = Path(home) / BUILT
    marker.write_text(json.dumps({"size": size, "done": done, "seconds": round(seconds, 1),
                                  "per_user": PER_USER, "dimension": DIMENSION}))  # fmt: skip


def cached_build(cache: Path, size: int) -> tuple[str, dict[str, float]]:
    """The home of ``size`` facts under ``cache``, built (or its build finished) first;
    with the build's rate, measured when it was built."""
    home = cache / f"scale-cold-{size}-{PER_USER}-per-user-{DIMENSION}d"
    home.mkdir(parents=True, exist_ok=True)
    marker = home / BUILT
    state = json.loads(marker.read_text()) if marker.exists() else {"done": 0, "seconds": 0.0}
    if state["done"] < size:
        print(f"scale-cold: building {size:,} facts in {home} (from {state['done']:,})",
              flush=True)  # fmt: skip
        return str(home), build(str(home), size, done=state["done"], seconds=state["seconds"])
    print(f"scale-cold: reusing {size:,} facts built in {home}", flush=True)
    return str(home), {"build_seconds": state["seconds"],
                       "build_facts_per_s": round(size / state["seconds"], 1)}  # fmt: skip


def _rss_mb(field: str) -> float:
    status = Path("/proc/self/status").read_text()
    return round(int(status.split(f"{field}:")[1].split()[0]) / 1024, 1)


def measure(home: str, size: int) -> dict[str, Any]:
    """In this (fresh) process: first recalls of distinct users, then random users."""
    memory = _memory(home)
    memory.recall("warm up", user_id="warm-up", k=1)  # opens Chroma, warms the code
    users = size // PER_USER
    rng = random.Random(size)
    cold = []
    for n, user in enumerate(rng.sample(range(users), min(COLD_USERS, users))):
        started = time.perf_counter()
        hits = memory.recall(synthetic_query(n), user_id=f"user-{user}", k=10)
        cold.append(time.perf_counter() - started)
        assert all(h.fact.user_id == f"user-{user}" for h in hits)
    random_times, asked = [], set()
    for n in range(max(RANDOM_RECALLS, users)):
        user = rng.randrange(users)
        asked.add(user)
        started = time.perf_counter()
        memory.recall(synthetic_query(n), user_id=f"user-{user}", k=10)
        random_times.append(time.perf_counter() - started)
    cached = sum(len(i) for i in memory.repository._indexes._indexes.values())
    result = {
        "size": size, "users": users, "stored": memory.repository.store.count(),
        "first_recall_ms": percentiles_ms(cold), "random_user_ms": percentiles_ms(random_times),
        "random_recalls": len(random_times), "random_users_asked": len(asked),
        "rss_mb": _rss_mb("VmRSS"), "peak_rss_mb": _rss_mb("VmHWM"),
        "cached_facts": cached, "index_cache_facts": memory.config.index_cache_facts,
        "load": round(os.getloadavg()[0], 1),
    }  # fmt: skip
    memory.close()
    return result


def run_size(size: int, cache: Path | None = None) -> dict[str, Any]:
    """Build one size (in a fresh home, or reuse the one cached under ``cache``), then
    measure it in a fresh process."""
    if cache is not None:
        home, built = cached_build(cache, size)
        return {**_measure_in_child(home, size), **built}
    with tempfile.TemporaryDirectory(prefix="recallmem-scale-cold-") as home:
        print(f"scale-cold: building {size:,} facts", flush=True)
        built = build(home, size)
        return {**_measure_in_child(home, size), **built}


def _measure_in_child(home: str, size: int) -> dict[str, Any]:
    code = f"import json, sys; from bench.scale_cold import measure; print(json.dumps(measure({home!r}, {size})))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, cwd=Path(__file__).resolve().parents[1])  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"measuring {size:,} facts failed: {done.stderr[-2000:]}")
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def scale_cold(
    min_facts: int = 0,
    max_facts: int = DEFAULT_MAX,
    write: bool = True,
    cache: Path | None = None,
) -> Any:
    """Run the selected sizes; print and (optionally) write the section and the plot.
    ``cache`` (default: $RECALLMEM_BENCH_CACHE, if set) keeps the built homes there, so a
    re-run only measures."""
    if cache is None and os.environ.get(CACHE_ENV):
        cache = Path(os.environ[CACHE_ENV])
    runs = [run_size(s, cache) for s in SIZES if min_facts <= s <= max_facts]
    try:
        saved = {r["size"]: r for r in load_results("scale_cold")["runs"]}
    except FileNotFoundError:
        saved = {}
    saved.update({r["size"]: r for r in runs})
    results = {"runs": [saved[s] for s in sorted(saved)]}
    body = render(results)
    print(body)
    if write:
        save_results("scale_cold", results)
        write_section("scale-cold", body)
        from bench.plots import save_scale_cold_plot

        save_scale_cold_plot(results)
    return results


def _asked(run: dict[str, Any]) -> str:
    if "random_recalls" not in run:  # measured before these were recorded
        return f"{RANDOM_RECALLS:,}"
    return f"{run['random_recalls']:,} ({run['random_users_asked']:,})"


def render(results: dict[str, Any]) -> str:
    """The section as markdown."""
    headers = ["facts (synthetic)", "users", "first recall of a user p50 ms", "p95",
               "random recalls (users asked)", "random user p50 ms", "p95", "RSS MB",
               "peak RSS MB", "facts cached", "build facts/s", "load", "embedder"]  # fmt: skip
    rows = [[f"{r['size']:,}", f"{r['users']:,}", r["first_recall_ms"]["p50"],
             r["first_recall_ms"]["p95"], _asked(r), r["random_user_ms"]["p50"],
             r["random_user_ms"]["p95"], r["rss_mb"], r["peak_rss_mb"],
             f"{r['cached_facts']:,}", r["build_facts_per_s"], r.get("load", "–"),
             f"hashing, {DIMENSION} d (no model)"] for r in results["runs"]]  # fmt: skip
    first = {r["size"]: r["first_recall_ms"]["p50"] for r in results["runs"]}
    growth = ""
    if 10_000 in first and 100_000 in first:
        growth = f" Growth of the first recall's p50 from 10k to 100k: {first[100_000] / first[10_000]:.2f}x"
        if 1_000_000 in first:
            growth += f"; from 100k to 1M: {first[1_000_000] / first[100_000]:.2f}x"
        growth += " (target: at most 1.5x each; <= 30 ms at 100k).\n\n"
    return (
        "## A cold user against the store's size\n\n"
        f"`python -m bench scale-cold`: synthetic facts, {PER_USER} per user, written "
        "through the store's bulk write (import's and migration's path), embedded by a "
        "hashing embedder (marked: embedding is free, add the "
        "USE query embedding, a few ms, for the default embedder). In a fresh process "
        f"with the default `index_cache_facts`: {COLD_USERS} distinct users drawn at "
        "random, each recalled once (k=10), so each recall loads that user from Chroma; "
        f"then as many recalls as there are users (at least {RANDOM_RECALLS:,}) of random "
        "users among all of them. RSS is that process's after the recalls; 'facts cached' "
        "is what its index cache held; 'load' is the machine's load average (1 min) when "
        "the row was measured, on 2 cores: above 1, the latencies are crowded. Building "
        "is the slow part (1M facts: 45 minutes here): with `RECALLMEM_BENCH_CACHE=DIR` "
        "the built homes are kept in DIR and a re-run only measures.\n\n"
        + markdown_table(headers, rows)
        + "\n\n![first recall against store size](img/scale_cold.png)\n\n"
        + growth
        + machine_note()
        + "\n"
    )
