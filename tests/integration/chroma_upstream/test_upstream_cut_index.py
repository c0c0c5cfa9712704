"""Canary of store/chroma/workarounds/cut_index.py.

chromadb 1.5.9 writes a collection's vector index files in place; a process killed
while it writes them leaves ``link_lists.bin`` shorter than the header's element count.
Loading such an index, Chroma reads link sizes past the cut: with no limit the process
allocates until the OOM killer ends it (22 and 24 GB were seen in CI), so here the load
runs in a child held to 3 GB of address space, where the allocation fails and Chroma
reports it. If this fails, Chroma loads such an index now, or refuses
it without the allocation: delete the workaround (and this canary).
"""

from __future__ import annotations

from pathlib import Path

from recallmem.store.chroma.workarounds.cut_index import is_cut
from upstream import plain_client, run_python, saved_canary

CAPPED_LOAD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from recallmem.store.chroma.client import chroma_settings
import chromadb
client = chromadb.PersistentClient(path=sys.argv[1], settings=chroma_settings())
try:
    client.get_collection("canary").get(include=["embeddings"], limit=5)
    print("loaded")
except Exception as exc:
    print("failed:", exc)
"""


def test_an_index_cut_short_by_a_kill_cannot_be_loaded_within_3_gb(tmp_path: Path) -> None:
    with plain_client(tmp_path) as client:
        saved_canary(client, 40)
    (links,) = tmp_path.glob("*/link_lists.bin")
    assert not is_cut(links.parent)
    links.write_bytes(links.read_bytes()[: links.stat().st_size // 2])  # as the kill left it
    assert is_cut(links.parent)
    said = run_python(CAPPED_LOAD, str(tmp_path))
    assert said.startswith("failed:") and "error loading hnsw index" in said.lower(), said
