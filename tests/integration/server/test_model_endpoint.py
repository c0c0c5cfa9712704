"""A configured chat model that cannot be reached: the error names the endpoint and the
model and what to check, the log carries one line per failed turn, and readiness and
health report the endpoint's state without calling the model on every probe."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from langchain_openai import ChatOpenAI
from recallmem.errors import ExtractionError
from recallmem.memory import Memory
from recallmem.server.app import create_app
from serverkit import ADA, client_for, token_settings
from test_chat_stream import parse_sse

from tests.embeddings_endpoint import EmbeddingsEndpoint, serve_embeddings


def closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


@pytest.fixture
def endpoint() -> Iterator[EmbeddingsEndpoint]:
    with serve_embeddings() as served:  # it lists its models at GET /v1/models
        yield served


def client_with(memory: Memory, model: ChatOpenAI) -> TestClient:
    return client_for(create_app(memory, token_settings(), model=model), ADA)


def test_an_unreachable_model_is_named_logged_once_and_reported(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    url = closed_url()
    model = ChatOpenAI(model="qwen3-8b", base_url=url, api_key="k", max_retries=0)  # type: ignore[arg-type]
    client = client_with(memory, model)
    with caplog.at_level(logging.WARNING):
        response = client.post("/v1/chat/stream", json={"message": "hello", "thread_id": "t"})
    errors = [data for name, data in parse_sse(response.text) if name == "error"]
    assert len(errors) == 1 and errors[0]["title"] == "Chat model unreachable"
    detail = errors[0]["detail"]
    assert f"the chat endpoint {url} (model 'qwen3-8b') could not be reached" in detail
    assert "RECALLMEM_OPENAI_BASE_URL" in detail
    failures = [r for r in caplog.records if "chat turn in thread t failed" in r.getMessage()]
    assert len(failures) == 1 and failures[0].exc_info is None  # one line, no traceback
    assert not [r for r in caplog.records if r.exc_info]

    ready = client.get("/v1/ready")
    assert ready.status_code == 200  # memory works without the model
    seen = ready.json()["model"]
    assert (seen["base_url"], seen["model"], seen["reachable"], seen["seen_by"]) == (
        url,
        "qwen3-8b",
        False,
        "call",
    )
    health = client.get("/v1/health").json()
    assert health["status"] == "degraded" and detail in health["problems"]


def test_probes_check_the_model_list_once_a_minute_not_the_model(
    memory: Memory, endpoint: EmbeddingsEndpoint
) -> None:
    model = ChatOpenAI(model="test-embed", base_url=endpoint.url, api_key=endpoint.api_key)  # type: ignore[arg-type]
    client = client_with(memory, model)
    first = client.get("/v1/ready").json()["model"]
    for _ in range(3):
        assert client.get("/v1/ready").status_code == 200
    assert client.get("/v1/health").json()["status"] == "ok"
    assert [r["path"] for r in endpoint.requests] == ["/v1/models"]  # one check, no call
    assert (first["reachable"], first["seen_by"], first["problem"]) == (True, "check", None)


def test_a_model_the_endpoint_does_not_serve_is_named(
    memory: Memory, endpoint: EmbeddingsEndpoint
) -> None:
    model = ChatOpenAI(model="gpt-5-typo", base_url=endpoint.url, api_key=endpoint.api_key)  # type: ignore[arg-type]
    seen = client_with(memory, model).get("/v1/ready").json()["model"]
    assert seen["reachable"] is False
    assert "(model 'gpt-5-typo') does not serve that model (it lists test-embed)" in seen["problem"]
    assert "RECALLMEM_LLM_MODEL" in seen["problem"]


def test_without_a_configured_model_there_is_nothing_to_report(memory: Memory) -> None:
    client = client_for(create_app(memory, token_settings()), ADA)
    assert client.get("/v1/ready").json()["model"] is None


def test_extraction_against_an_unreachable_model_names_it_and_keeps_the_turn(
    memory: Memory,
) -> None:
    url = closed_url()
    model = ChatOpenAI(model="qwen3-8b", base_url=url, api_key="k", max_retries=0)  # type: ignore[arg-type]
    with Memory(memory.config.model_copy(update={"home": memory.config.home / "x"}),
                embeddings=memory.embeddings, model=model) as extracting:  # fmt: skip
        with pytest.raises(ExtractionError) as failed:
            extracting.extract(
                [{"role": "user", "content": "I moved to Berlin last month"}],
                user_id="ada", thread_id="t",
            )  # fmt: skip
        assert f"the chat endpoint {url} (model 'qwen3-8b') could not be reached" in str(
            failed.value
        )
        assert extracting.queue.pending(user_id="ada")  # kept queued for a retry
