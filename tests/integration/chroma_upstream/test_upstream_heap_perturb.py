"""Canary of store/chroma/workarounds/heap_perturb.py.

chromadb 1.5.9's vector index (hnswlib) saves the slots it reserved but has not filled
with whatever the heap held there: with glibc's ``M_PERTURB`` set, a fresh block is
filled with ``PERTURB_BYTE ^ 0xFF``, and long runs of that byte land in
``data_level0.bin``. If this fails, the saved file no longer carries heap memory:
delete the workaround (and the ``GLIBC_TUNABLES`` lines of scripts/serve.sh and test.sh).
"""

from __future__ import annotations

import pytest
from recallmem.store.chroma.workarounds.heap_perturb import wipe_heap_blocks
from upstream import run_python

SAVED_SLOTS = """
import sys, tempfile
from pathlib import Path
from recallmem.store.chroma.workarounds.heap_perturb import PERTURB_BYTE, wipe_heap_blocks
sys.path.insert(0, sys.argv[1])
from upstream import plain_client
assert wipe_heap_blocks()
path = Path(tempfile.mkdtemp())
with plain_client(path) as client:
    hnsw = {"space": "cosine", "sync_threshold": 10, "batch_size": 10}
    records = client.create_collection("heap", embedding_function=None,
                                       configuration={"hnsw": hnsw})
    records.add(ids=[f"r{n}" for n in range(12)],
                embeddings=[[float(n), 1.0, 0.5, 0.25] for n in range(12)])
(saved,) = path.glob("*/data_level0.bin")
print(saved.read_bytes().count(bytes([PERTURB_BYTE ^ 0xFF]) * 32))
"""


@pytest.mark.skipif(not wipe_heap_blocks(), reason="needs glibc's mallopt")
def test_the_saved_index_carries_heap_bytes_it_never_wrote() -> None:
    from pathlib import Path

    runs = int(run_python(SAVED_SLOTS, str(Path(__file__).parent)))
    assert runs > 0, "data_level0.bin holds no heap fill: hnswlib zeroes its slots now"
