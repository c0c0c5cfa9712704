"""Heap blocks are filled with a fixed byte when allocated and when freed.

Chroma's vector index (hnswlib) reserves room for elements it has not got yet and
persists all of it, so the unused slots of ``data_level0.bin`` and ``length.bin`` hold
whatever the heap held before: measured here, the text of facts (purged ones too) in
those files after 4 purges of 6. glibc's ``M_PERTURB`` fills every block ``malloc``
hands out and every block ``free`` takes back, so stale text cannot reach those files.
Set for the whole process when an embedded store opens (the index lives in-process);
its cost did not show against the noise of this machine (docs/benchmarks.md).

One kind of block escapes it: glibc keeps small freed blocks in a per-thread cache
(tcache) and hands them out again filled with neither byte, so a freed record's text can
come back as the unused tail of an index buffer (measured: a freed 400-byte block came
back from ``malloc(400)`` with its text). The cache can only be switched off when a
process starts, by the environment variable ``GLIBC_TUNABLES`` holding
:data:`THREAD_CACHE_OFF`; ``scripts/serve.sh`` and ``scripts/test.sh`` set it, and a
program embedding recallmem must set it for the same guarantee.

Upstream behaviour worked around (chromadb==1.5.9): its vector index saving unfilled
slots with whatever the heap held;
tests/integration/chroma_upstream/test_upstream_heap_perturb.py fails the day that
changes.
"""

from __future__ import annotations

import ctypes

M_PERTURB = -6  # glibc's mallopt parameter number
PERTURB_BYTE = 0xA5
THREAD_CACHE_OFF = "glibc.malloc.tcache_count=0"  # a GLIBC_TUNABLES entry


def wipe_heap_blocks() -> bool:
    """Ask the C allocator to fill allocated and freed blocks; False where it cannot
    (not glibc: then the unused index slots may hold stale heap bytes)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_PERTURB, PERTURB_BYTE))
