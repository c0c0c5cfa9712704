"""Which Chroma layout loads one user in O(that user's facts): the options, measured.

Random unit vectors of 512 dimensions, 100 facts per user, metadata shaped like
recallmem's (a user id, a status and a JSON record), so only storage is timed. For each
layout and store size: the build rate, then in a *fresh process* (every segment cold)
the first load of random users (ids, documents, metadatas and vectors, as
``FactStore.load_user`` reads them), that process's RSS and open files after it.

- ``one collection, where``: today's layout, ``get(where={"user_id": u})``;
- ``one collection, manifest``: the user's ids kept in a small record, then ``get(ids)``;
- ``S shards, where``: users hashed to S collections, ``get(where)`` inside one;
- ``S shards, manifest``: the same, with the user's ids read from a manifest first;
- ``per-user``: ``get()`` of the user's own collection (``-sync1000``: with Chroma's
  default sync threshold, see ``SMALL_HNSW``);
- ``database per user``: creation only (a database is a directory of collections).

``python -m bench.layout_options [--sizes 10000,100000] [--server URL]`` prints the
table and saves bench/results/layout_options.json; the notes in docs/architecture.md
("Storage layout") quote it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.report import load_results, machine_note, markdown_table, save_results, write_section

DIM = 512
PER_USER = 100
PROBES = 60
BATCH = 2000
HNSW = {"space": "cosine", "ef_construction": 10, "max_neighbors": 4}
# Small collections persist their vector index (and drop their log) every 100 records, as
# recallmem's do; "...-sync1000" keeps Chroma's default, which replays up to 1,000
# logged records at a collection's first touch in each process.
SMALL_HNSW = {**HNSW, "sync_threshold": 100, "batch_size": 100}


def _hnsw(layout: str) -> dict[str, Any]:
    small = layout.startswith(("shards", "per-user")) and not layout.endswith("sync1000")
    return SMALL_HNSW if small else HNSW


def _client(where: str) -> Any:
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if where.startswith("http"):
        host, port = where.split("//")[1].split(":")
        return chromadb.HttpClient(host=host, port=int(port), settings=settings)
    return chromadb.PersistentClient(path=where, settings=settings)


def shard_of(user: str, shards: int) -> int:
    return int.from_bytes(hashlib.blake2b(user.encode(), digest_size=8).digest()) % shards


def _collection_name(layout: str, prefix: str, user: str) -> str:
    kind, _, shards = layout.removesuffix("-sync1000").partition(":")
    if kind in ("shards", "shards-manifest"):
        return f"{prefix}_s{shard_of(user, int(shards))}"
    if kind == "per-user":
        return f"{prefix}_u{hashlib.blake2b(user.encode(), digest_size=12).hexdigest()}"
    return f"{prefix}_facts"


def _records(first: int, count: int, rng: np.random.Generator) -> dict[str, Any]:
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"fact-{i:09d}" for i in range(first, first + count)]
    metas = [
        {"user_id": f"user-{i // PER_USER}", "status": "active",
         "record": json.dumps({"id": ids[n], "category": "context", "confidence": 0.9})}
        for n, i in enumerate(range(first, first + count))
    ]  # fmt: skip
    return {"ids": ids, "embeddings": vectors, "metadatas": metas,
            "documents": [f"synthetic fact {i}" for i in range(first, first + count)]}  # fmt: skip


def build(where: str, layout: str, prefix: str, size: int) -> dict[str, float]:
    """Write ``size`` facts in ``layout``; seconds per phase."""
    client = _client(where)
    rng = np.random.default_rng(size)
    handles: dict[str, Any] = {}
    started = time.perf_counter()
    created = 0.0
    users = size // PER_USER
    manifest = "manifest" in layout
    scopes = client.get_or_create_collection(f"{prefix}_scopes", embedding_function=None)
    for first in range(0, size, BATCH):
        rows = _records(first, min(BATCH, size - first), rng)
        groups: dict[str, list[int]] = {}
        for n, meta in enumerate(rows["metadatas"]):
            groups.setdefault(_collection_name(layout, prefix, meta["user_id"]), []).append(n)
        for name, picks in groups.items():
            if name not in handles:
                t = time.perf_counter()
                handles[name] = client.get_or_create_collection(
                    name, embedding_function=None, configuration={"hnsw": _hnsw(layout)}
                )
                created += time.perf_counter() - t
            handles[name].upsert(
                ids=[rows["ids"][p] for p in picks],
                embeddings=rows["embeddings"][picks],
                metadatas=[rows["metadatas"][p] for p in picks],
                documents=[rows["documents"][p] for p in picks],
            )
        if manifest:
            by_user: dict[str, list[str]] = {}
            for fid, meta in zip(rows["ids"], rows["metadatas"], strict=True):
                by_user.setdefault(meta["user_id"], []).append(fid)
            scopes.upsert(
                ids=[f"ids:{u}" for u in by_user],
                embeddings=[[1.0]] * len(by_user),
                documents=[json.dumps(v) for v in by_user.values()],
            )
    total = time.perf_counter() - started
    return {"facts_per_s": size / total, "collections": len(handles),
            "create_ms_each": 1e3 * created / max(1, len(handles)), "users": users}  # fmt: skip


_PROBE = """
import json, os, random, resource, sys, time
sys.path.insert(0, {root!r})
from bench.layout_options import _client, _collection_name
where, layout, prefix, users = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
t0 = time.perf_counter()
client = _client(where)
open_ms = (time.perf_counter() - t0) * 1e3
scopes = client.get_or_create_collection(prefix + "_scopes", embedding_function=None)
picks = random.Random(7).sample(range(users), min({probes}, users))
times, rows = [], 0
for u in picks:
    user = f"user-{{u}}"
    t = time.perf_counter()
    handle = client.get_collection(_collection_name(layout, prefix, user))
    if "manifest" in layout:
        ids = json.loads(scopes.get(ids=["ids:" + user], include=["documents"])["documents"][0])
        got = handle.get(ids=ids, include=["documents", "metadatas", "embeddings"])
    elif layout.startswith("per-user"):
        got = handle.get(include=["documents", "metadatas", "embeddings"])
    else:
        got = handle.get(where={{"user_id": user}}, include=["documents", "metadatas", "embeddings"])
    times.append((time.perf_counter() - t) * 1e3)
    rows += len(got["ids"])
times.sort()
print(json.dumps({{"open_ms": open_ms,
    "p50": times[len(times) // 2], "p95": times[int(len(times) * 0.95)], "rows": rows,
    "rss_mb": int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024,
    "open_files": len(os.listdir("/proc/self/fd"))}}))
"""


def probe(where: str, layout: str, prefix: str, users: int) -> dict[str, Any]:
    """First loads of random users in a fresh process."""
    root = str(Path(__file__).resolve().parents[1])
    code = _PROBE.format(root=root, probes=PROBES)
    done = subprocess.run(
        [sys.executable, "-c", code, where, layout, prefix, str(users)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def database_per_user_cost(where: str, count: int) -> float:
    """Milliseconds to create one database with one collection in it."""
    import chromadb
    from chromadb.config import Settings

    if where.startswith("http"):
        host, port = where.split("//")[1].split(":")
        settings = Settings(chroma_api_impl="chromadb.api.fastapi.FastAPI",
                            chroma_server_host=host, chroma_server_http_port=int(port),
                            anonymized_telemetry=False)  # fmt: skip
    else:
        settings = Settings(is_persistent=True, persist_directory=where,
                            anonymized_telemetry=False)  # fmt: skip
    admin = chromadb.AdminClient(settings)
    started = time.perf_counter()
    for n in range(count):
        name = f"db{n}_{int(started)}"
        admin.create_database(name)
        client = chromadb.Client(settings, database=name)
        client.get_or_create_collection("facts", embedding_function=None)
    return 1e3 * (time.perf_counter() - started) / count


LAYOUTS = ("one", "one-manifest", "shards:64", "shards:1024", "shards-manifest:256",
           "per-user", "per-user-sync1000")  # fmt: skip


def run(sizes: list[int], server: str | None, layouts: tuple[str, ...]) -> list[dict[str, Any]]:
    """Build every layout at every size, then probe it cold; one row each."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="layout-options-") as tmp:
        for size in sizes:
            for layout in layouts:
                prefix = f"b{size}_{layout.replace(':', '_').replace('-', '_')}"
                where = server or str(Path(tmp) / prefix)
                built = build(where, layout, prefix, size)
                cold = probe(where, layout, prefix, built["users"])
                row = {"backend": "server" if server else "embedded", "size": size,
                       "layout": layout, **built, **cold}  # fmt: skip
                print(json.dumps(row), flush=True)
                rows.append(row)
        where = server or str(Path(tmp) / "databases")
        rows.append({"backend": "server" if server else "embedded", "layout": "database per user",
                     "create_ms_each": database_per_user_cost(where, 50)})  # fmt: skip
        print(json.dumps(rows[-1]), flush=True)
    return rows


def render(rows: list[dict[str, Any]]) -> str:
    """The option table as markdown."""
    headers = ["backend", "facts", "layout", "collections", "build facts/s",
               "create ms/collection", "first load p50 ms", "p95", "RSS MB", "open fds"]  # fmt: skip
    return markdown_table(headers, [
        [r["backend"], r.get("size"), r["layout"], r.get("collections"), r.get("facts_per_s"),
         r.get("create_ms_each"), r.get("p50"), r.get("p95"), r.get("rss_mb"), r.get("open_files")]
        for r in rows
    ])  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--server", default=None, help="a Chroma server URL instead of embedded")
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--from-log", help="render the rows a run printed instead of measuring")
    args = parser.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    if args.from_log:  # the rows a run printed, one JSON object a line
        lines = Path(args.from_log).read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.startswith("{")]
    else:
        rows = run([int(s) for s in args.sizes.split(",")], args.server,
                   tuple(args.layouts.split(",")))  # fmt: skip
    backend = "server" if args.server or "server" in {r["backend"] for r in rows} else "embedded"
    save_results(f"layout_options_{backend}", {"rows": rows, "probes": PROBES})
    saved = []
    for name in ("embedded", "server"):
        with contextlib.suppress(FileNotFoundError):
            saved += load_results(f"layout_options_{name}")["rows"]
    body = SECTION_INTRO + render(saved) + "\n\n" + machine_note() + "\n"
    print(body)
    write_section("layout-options", body)


SECTION_INTRO = (
    "## Storage layout options\n\n"
    "`python -m bench.layout_options [--sizes 10000,100000] [--server URL]`: random unit "
    f"vectors ({DIM} dimensions), {PER_USER} facts per user, metadata shaped like "
    "recallmem's. 'first load' is the first read of a random user's facts with their "
    f"vectors in a fresh process ({PROBES} users; the process's very first read, which "
    "opens Chroma, included); RSS and open file descriptors are that process's after "
    "them. The layouts and the choice: docs/architecture.md, 'Storage layout'.\n\n"
)


if __name__ == "__main__":
    main()
