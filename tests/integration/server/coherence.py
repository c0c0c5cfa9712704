"""Two processes writing one user at once, each checking the other's acknowledged writes.

Each worker process opens its own Memory on one Chroma server and writes facts to the
same user as fast as it can; after each acknowledged write it hands the fact to the
other worker, which recalls it (and gets it by id) through its own index. A fact the
other worker does not find is a stale read. Used by ``test_revisions.py``.
"""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recallmem import Memory, MemoryConfig
from recallmem.testing import HashingEmbeddings

# A uuid's hex can hold a run of digits that passes a card checksum, which the secret
# rule then refuses (a worker died of it once): the digits become letters.
_LETTERS = str.maketrans("0123456789", "ghijklmnop")


def marker() -> str:
    """A distinct word for a note: no two notes are near-duplicates, none looks secret."""
    return uuid.uuid4().hex.translate(_LETTERS)


USER = "shared-user"
_WAIT = 300.0  # seconds a worker waits for the other's next write


@dataclass(frozen=True)
class Outcome:
    """What both workers saw."""

    writes: int  # acknowledged writes, both workers together
    checks: int  # recalls of the other worker's writes
    stale: list[str]  # the writes a check did not find, as "worker n: content"


def run(url: str, prefix: str, home: Path, writes_each: int) -> Outcome:
    """Run two workers to completion and collect what they saw."""
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    boxes = [context.Queue(), context.Queue()]
    results: Any = context.Queue()
    workers = []
    for n in range(2):
        args = (url, prefix, str(home / f"worker{n}"), n, writes_each, start)
        workers.append(context.Process(target=work, args=(*args, boxes[n], boxes[1 - n], results)))
    for worker in workers:
        worker.start()
    ready = [results.get(timeout=_WAIT) for _ in workers]
    assert ready == ["ready", "ready"], ready
    start.set()  # both write from the same instant
    done = [results.get(timeout=_WAIT) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0, f"a worker exited with {worker.exitcode}"
    return Outcome(
        writes=sum(d["writes"] for d in done),
        checks=sum(d["checks"] for d in done),
        stale=[s for d in done for s in d["stale"]],
    )


def work(
    url: str,
    prefix: str,
    home: str,
    me: int,
    writes: int,
    start: Any,
    inbox: Any,
    outbox: Any,
    results: Any,
) -> None:
    """One worker: write ``writes`` facts, and check as many of the other's."""
    config = MemoryConfig(home=home, chroma_url=url, collection=prefix)
    memory = Memory(config, embeddings=HashingEmbeddings())
    memory.recall("warm the index", user_id=USER)  # an index loaded before any write
    stale: list[str] = []
    checked = [0]

    def check_the_other() -> None:
        for _ in range(writes):
            fact_id, content = inbox.get(timeout=_WAIT)
            recalled = {hit.fact.id for hit in memory.recall(content, user_id=USER, k=5)}
            try:
                memory.get(fact_id, user_id=USER)
                got = True
            except KeyError:
                got = False
            if fact_id not in recalled or not got:
                stale.append(f"worker {me}: {content}")
            checked[0] += 1

    checker = threading.Thread(target=check_the_other)
    checker.start()
    results.put("ready")
    start.wait()
    for n in range(writes):
        fact = memory.remember(
            f"Worker {me} note {n} says {marker()}", user_id=USER, category="context"
        )
        outbox.put((fact.id, fact.content))
    checker.join()
    results.put({"writes": writes, "checks": checked[0], "stale": stale})
    memory.close()
