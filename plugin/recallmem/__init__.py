"""recallmem: long-term memory for LangChain agents.

>>> import recallmem
>>> "Memory" in recallmem.__all__
True

Names load on first use, so ``import recallmem`` stays light: Chroma, numpy models and
LangChain's agent stack are imported only when the class that needs them is touched.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recallmem.agent.middleware import MemoryMiddleware
    from recallmem.agent.tools import MemoryToolkit
    from recallmem.config import MemoryConfig
    from recallmem.errors import RecallmemError
    from recallmem.extraction.chain import create_extractor
    from recallmem.integrations.retriever import MemoryRetriever
    from recallmem.memory import Memory
    from recallmem.types import (
        Category,
        Fact,
        Profile,
        ScoredFact,
        ScoreParts,
        ScoreWeights,
        Source,
        Status,
    )

_EXPORTS = {
    "Memory": "recallmem.memory",
    "MemoryConfig": "recallmem.config",
    "MemoryToolkit": "recallmem.agent.tools",
    "MemoryMiddleware": "recallmem.agent.middleware",
    "MemoryRetriever": "recallmem.integrations.retriever",
    "create_extractor": "recallmem.extraction.chain",
    "Fact": "recallmem.types",
    "ScoredFact": "recallmem.types",
    "ScoreParts": "recallmem.types",
    "ScoreWeights": "recallmem.types",
    "Profile": "recallmem.types",
    "Source": "recallmem.types",
    "Category": "recallmem.types",
    "Status": "recallmem.types",
    "RecallmemError": "recallmem.errors",
}

__all__ = [
    "Category",
    "Fact",
    "Memory",
    "MemoryConfig",
    "MemoryMiddleware",
    "MemoryRetriever",
    "MemoryToolkit",
    "Profile",
    "RecallmemError",
    "ScoreParts",
    "ScoreWeights",
    "ScoredFact",
    "Source",
    "Status",
    "create_extractor",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recallmem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
