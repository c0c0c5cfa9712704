"""``RECALLMEM_EMBEDDER=openai``: the real ``langchain-openai`` client against an
OpenAI-compatible endpoint the test starts on 127.0.0.1 (tests/embeddings_endpoint.py).

The socket guard (pyproject) lets nothing but loopback through: had the client tried to
download its tokenizer, these tests would fail on the connection to the blob host.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from recallmem.cli import main
from recallmem.config import MemoryConfig
from recallmem.embedders import installed_embedders, load_embedder
from recallmem.embedders.openai_compatible import (
    MAX_TEXTS_PER_REQUEST,
    OpenAICompatibleEmbeddings,
    openai_embeddings,
)
from recallmem.errors import ModelNotConfiguredError, ModelUnreachableError
from recallmem.memory import Memory

from tests.embeddings_endpoint import EmbeddingsEndpoint, serve_embeddings


@pytest.fixture
def endpoint() -> Iterator[EmbeddingsEndpoint]:
    with serve_embeddings() as served:
        yield served


@pytest.fixture
def openai_env(endpoint: EmbeddingsEndpoint, monkeypatch: pytest.MonkeyPatch) -> EmbeddingsEndpoint:
    monkeypatch.setenv("RECALLMEM_EMBEDDER", "openai")
    monkeypatch.setenv("RECALLMEM_OPENAI_BASE_URL", endpoint.url)
    monkeypatch.setenv("RECALLMEM_OPENAI_API_KEY", endpoint.api_key)
    monkeypatch.setenv("RECALLMEM_EMBEDDING_MODEL", "test-embed")
    return endpoint


def test_openai_is_registered_by_entry_point() -> None:
    assert installed_embedders()["openai"][0].value == (
        "recallmem.embedders.openai_compatible:openai_embeddings"
    )


def test_memory_remembers_and_recalls_through_the_endpoint_named_in_the_environment(
    openai_env: EmbeddingsEndpoint, tmp_path: Path
) -> None:
    with Memory(MemoryConfig(home=tmp_path)) as memory:
        assert isinstance(memory.embeddings, OpenAICompatibleEmbeddings)
        memory.remember("Writes TypeScript at work", user_id="ada", category="knowledge")
        memory.remember("Drinks green tea in the morning", user_id="ada", category="preference")
        hits = memory.recall("TypeScript at work", user_id="ada")
    assert hits[0].fact.content == "Writes TypeScript at work"
    # Text, never token arrays (which compatible servers refuse), with the model named.
    bodies = [r["body"] for r in openai_env.requests]
    assert all(b["model"] == "test-embed" for b in bodies)
    assert all(isinstance(t, str) for b in bodies for t in b["input"])
    assert "TypeScript at work" in [t for b in bodies for t in b["input"]]


def test_the_dimensions_setting_is_asked_for_and_recorded_by_the_store(
    openai_env: EmbeddingsEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALLMEM_EMBEDDING_DIMENSIONS", "32")
    with Memory(MemoryConfig(home=tmp_path)) as memory:
        memory.remember("Uses Neovim", user_id="ada", category="preference")
        assert memory.repository.store.dimension == 32
    assert {r["body"]["dimensions"] for r in openai_env.requests} == {32}


def test_a_config_given_in_code_is_used_rather_than_the_environment(
    endpoint: EmbeddingsEndpoint, tmp_path: Path
) -> None:
    config = MemoryConfig(home=tmp_path, embedder="openai", openai_base_url=endpoint.url,
                          openai_api_key=endpoint.api_key, embedding_model="test-embed")  # fmt: skip
    embedder = load_embedder("openai", config)
    assert len(embedder.embed_query("hello")) == 64


def test_large_batches_are_split_under_the_per_request_limits(endpoint: EmbeddingsEndpoint) -> None:
    embedder = OpenAICompatibleEmbeddings(
        "test-embed", api_key=endpoint.api_key, base_url=endpoint.url
    )
    texts = [f"fact number {i}" for i in range(MAX_TEXTS_PER_REQUEST + 3)]
    vectors = embedder.embed_documents(texts)
    assert len(vectors) == len(texts)
    assert [len(i) for i in endpoint.inputs] == [MAX_TEXTS_PER_REQUEST, 3]
    assert vectors[-1] == embedder.embed_query(texts[-1])


def test_a_wrong_key_names_the_endpoint_the_model_and_the_setting(
    endpoint: EmbeddingsEndpoint,
) -> None:
    embedder = OpenAICompatibleEmbeddings("test-embed", api_key="sk-wrong", base_url=endpoint.url)
    with pytest.raises(ModelUnreachableError) as refused:
        embedder.embed_query("hello")
    message = str(refused.value)
    assert endpoint.url in message and "'test-embed'" in message and "HTTP 401" in message
    assert "RECALLMEM_OPENAI_API_KEY" in message


def test_an_unknown_model_points_at_the_embedding_model_setting(
    endpoint: EmbeddingsEndpoint,
) -> None:
    embedder = OpenAICompatibleEmbeddings(
        "no-such-model", api_key=endpoint.api_key, base_url=endpoint.url
    )
    with pytest.raises(ModelUnreachableError, match=r"HTTP 404.*RECALLMEM_EMBEDDING_MODEL"):
        embedder.embed_documents(["hello"])


def test_an_endpoint_nobody_listens_on_says_so() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    embedder = OpenAICompatibleEmbeddings("m", base_url=url, max_retries=0)
    with pytest.raises(ModelUnreachableError, match=rf"{url} \(model 'm'\) could not be reached"):
        embedder.embed_query("hello")


def test_without_a_key_or_an_endpoint_the_embedder_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ModelNotConfiguredError, match="RECALLMEM_OPENAI_API_KEY"):
        openai_embeddings(MemoryConfig(home=tmp_path, embedder="openai"))


def test_the_cli_remembers_and_recalls_with_it(
    openai_env: EmbeddingsEndpoint, tmp_path: Path
) -> None:
    home = str(tmp_path / "cli")
    assert main(["--home", home, "remember", "Prefers dark mode", "--user", "ada",
                 "--category", "preference"], io.StringIO()) == 0  # fmt: skip
    out = io.StringIO()
    assert main(["--home", home, "recall", "dark mode", "--user", "ada"], out) == 0
    assert "Prefers dark mode" in out.getvalue()
    assert len(openai_env.inputs) >= 2
