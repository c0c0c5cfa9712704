"""What the agent's audit trail costs: the record of what reached a model, and the
``remember`` tool held to extraction's rules.

Records (``recallmem.persistence.retrieval_records``): a home's file filled with
``users`` users at the per-user bound (200 records each, a record as a real block
writes it: a query of a sentence, eight facts shown with score parts, two dropped), then
timed: one more record (what a turn pays: a write that also drops the user's oldest), a
read of a user's latest 50 (the service's ``/retrievals``), and "forget me" of one user
both ways that leave no byte: what a purge runs (the rows deleted with ``secure_delete``,
which zeroes them, then the write-ahead log checkpointed into the file and emptied) and,
for comparison, the file rewritten (``VACUUM``, what the queue's scrub runs); each checked
by searching every file under the home for the purged user's text.

The tool: ``Memory.remember_proposed`` (admission, then plan and write under the user's
lock) against ``Memory.remember`` (what the tool called before), on a user with 1,000
facts, the default embedder.

``python -m bench audit`` prints the tables and writes its section.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report import machine_note, markdown_table, save_results, write_section

PER_USER = 200


def _record(user: str, n: int) -> Any:
    from recallmem.retrieval.shown import DroppedFact, RetrievalRecord, ShownFact
    from recallmem.types import ScoreParts

    parts = ScoreParts(dense=0.61, lexical=0.2, recency=0.9, confidence=0.85, time=0.0)
    shown = tuple(ShownFact(fact_id=f"{user}-f{n}-{i:02d}" + "0" * 20, role="relevant",
                            score=0.5, parts=parts) for i in range(8))  # fmt: skip
    dropped = tuple(DroppedFact(fact_id=f"{user}-d{n}-{i}" + "0" * 22, reason="budget",
                                score=0.2) for i in range(2))  # fmt: skip
    return RetrievalRecord(user_id=user, thread_id=f"thread-{n % 7}", turn_id=f"m{n}",
                           trigger="block", query=f"Which report did {user} send on day {n}?",
                           shown=shown, dropped=dropped, tokens=180)  # fmt: skip


def _ms(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e3, ordered[int(0.95 * (len(ordered) - 1))] * 1e3


def _fill(home: Path, users: int) -> Any:
    from recallmem.config import MemoryConfig
    from recallmem.persistence.retrieval_records import RetrievalRecords

    records = RetrievalRecords(MemoryConfig(home=home, retrievals_per_user=PER_USER))
    for u in range(users):
        for n in range(PER_USER):
            records.add(_record(f"user{u}", n))
    return records


def _holding(home: Path, text: str) -> int:
    return sum(text.encode() in p.read_bytes() for p in home.rglob("*") if p.is_file())


def records_costs(users: int) -> dict[str, Any]:
    """Write, read and purge costs on a file of ``users`` users at the bound."""
    from recallmem.durability.sqlite_scrub import scrub_sqlite

    results: dict[str, Any] = {"users": users, "rows": users * PER_USER}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        started = time.perf_counter()
        records = _fill(home, users)
        results["fill_s"] = time.perf_counter() - started
        results["file_mb"] = records.path.stat().st_size / 1e6
        timed: dict[str, list[float]] = {"write": [], "write_cpu": [], "read": []}
        for n in range(500):
            user = f"user{n % users}"
            began, cpu = time.perf_counter(), time.process_time()
            records.add(_record(user, PER_USER + n))
            timed["write"].append(time.perf_counter() - began)
            timed["write_cpu"].append(time.process_time() - cpu)
            began = time.perf_counter()
            records.latest(user, limit=50)
            timed["read"].append(time.perf_counter() - began)
        results.update({f"{name}_ms": _ms(samples) for name, samples in timed.items()})
        for way, user in (("checkpoint", "user1"), ("vacuum", "user2")):
            began = time.perf_counter()
            if way == "checkpoint":  # what a purge runs
                records.forget(user, None)
            else:  # the same delete, then the file rewritten
                with records._using("purge") as db:
                    assert db is not None
                    db.execute("DELETE FROM retrievals WHERE user_id = ?", (user,))
                scrub_sqlite(records.path)
            results[f"purge_{way}_s"] = time.perf_counter() - began
            results[f"purge_{way}_files_left"] = _holding(home, f"did {user} send")
        records.close()
    return results


def proposal_costs(facts: int = 1000, calls: int = 60) -> dict[str, Any]:
    """``remember_proposed`` against ``remember`` on a user with ``facts`` facts."""
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory

    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(MemoryConfig(home=tmp))
        memory.remember_many([{"content": f"Keeps project note {n} about the quarterly plan",
                               "category": "context"} for n in range(facts)], user_id="ada")  # fmt: skip
        calls_of = ("remember", "remember_proposed")
        timed: dict[str, list[float]] = {n: [] for k in calls_of for n in (k, f"{k}_cpu")}
        for n in range(calls):
            for name in calls_of:
                began, cpu = time.perf_counter(), time.process_time()
                getattr(memory, name)(f"Uses tool number {n} for {name}", user_id="ada",
                                      category="knowledge")  # fmt: skip
                timed[name].append(time.perf_counter() - began)
                timed[f"{name}_cpu"].append(time.process_time() - cpu)
        memory.close()
    return {name: _ms(samples) for name, samples in timed.items()}


def audit(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Measure both and write the section."""
    results = {"records": records_costs(50 if quick else 1000),
               "proposals": proposal_costs(200 if quick else 1000, 20 if quick else 60)}  # fmt: skip
    r = results["records"]
    table = markdown_table(
        ["users × 200 records", "file MB", "write p50 ms", "p95", "write CPU p50 ms", "p95",
         "read 50 p50 ms", "p95", "forget me s", "files with its text", "with VACUUM s",
         "files with its text"],
        [[r["users"], r["file_mb"], *r["write_ms"], *r["write_cpu_ms"], *r["read_ms"],
          r["purge_checkpoint_s"],
          r["purge_checkpoint_files_left"], r["purge_vacuum_s"], r["purge_vacuum_files_left"]]],
    )  # fmt: skip
    p = results["proposals"]
    tools = markdown_table(["call (1,000 facts, USE)", "p50 ms", "p95 ms", "CPU p50 ms", "p95"],
                           [[name, *p[name], *p[f"{name}_cpu"]]
                            for name in ("remember", "remember_proposed")])  # fmt: skip
    print(table, tools, sep="\n\n")
    if write:
        save_results("audit", results)
        write_section("audit", _section(table, tools))
    return results


def _section(table: str, tools: str) -> str:
    return (
        "## The audit trail: what reached a model, and the remember tool (`python -m bench audit`)\n\n"
        "`<home>/retrievals.sqlite3` filled with users at the bound of 200 records each (a "
        "record as a block writes it: a sentence of query, 8 facts shown with score parts, 2 "
        "dropped). Write: one more record, which also drops the user's oldest (what each "
        "retrieval of a turn pays). Read: a user's latest 50 (`GET .../retrievals`). Forget "
        "me: the user's 200 rows deleted with `secure_delete`, then the write-ahead log "
        "checkpointed into the file and emptied (what a purge runs) or, for comparison, the "
        "file rewritten (`VACUUM`, what the queue's scrub runs); then every file under the "
        "home is searched for the user's text.\n\n"
        f"{table}\n\n"
        "The `remember` tool now goes through `Memory.remember_proposed` (extraction's "
        "rules, planned and written under the user's lock) instead of `Memory.remember`:\n\n"
        f"{tools}\n\nWall-clock p95s include waiting for a core: the 2 cores were shared "
        "with other runs (the load below); the CPU columns are the work itself.\n"
        f"{machine_note()}\n"
    )


if __name__ == "__main__":
    audit()
