"""Vector indexes a crash cut short, found before Chroma loads them.

Chroma 1.5 saves a collection's vector index by writing its files in place: a header
that counts the elements, then their vectors, their norms and their upper-level links
(``link_lists.bin``: per element, a 4-byte size and that many bytes). A process killed
in the middle leaves files shorter than the header says (seen after ``kill -9`` during
an import: the links of 2,000 of 4,000 elements, and the norms of 3,057). Loading such
an index, Chroma reads link sizes past the cut and allocates for each until the
kernel's OOM killer ends the process: 22 and 24 GB on a 23 GB machine, with nothing
said. So when an embedded store opens, every saved index is
checked against its header (:func:`cut_collections`), and the collections whose index
was cut are never handed to Chroma to load: a user's reports a broken index, which
maintenance rebuilds from the records (``layout.Collections``), and a shared one is
rebuilt at once (``rebuild.py``).

Upstream behaviour worked around (chromadb==1.5.9): loading an index cut short by a
kill allocating without bound; tests/integration/chroma_upstream/test_upstream_cut_index.py
fails the day that changes.
"""

from __future__ import annotations

import struct
from pathlib import Path

from recallmem.store.chroma.workarounds.sqlite_child import ChildProcessFailedError, run_child

HEADER = "header.bin"
LINKS = "link_lists.bin"
_SIZE = struct.Struct("<I")  # the size of one element's upper-level links
# The header's first fields: format version, level-0 offset, capacity, element count,
# bytes per element (hnswlib's order, after Chroma's version).
_HEADER_START = struct.Struct("<iQQQQ")
_VERSION = 1  # the only layout read here; an index of another layout is left to Chroma
_LENGTH_BYTES = 4  # one norm per element
_TIMEOUT_SECONDS = 60.0
_NAMES = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=60)
for segment in sys.argv[2:]:
    for (name,) in db.execute(
            "SELECT c.name FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE s.id = ? AND s.scope = 'VECTOR'", (segment,)):
        print(name)
"""


def is_cut(index: Path) -> bool:
    """Whether the index files in ``index`` hold fewer elements than their header counts."""
    header = (index / HEADER).read_bytes()
    if len(header) < _HEADER_START.size:
        return True
    version, _, _, count, per_element = _HEADER_START.unpack_from(header)
    if version != _VERSION:
        return False
    need = {"data_level0.bin": count * per_element, "length.bin": count * _LENGTH_BYTES}
    if any(not (index / name).is_file() or (index / name).stat().st_size < size
           for name, size in need.items()):  # fmt: skip
        return True
    return _links_cut((index / LINKS).read_bytes() if (index / LINKS).is_file() else b"", count)


def _links_cut(links: bytes, count: int) -> bool:
    """Whether ``links`` ends before the links of ``count`` elements."""
    at = 0
    for _ in range(count):
        if at + _SIZE.size > len(links):
            return True
        at += _SIZE.size + _SIZE.unpack_from(links, at)[0]
    return at > len(links)


def cut_collections(chroma_path: Path) -> set[str]:
    """The names of the collections whose saved vector index a crash cut short (an index
    of a dropped collection, which Chroma leaves on disk, names none)."""
    if not chroma_path.is_dir():
        return set()
    cut = [d.name for d in chroma_path.iterdir() if (d / HEADER).is_file() and is_cut(d)]
    if not cut:
        return set()
    database = str(chroma_path / "chroma.sqlite3")
    try:
        return set(run_child(_NAMES, database, *cut, timeout=_TIMEOUT_SECONDS).split())
    except ChildProcessFailedError:
        return set()
