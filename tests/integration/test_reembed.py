"""Changing embedders on a store: ``recallmem reembed`` keeps every fact, re-runs no
extraction, and resumes after a ``kill -9``. The new embedder is the ``openai`` one, the
real ``langchain-openai`` client against tests/embeddings_endpoint.py on 127.0.0.1."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import recallmem.store.chroma.reembedding as reembedding
from recallmem.cli import main
from recallmem.config import MemoryConfig
from recallmem.errors import EmbeddingMismatchError
from recallmem.memory import Memory
from recallmem.store.chroma.reembedding import JOURNAL_DIR, reembed_store
from recallmem.testing import HashingEmbeddings

from tests.embeddings_endpoint import EmbeddingsEndpoint, serve_embeddings

USERS = ("ada", "bob", "cyd", "dee")
OLD = HashingEmbeddings(48, model_name="old-hashing")


@pytest.fixture
def endpoint() -> Iterator[EmbeddingsEndpoint]:
    with serve_embeddings() as served:
        yield served


def new_config(home: Path, endpoint: EmbeddingsEndpoint) -> MemoryConfig:
    return MemoryConfig(home=home, embedder="openai", openai_base_url=endpoint.url,
                        openai_api_key=endpoint.api_key, embedding_model="test-embed")  # fmt: skip


def openai_env(endpoint: EmbeddingsEndpoint) -> dict[str, str]:
    return {**os.environ, "RECALLMEM_EMBEDDER": "openai", "RECALLMEM_OPENAI_BASE_URL": endpoint.url,
            "RECALLMEM_OPENAI_API_KEY": endpoint.api_key, "RECALLMEM_EMBEDDING_MODEL": "test-embed"}  # fmt: skip


def build_store(home: Path) -> dict[str, list[dict[str, Any]]]:
    """Four users' facts of every kind, made with the old embedder; returns them."""
    with Memory(MemoryConfig(home=home), embeddings=OLD) as memory:
        for user in USERS:
            memory.remember(f"{user} writes TypeScript at work", user_id=user, category="knowledge")
            memory.remember(f"{user} drinks green tea", user_id=user, category="preference",
                            pinned=True, keywords=["绿茶"])  # fmt: skip
            memory.remember(f"{user} is on call this week", user_id=user, category="context",
                            agent_id="ops")  # fmt: skip
            gone = memory.remember(f"{user} used Vim once", user_id=user, category="behavior")
            memory.forget(gone.id)
        return {u: dumped(memory, u) for u in USERS}


def dumped(memory: Memory, user: str) -> list[dict[str, Any]]:
    facts = memory.list(user_id=user, status=None, limit=1000)
    return sorted((f.model_dump(mode="json") for f in facts), key=lambda f: f["id"])


def test_the_mismatch_error_points_at_reembed(tmp_path: Path, endpoint: EmbeddingsEndpoint) -> None:
    build_store(tmp_path)
    with pytest.raises(
        EmbeddingMismatchError, match=r"`recallmem reembed`.*nothing is extracted again"
    ):
        Memory(new_config(tmp_path, endpoint))


def test_reembedding_keeps_every_fact_and_recall_works_with_the_new_embedder(
    tmp_path: Path, endpoint: EmbeddingsEndpoint
) -> None:
    before = build_store(tmp_path)
    report = reembed_store(new_config(tmp_path, endpoint))
    assert report is not None
    assert (report.facts, report.collections, report.dimension) == (16, 4, 64)
    assert report.embedder == "OpenAICompatibleEmbeddings:test-embed"
    # Only contents were sent: no extraction, nothing but the facts' own text (and a probe).
    sent = [text for batch in endpoint.inputs for text in batch]
    assert sorted(sent[1:]) == sorted(f["content"] for u in USERS for f in before[u])
    with Memory(new_config(tmp_path, endpoint)) as memory:
        assert {u: dumped(memory, u) for u in USERS} == before
        hits = memory.recall("bob writes TypeScript", user_id="bob")
        assert hits[0].fact.content == "bob writes TypeScript at work"
        assert memory.repository.store.dimension == 64
    with pytest.raises(EmbeddingMismatchError):
        Memory(MemoryConfig(home=tmp_path), embeddings=OLD)
    assert not (tmp_path / JOURNAL_DIR).exists()
    assert reembed_store(new_config(tmp_path, endpoint)) is None  # already done


def test_kill_9_mid_way_then_a_rerun_completes_and_loses_nothing(
    tmp_path: Path, endpoint: EmbeddingsEndpoint
) -> None:
    before = build_store(tmp_path)
    endpoint.hold_after = 2  # the probe and the first user answer; the second user hangs
    command = [sys.executable, "-m", "recallmem.cli", "--home", str(tmp_path), "reembed"]
    process = subprocess.Popen(command, env=openai_env(endpoint), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert endpoint.held.wait(120), process.communicate(timeout=5)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.communicate(timeout=30)
    # Half-done: the store refuses every other use until the re-embedding finishes.
    with pytest.raises(EmbeddingMismatchError, match=r"being re-embedded.*recallmem reembed"):
        Memory(new_config(tmp_path, endpoint))
    with pytest.raises(EmbeddingMismatchError, match="being re-embedded"):
        Memory(MemoryConfig(home=tmp_path), embeddings=OLD)

    endpoint.hold_after = None
    endpoint.released.set()
    asked = len(endpoint.inputs)
    out = io.StringIO()
    argv = ["--home", str(tmp_path), "reembed", "--embedder", "openai"]
    env = openai_env(endpoint)
    with pytest.MonkeyPatch.context() as patch:
        for name in (
            "RECALLMEM_OPENAI_BASE_URL",
            "RECALLMEM_OPENAI_API_KEY",
            "RECALLMEM_EMBEDDING_MODEL",
        ):
            patch.setenv(name, env[name])
        assert main(argv, out) == 0
    assert "12 facts in 3 user collections re-embedded" in out.getvalue()  # the first was done
    assert len(endpoint.inputs) - asked == 1 + 3  # a probe, then one request per user left
    with Memory(new_config(tmp_path, endpoint)) as memory:
        assert {u: dumped(memory, u) for u in USERS} == before


def test_a_crash_after_the_journal_is_finished_from_it_without_embedding_again(
    tmp_path: Path, endpoint: EmbeddingsEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = build_store(tmp_path)
    real_drop = reembedding.drop_collection

    def drop_then_die(*args: Any) -> None:
        real_drop(*args)  # the old collection is gone, the new one not yet written
        raise SystemExit("killed")

    monkeypatch.setattr(reembedding, "drop_collection", drop_then_die)
    with pytest.raises(SystemExit):
        reembed_store(new_config(tmp_path, endpoint))
    assert len(list((tmp_path / JOURNAL_DIR).glob("*.json"))) == 1
    monkeypatch.setattr(reembedding, "drop_collection", real_drop)
    asked = len(endpoint.inputs)
    report = reembed_store(new_config(tmp_path, endpoint))
    assert report is not None and report.collections == 4
    assert len(endpoint.inputs) - asked == 1 + 3  # the journaled user is not embedded again
    with Memory(new_config(tmp_path, endpoint)) as memory:
        assert {u: dumped(memory, u) for u in USERS} == before
