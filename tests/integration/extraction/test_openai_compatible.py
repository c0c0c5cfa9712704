"""The configured model path, end to end through langchain-openai's real client.

A stub OpenAI-compatible server on loopback answers the chat-completions call with a tool
call, as a real endpoint does under structured output; nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from recallmem.config import MemoryConfig
from recallmem.extraction.chain import EXTRACTION_TOOL
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings

ARGUMENTS = {
    "facts": [{"content": "Prefers reports written in Chinese", "category": "preference", "confidence": 0.95,
               "evidence": "reports in Chinese please", "message_ids": ["m1"], "source_error": None}],
    "supersede": [], "confirmed": [], "todos_done": [], "profile": {},
}  # fmt: skip


class Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Endpoint.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        call = {"id": "call_1", "type": "function",
                "function": {"name": EXTRACTION_TOOL, "arguments": json.dumps(ARGUMENTS)}}  # fmt: skip
        answer = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls",
                         "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
            "usage": {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290},
        }  # fmt: skip
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Endpoint.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join()


def test_a_configured_endpoint_extracts_through_structured_output(
    home: Path, endpoint: str
) -> None:
    config = MemoryConfig(
        home=home, llm_model="stub-model", openai_base_url=endpoint, openai_api_key="sk-local"
    )
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        report = memory.extract(
            [HumanMessage("Hi! reports in Chinese please.")], user_id="ada", thread_id="t1"
        )
        assert [f.content for f in memory.list(user_id="ada")] == [
            "Prefers reports written in Chinese"
        ]
    (request,) = Endpoint.requests
    body = request["body"]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-local"
    assert body["model"] == "stub-model" and body["tools"][0]["function"]["name"] == EXTRACTION_TOOL
    assert "reports in Chinese please" in body["messages"][-1]["content"]
    assert (report.usage.input_tokens, report.usage.output_tokens) == (1234, 56)
    assert report.added[0].fact.sources[0].extractor == "stub-model"
