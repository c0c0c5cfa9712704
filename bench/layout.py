"""How to lay facts out in Chroma so one user's recall is fast: the options, measured.

100k facts of 512 dimensions over 1,000 users (100 each), random unit vectors so that
only storage and search are timed (the query embedding, ~1.6 ms with the default
encoder, is the same for every option and is measured by ``python -m bench scale``):

- one collection, ``query`` with a ``where`` on user_id (and on status);
- one collection per user, queried cold (first touch) and warm;
- recallmem's layout: one collection as the store, plus a per-user hot index in the
  process, checked against the user's revision token on every recall (warm), or
  loaded with one ``get(where=user_id)`` (cold).

``python -m bench.layout [--quick]`` prints the table and writes its section.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.metrics import percentiles_ms
from bench.report import machine_note, markdown_table, save_results, write_section

DIM = 512
QUERIES = 200


def _unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    vectors = rng.standard_normal((rows, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _client(path: Path) -> Any:
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _timed(label: str, fn: Callable[[int], Any], users: int, queries: int) -> dict[str, Any]:
    picks = random.Random(7).choices(range(users), k=queries)
    seconds = []
    for user in picks:
        started = time.perf_counter()
        fn(user)
        seconds.append(time.perf_counter() - started)
    return {"layout": label, **percentiles_ms(seconds)}


def _one_collection(root: Path, users: int, per_user: int, queries: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(0)
    collection = _client(root / "one").get_or_create_collection(
        "facts", embedding_function=None, metadata={"hnsw:space": "cosine"}
    )
    total = users * per_user
    for start in range(0, total, 5000):
        ids = range(start, min(start + 5000, total))
        collection.add(
            ids=[f"f{i}" for i in ids],
            embeddings=_unit(rng, len(ids)),
            metadatas=[{"user_id": f"u{i // per_user}", "status": "active"} for i in ids],
            documents=[f"fact {i}" for i in ids],
        )
    query = _unit(rng, 1)[0]
    return [
        _timed("one collection, where user_id",
               lambda u: collection.query(query_embeddings=[query], n_results=10,
                                          where={"user_id": f"u{u}"}), users, queries),
        _timed("one collection, where user_id and status",
               lambda u: collection.query(query_embeddings=[query], n_results=10,
                                          where={"$and": [{"user_id": f"u{u}"},
                                                          {"status": "active"}]}), users, queries),
        _timed("one collection, get(where user_id) = cold hot-index load",
               lambda u: collection.get(where={"user_id": f"u{u}"},
                                        include=["embeddings", "documents", "metadatas"]),
               users, queries),
    ]  # fmt: skip


def _per_user(root: Path, users: int, per_user: int, queries: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(1)
    client = _client(root / "per-user")
    for user in range(users):
        client.get_or_create_collection(f"user-{user}", embedding_function=None).add(
            ids=[f"{user}-{i}" for i in range(per_user)], embeddings=_unit(rng, per_user)
        )
    query = _unit(rng, 1)[0]
    cold_client = _client(root / "per-user")  # a new client: every segment starts cold
    cold = _timed("collection per user, cold",
                  lambda u: cold_client.get_collection(f"user-{u}").query(
                      query_embeddings=[query], n_results=10), users, min(queries, users))  # fmt: skip
    handles = {u: client.get_collection(f"user-{u}") for u in range(users)}
    for handle in handles.values():
        handle.query(query_embeddings=[query], n_results=10)
    warm = _timed("collection per user, warm",
                  lambda u: handles[u].query(query_embeddings=[query], n_results=10),
                  users, queries)  # fmt: skip
    return [cold, warm]


def _recallmem(root: Path, users: int, per_user: int, queries: int) -> list[dict[str, Any]]:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.retrieval.index import Query
    from recallmem.testing import HashingEmbeddings

    memory = Memory(MemoryConfig(home=root / "recallmem"), embeddings=HashingEmbeddings(DIM))
    rng = np.random.default_rng(2)
    for user in range(users):
        facts = [f"user {user} fact {i}" for i in range(per_user)]
        memory.remember_many([{"content": c, "category": "context"} for c in facts],
                             user_id=f"u{user}")  # fmt: skip
    query = _unit(rng, 1)[0]

    def search(user: int) -> Any:
        index = memory.repository.index(f"u{user}")  # the revision check recall always makes
        return index.search(Query(text="fact", vector=query, k=10), memory.weights, _now())

    def cold(user: int) -> Any:
        memory.repository._indexes.drop(f"u{user}")  # as on a user's first recall in a process
        return search(user)

    cold_row = _timed("recallmem: hot index load + search, cold", cold, users, queries)
    for user in range(users):
        search(user)
    warm_row = _timed("recallmem: revision check + hot index search, warm", search, users, queries)
    return [cold_row, warm_row]


def _now() -> Any:
    from recallmem.types import utcnow

    return utcnow()


def layout(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run every layout and report p50/p95 per query."""
    users, per_user = (100, 100) if quick else (1000, 100)
    queries = 50 if quick else QUERIES
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows = _one_collection(root, users, per_user, queries)
        rows += _per_user(root, users, per_user, queries)
        rows += _recallmem(root, users, per_user, queries)
    table = markdown_table(
        ["layout", "p50 ms", "p95 ms"], [[r["layout"], r["p50"], r["p95"]] for r in rows]
    )
    print(table)
    payload = {"users": users, "per_user": per_user, "rows": rows}
    if write:
        save_results("layout", payload)
        write_section(
            "layout",
            f"## Storage layout ({users * per_user:,} facts over {users:,} users)\n\n"
            f"{machine_note()}\n\n{table}\n\nRecall searches a hot per-user index in each "
            "process, never Chroma's. Where that index is loaded from is measured in "
            "'Storage layout options' (the per-user collections here use Chroma's default "
            "sync threshold, which replays their log at every cold open; recallmem's do not).\n",
        )
    return payload


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.layout", description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    layout(quick=args.quick, write=not args.no_write)
