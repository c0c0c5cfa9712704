"""Plain Chroma clients for the canaries: none of recallmem's workarounds applied."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import chromadb_rust_bindings
from recallmem.store.chroma.client import chroma_settings

# The compiled core of chromadb: its Rust code, its own SQLite and its vector index.
LIBRARY = next(Path(chromadb_rust_bindings.__file__).parent.glob("*.so"))
BINDINGS = LIBRARY.read_bytes()


@contextmanager
def plain_client(path: Path) -> Iterator[Any]:
    """An embedded Chroma client as chromadb builds it, closed afterwards."""
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient

    client = chromadb.PersistentClient(path=str(path), settings=chroma_settings())
    try:
        yield client
    finally:
        client.close()
        SharedSystemClient.clear_system_cache()  # the next client of ``path`` starts afresh


def saved_canary(client: Any, records: int) -> Any:
    """Collection "canary", its vector index saved every ten records (as recallmem's
    user collections are), holding ``records`` two-dimensional records."""
    hnsw = {"sync_threshold": 10, "batch_size": 10}
    canary = client.create_collection("canary", embedding_function=None,
                                      configuration={"hnsw": hnsw})  # fmt: skip
    canary.add(ids=[f"r{n}" for n in range(records)],
               embeddings=[[float(n), 1.0] for n in range(records)])  # fmt: skip
    return canary


def run_python(code: str, *args: str) -> str:
    """Run ``code`` in a child Python (a process-wide setting must not leak into this
    one); what it printed."""
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    return done.stdout
