"""Choosing the built-in embedder by name (``MemoryConfig.embedder``)."""

from __future__ import annotations

import pytest
from recallmem.config import MemoryConfig
from recallmem.store.embeddings import UniversalSentenceEncoder, default_embeddings


def test_the_default_embedder_is_use() -> None:
    assert MemoryConfig().embedder == "use"
    assert isinstance(default_embeddings("use"), UniversalSentenceEncoder)


def test_the_embedder_can_be_chosen_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLMEM_EMBEDDER", "e5")
    assert MemoryConfig().embedder == "e5"


def test_an_unknown_embedder_name_is_refused_with_the_installed_ones() -> None:
    # Any name is a valid setting (a package may register it); using it checks.
    assert MemoryConfig(embedder="bert").embedder == "bert"
    with pytest.raises(ValueError, match=r"unknown embedder 'bert'; installed: .*e5, use"):
        default_embeddings("bert")
