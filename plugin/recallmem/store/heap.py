"""Heap blocks are filled with a fixed byte when allocated and when freed.

Chroma's vector index (hnswlib) reserves room for elements it has not got yet and
persists all of it, so the unused slots of ``data_level0.bin`` and ``length.bin`` hold
whatever the heap held before: measured here, the text of facts (purged ones too) in
those files after 4 purges of 6. glibc's ``M_PERTURB`` fills every block ``malloc``
hands out and every block ``free`` takes back, so stale text cannot reach those files.
Set for the whole process when an embedded store opens (the index lives in-process);
its cost did not show against the noise of this machine (docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes

M_PERTURB = -6  # glibc's mallopt parameter number
PERTURB_BYTE = 0xA5


def wipe_heap_blocks() -> bool:
    """Ask the C allocator to fill allocated and freed blocks; False where it cannot
    (not glibc: then the unused index slots may hold stale heap bytes)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_PERTURB, PERTURB_BYTE))
