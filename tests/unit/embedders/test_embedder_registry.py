"""Embedders are found by entry point: the built-ins, and one a third-party package adds."""

from __future__ import annotations

from pathlib import Path

import pytest
from recallmem.config import MemoryConfig
from recallmem.embedders import UniversalSentenceEncoder
from recallmem.embedders.registry import ENTRY_POINT_GROUP, installed_embedders, load_embedder
from recallmem.errors import InvalidInputError, RecallmemError
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings


def install_fake_package(site: Path, name: str, entries: dict[str, str]) -> None:
    """What pip leaves behind for a package with entry points: a .dist-info directory."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "".join(f"{key} = {value}\n" for key, value in entries.items())
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")


def test_the_built_ins_are_registered_by_entry_point() -> None:
    installed = installed_embedders()
    assert {"use", "e5"} <= set(installed)
    assert installed["use"][0].value == "recallmem.embedders.use:UniversalSentenceEncoder"
    assert isinstance(load_embedder("use"), UniversalSentenceEncoder)
    assert isinstance(load_embedder(" USE "), UniversalSentenceEncoder)


def test_a_third_party_package_adds_an_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_fake_package(
        site, "recallmem_hashing", {"hashing": "recallmem.testing:HashingEmbeddings"}
    )
    monkeypatch.syspath_prepend(str(site))
    with Memory(MemoryConfig(home=tmp_path / "mem", embedder="hashing")) as memory:
        assert isinstance(memory.embeddings, HashingEmbeddings)
        memory.remember("Drinks green tea", user_id="ada", category="preference")
        assert memory.recall("green tea", user_id="ada")[0].fact.content == "Drinks green tea"


def test_unknown_names_list_the_installed_ones(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=r"unknown embedder 'nope'; installed: .*e5.*use"):
        Memory(MemoryConfig(home=tmp_path, embedder="nope"))


def test_a_name_claimed_twice_or_a_non_embedder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install_fake_package(site, "pkg_a", {"dup": "recallmem.testing:HashingEmbeddings"})
    install_fake_package(site, "pkg_b", {"dup": "recallmem.embedders.use:UniversalSentenceEncoder",
                                         "wrong": "recallmem.config:MemoryConfig"})  # fmt: skip
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(RecallmemError, match="registered twice") as refused:
        load_embedder("dup")
    assert "(pkg_a)" in str(refused.value) and "(pkg_b)" in str(refused.value)
    with pytest.raises(RecallmemError, match="not a langchain_core Embeddings"):
        load_embedder("wrong")


def test_no_registered_embedders_at_all_says_to_reinstall(monkeypatch: pytest.MonkeyPatch) -> None:
    import recallmem.embedders.registry as registry

    monkeypatch.setattr(registry, "entry_points", lambda group: [])
    with pytest.raises(RecallmemError, match="reinstall it"):
        load_embedder("use")
