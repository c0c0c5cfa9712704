"""Dropping a collection with its vector index files.

``delete_collection`` leaves the collection's vector index directory on disk: with a
collection per user, every erased user would leave files behind, which may hold their
vectors and stale heap bytes (heap_perturb.py). So the directory is found before the drop
and removed after.

Upstream behaviour worked around (chromadb==1.5.9): leaving a dropped collection's index
files on disk; tests/integration/chroma_upstream/test_upstream_segments.py fails the day
that changes.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Any

from recallmem.store.chroma.workarounds.segments import vector_index_dir


def drop_collection(client: Any, path: Path | None, name: str) -> None:
    """Delete collection ``name``, if it exists, without reading it, and in an embedded
    store at ``path`` its vector index files, which Chroma 1.5 leaves on disk."""
    from chromadb.errors import NotFoundError

    index_dir = vector_index_dir(path, name) if path is not None else None
    with contextlib.suppress(NotFoundError):
        client.delete_collection(name)
    if index_dir is not None:
        shutil.rmtree(index_dir, ignore_errors=True)
