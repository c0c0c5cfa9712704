"""Canary of store/chroma/workarounds/bounded_cache.py.

chromadb 1.5.9 sizes its cache of open vector indexes from the file limit
(``RLIMIT_NOFILE // 5``, read through ``chromadb.api.rust.resource`` when a client is
built) and has no setting for it. If this fails, Chroma sizes that cache another way:
bound it with what Chroma offers now, and delete the workaround.
"""

from __future__ import annotations

import resource
from pathlib import Path

from recallmem.store.chroma.workarounds.bounded_cache import (
    CHROMA_OPEN_INDEXES,
    bounded_index_cache,
)
from upstream import plain_client


def test_chroma_sizes_its_index_cache_from_the_file_limit(tmp_path: Path) -> None:
    from chromadb.config import Settings

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    with plain_client(tmp_path / "plain") as client:
        assert client._server.hnsw_cache_size == soft // 5
    with bounded_index_cache(), plain_client(tmp_path / "bounded") as client:
        assert client._server.hnsw_cache_size == min(soft // 5, CHROMA_OPEN_INDEXES)
    assert not [name for name in Settings.model_fields if "hnsw" in name]  # no setting
