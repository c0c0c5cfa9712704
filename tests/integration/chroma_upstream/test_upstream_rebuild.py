"""Canary of store/chroma/workarounds/rebuild.py (and the broken-index words of
store/chroma/failures.py that send a user's read to maintenance's repair).

chromadb 1.5.9 saves a collection's vector index files before their id map; a process
killed in between (here: the id map cut short, as such a kill leaves it) makes every
later read of the collection fail, with words ``failures.is_broken_index`` knows. If
this fails, Chroma either reads such a collection now (delete the rebuild) or words the
failure differently (teach ``is_broken_index`` the new words).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recallmem.store.chroma.failures import is_broken_index
from upstream import plain_client, saved_canary


def test_an_id_map_cut_short_breaks_every_read_with_known_words(tmp_path: Path) -> None:
    with plain_client(tmp_path) as client:
        saved_canary(client, 12)
    (id_map,) = tmp_path.glob("*/index_metadata.pickle")
    id_map.write_bytes(b"")
    with plain_client(tmp_path) as client, pytest.raises(Exception) as failure:
        client.get_collection("canary").get(include=["embeddings"], limit=5, offset=0)
    assert is_broken_index(failure.value), failure.value
