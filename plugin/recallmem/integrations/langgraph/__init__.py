"""recallmem for LangGraph and LangMem: ``RecallmemStore``, a ``BaseStore`` over a Memory.

>>> import tempfile
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> store = RecallmemStore(memory)
>>> store.put(("memories", "ada"), "k1", {"content": "Prefers dark mode in every editor"})
>>> hits = store.search(("memories", "ada"), query="editor theme")
>>> [(hit.key, hit.value["content"]) for hit in hits]
[('k1', 'Prefers dark mode in every editor')]
>>> store.search(("memories", "bob"), query="editor theme")
[]
"""

from recallmem.integrations.langgraph.namespaces import NamespaceRule, NamespaceScope
from recallmem.integrations.langgraph.store import RecallmemStore

__all__ = ["NamespaceRule", "NamespaceScope", "RecallmemStore"]
