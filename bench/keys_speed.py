"""What search keys cost in speed and space: ``python -m bench.keys_speed``.

Side by side, each in a fresh process and a fresh home, without and with keys:

- **write throughput**: ``remember_many`` with the USE encoder (``bench.writes``'
  ``remember`` workload: LoCoMo-like facts, 100 per call), the facts without keys, then
  with the keys the keying model wrote for LoCoMo (``bench.keys_requests``; a fact whose
  reply is missing gets synthetic keys of the same shape: ``keys_used`` says how many were
  real);
- **recall at scale**: ``bench.scale.measure`` at 100,000 synthetic facts over 1,000
  users, with synthetic keys shaped as the model writes them (two questions, one Chinese,
  and a Chinese paraphrase): a user's first recall in a fresh process (its index loaded
  from Chroma), then recalls of random users (cached), the store's size on disk. The
  facts are embedded by a hashing embedder of USE's width (USE would take hours here):
  storage, index and ranking are real; add USE's query embedding (a few ms) to every
  recall time, alike with and without keys;
- **what several vectors per fact would cost** (the option not shipped, so not in the
  product to time): the dense part over a user's content vectors alone (the shipped
  joined vector is one per fact, as before) against the same plus one vector per key
  with the best of each fact's kept (``np.maximum.at``), and the bytes and decoding of
  those key vectors as a record would carry them (float32, base64), per user of 100 and
  1,000 facts, 3.3 keys a fact (what the model wrote on average).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
from pathlib import Path
from typing import Any

from bench.report import (
    load_results,
    machine_note,
    markdown_table,
    save_results,
    write_section,
)

ROOT = Path(__file__).resolve().parents[1]


def _scale(size: int, users: int, keys: bool, queue: Any) -> None:
    from bench.scale import measure

    try:
        queue.put(("ok", measure(size, users, hashing=True, keys=keys)))
    except BaseException as error:  # the parent reports it
        queue.put(("error", f"{type(error).__name__}: {error}"))


def scale_pair(size: int, users: int) -> dict[str, Any]:
    """``bench.scale.measure`` without and with keys, each in a spawned process."""
    context = multiprocessing.get_context("spawn")
    results = {}
    for keys in (False, True):
        queue = context.Queue()
        process = context.Process(target=_scale, args=(size, users, keys, queue))
        process.start()
        status, payload = queue.get()
        process.join()
        if status != "ok":
            raise RuntimeError(f"scale run with keys={keys} failed: {payload}")
        results["with keys" if keys else "without keys"] = payload
    return results


def writes_pair(facts: int, rounds: int) -> dict[str, Any]:
    """``remember_many`` throughput without and with keys, alternating, this checkout."""
    from bench.writes import run_child

    plugin = ROOT / "plugin"
    size = {"facts": facts, "users": max(1, facts // 100), "per_call": 100}
    runs: dict[str, list[dict[str, Any]]] = {"without keys": [], "with keys": []}
    for round_ in range(rounds):
        order = ("remember", "remember-keys") if round_ % 2 == 0 else ("remember-keys", "remember")
        for workload in order:
            label = "with keys" if workload == "remember-keys" else "without keys"
            runs[label].append(run_child(workload, size, plugin))
            print(f"round {round_ + 1} {label}: {runs[label][-1]['facts_per_second']} facts/s",
                  flush=True)  # fmt: skip
    return {
        label: {"facts_per_second": [r["facts_per_second"] for r in done],
                "median": statistics.median(r["facts_per_second"] for r in done),
                "cpu_median": statistics.median(r["facts_per_cpu_second"] for r in done),
                "keys_used": done[0].get("keyed"), "keys_real": done[0].get("real")}
        for label, done in runs.items()
    }  # fmt: skip


def multi_vector_cost(keys_per_fact: float = 3.3, repeats: int = 300) -> list[dict[str, Any]]:
    """Per user size: ms for the dense part with one vector per fact, and with the keys'
    vectors too; bytes and ms to decode the keys' vectors of the user at a cold load."""
    import base64
    import time

    import numpy as np

    rng = np.random.default_rng(7)
    rows = []
    for facts in (100, 1_000):
        keys = int(facts * keys_per_fact)
        content = rng.standard_normal((facts, 512)).astype(np.float32)
        key_rows = rng.standard_normal((keys, 512)).astype(np.float32)
        owner = rng.integers(0, facts, keys)
        query = rng.standard_normal(512).astype(np.float32)
        started = time.perf_counter()
        for _ in range(repeats):
            _ = content @ query
        one = (time.perf_counter() - started) / repeats
        started = time.perf_counter()
        for _ in range(repeats):
            best = content @ query
            np.maximum.at(best, owner, key_rows @ query)
        several = (time.perf_counter() - started) / repeats
        encoded = [base64.b64encode(row.tobytes()).decode() for row in key_rows]
        started = time.perf_counter()
        _ = np.frombuffer(b"".join(base64.b64decode(e) for e in encoded), "<f4")
        decode = time.perf_counter() - started
        rows.append({"facts": facts, "one_vector_ms": round(one * 1e3, 3),
                     "several_vectors_ms": round(several * 1e3, 3),
                     "key_vectors_bytes": sum(map(len, encoded)),
                     "decode_ms": round(decode * 1e3, 2)})  # fmt: skip
    return rows


def render(results: dict[str, Any]) -> str:
    writes, scale = results["writes"], results["scale"]
    write_rows = [[label, by["median"], by["cpu_median"],
                   " / ".join(f"{v:.0f}" for v in by["facts_per_second"]),
                   by.get("keys_used") or 0, by.get("keys_real") or 0]
                  for label, by in writes.items()]  # fmt: skip
    scale_rows = [[label, r["size"], r["users"], r["recall_cold_user_ms"]["p50"],
                   r["recall_cold_user_ms"]["p95"], r["recall_random_user_ms"]["p50"],
                   r["recall_random_user_ms"]["p95"], r["store_mb"], r["peak_rss_mb"],
                   r["remember_per_second"]]
                  for label, r in scale.items()]  # fmt: skip
    return "\n".join(
        [
            "## Search keys: speed and space",
            "",
            "`python -m bench.keys_speed` (module docstring: what is measured and how). "
            f"`remember_many` with USE, {results['write_facts']:,} LoCoMo-like facts, 100 per "
            f"call, {results['rounds']} alternating rounds (targets: >= 500 facts/s with keys):",
            "",
            markdown_table(
                [
                    "",
                    "facts/s (median)",
                    "facts per CPU-s",
                    "runs",
                    "facts with keys",
                    "of them the model's",
                ],
                write_rows,
            ),
            "",
            "Recall at scale (hashing embedder of 512 dimensions for the facts; add USE's query "
            "embedding to each recall; target: recall p95 <= 20 ms at 100k)"
            + (
                ", from an earlier run (`--writes-only` left it as saved):"
                if results.get("scale_saved")
                else ":"
            ),
            "",
            markdown_table(
                [
                    "",
                    "facts",
                    "users",
                    "first recall of a user p50 ms",
                    "p95",
                    "random user p50 ms",
                    "p95",
                    "store MB",
                    "peak RSS MB",
                    "load facts/s",
                ],
                scale_rows,
            ),
            "",
            machine_note(),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.keys_speed", description=__doc__)
    parser.add_argument("--write-facts", type=int, default=4_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale-facts", type=int, default=100_000)
    parser.add_argument("--writes-only", action="store_true",
                        help="measure the writes alone; the scale and several-vector figures "
                             "are the last saved run's (bench/results/keys_speed.json)")  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    writes = writes_pair(args.write_facts, args.rounds)
    if args.writes_only:  # the scale run is long (100,000 facts); this refreshes the writes
        saved = load_results("keys_speed")
        scale, multi = saved["scale"], saved["multi"]
    else:
        scale = scale_pair(args.scale_facts, max(1, args.scale_facts // 100))
        multi = multi_vector_cost()
    results = {"write_facts": args.write_facts, "rounds": args.rounds, "writes": writes,
               "scale": scale, "multi": multi, "scale_saved": args.writes_only}  # fmt: skip
    text = render(results)
    print(text)
    if not args.no_write:
        save_results("keys_speed", results)
        write_section("keys-speed", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
