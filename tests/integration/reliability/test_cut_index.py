"""A vector index a kill cut short: found at open, never loaded, rebuilt by maintenance.

Chroma 1.5.9 loading such an index allocates until the OOM killer ends the process
(store/chroma/workarounds/cut_index.py). The state is made here as the kill leaves it:
``link_lists.bin`` cut in half under a header that still counts every element. Each
open runs in a child held to 3 GB of address space, so that a regression fails this
test instead of taking the machine's memory.
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers import python
from recallmem import Memory, MemoryConfig
from recallmem.facts.export_format import build_export
from recallmem.store.chroma.layout import DIRECTORY_SUFFIX, user_collection
from recallmem.store.chroma.workarounds.cut_index import LINKS, cut_collections
from recallmem.store.chroma.workarounds.segments import vector_index_dir
from recallmem.testing import HashingEmbeddings
from recallmem.types import Fact

# Enough for Chroma to have saved every index: a user's every ten records, the id
# directory's every thousand (Chroma's default).
FACTS = 1500

CAPPED_OPEN = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from recallmem import Memory, MemoryConfig
from recallmem.errors import BrokenIndexError
from recallmem.testing import HashingEmbeddings
def count(memory):
    ids = set()
    while page := memory.list(user_id="ada", status=None, limit=1000, offset=len(ids)):
        ids |= {f.id for f in page}
    return len(ids)
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
said = {}
try:
    said["before"] = count(memory)
except BrokenIndexError as exc:
    said["before"] = str(exc)
    memory.maintain(user_id="ada")
said["after"] = count(memory)
said["found"] = [h.fact.content for h in memory.recall("Fact 7 of ada", user_id="ada", k=1)]
print(json.dumps(said))
"""


def _home_with_facts(home: Path) -> None:
    facts = [Fact(content=f"Fact {n} of ada", category="context", user_id="ada")
             for n in range(FACTS)]  # fmt: skip
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.import_(build_export("ada", facts=facts, profiles=[]))


def _cut(home: Path, collection: str) -> None:
    index = vector_index_dir(home / "chroma", collection)
    assert index is not None
    links = index / LINKS
    links.write_bytes(links.read_bytes()[: links.stat().st_size // 2])


def _open_capped(home: Path) -> dict[str, object]:
    done = python(CAPPED_OPEN, str(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_users_index_cut_short_is_reported_and_rebuilt_by_maintenance(tmp_path: Path) -> None:
    home = tmp_path / "mem"
    _home_with_facts(home)
    _cut(home, user_collection(MemoryConfig().collection, "ada"))
    said = _open_capped(home)
    # Refused before Chroma was asked to load it (a load fails "to read the facts").
    assert str(said["before"]).startswith("could not open the collection of user 'ada'")
    assert "maintain" in str(said["before"])
    assert said["after"] == FACTS and said["found"] == ["Fact 7 of ada"]
    assert _open_capped(home)["before"] == FACTS  # rebuilt for good


def test_the_id_directory_cut_short_is_rebuilt_at_open(tmp_path: Path) -> None:
    home = tmp_path / "mem"
    _home_with_facts(home)
    directory = MemoryConfig().collection + DIRECTORY_SUFFIX
    _cut(home, directory)
    assert cut_collections(home / "chroma") == {directory}  # rebuilt without a load
    said = _open_capped(home)
    assert said["before"] == FACTS and said["found"] == ["Fact 7 of ada"]


CAPPED_REEMBED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from recallmem import MemoryConfig
from recallmem.errors import BrokenIndexError
from recallmem.store.chroma.reembedding import reembed_store
from recallmem.testing import HashingEmbeddings
try:
    reembed_store(MemoryConfig(home=sys.argv[1]), HashingEmbeddings(128, model_name="v2"))
except BrokenIndexError as exc:
    print(exc)
"""


def test_re_embedding_stops_at_an_index_cut_short_and_says_to_run_maintenance(
    tmp_path: Path,
) -> None:
    home = tmp_path / "mem"
    _home_with_facts(home)
    _cut(home, user_collection(MemoryConfig().collection, "ada"))
    done = python(CAPPED_REEMBED, str(home))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("could not re-embed collection") and "maintain" in done.stdout
