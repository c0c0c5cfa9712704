"""An OpenAI-compatible embeddings endpoint on 127.0.0.1, for tests of the real client.

``POST /v1/embeddings`` answers as OpenAI does (``float`` or ``base64`` vectors, usage),
with deterministic vectors: :class:`recallmem.testing.HashingEmbeddings` of the model's
width (``dimensions`` shortens them), so recall over them means something. ``GET
/v1/models`` lists the models it serves; any other model is a 404, a key other than the
expected one a 401. Every request is recorded. ``hold_after`` makes the endpoint stop
answering after that many embedding requests (until released), so a test can kill its
client mid-way.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from recallmem.testing import HashingEmbeddings


@dataclass
class EmbeddingsEndpoint:
    """The endpoint's models (name -> width), key, and what it was asked."""

    models: dict[str, int] = field(default_factory=lambda: {"test-embed": 64})
    api_key: str = "sk-local-test"
    hold_after: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    held: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    @property
    def inputs(self) -> list[Any]:
        """Every ``input`` sent to ``/embeddings``, one entry per request."""
        return [r["body"]["input"] for r in self.requests if r["path"].endswith("/embeddings")]

    def answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, Any]:
        """(status, JSON body) for one request."""
        self.requests.append({"path": path, "headers": headers, "body": body})
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, _error("Incorrect API key provided", "invalid_api_key")
        if path == "/v1/models":
            return 200, {
                "object": "list",
                "data": [{"id": m, "object": "model"} for m in self.models],
            }
        if path != "/v1/embeddings":
            return 404, _error(f"no route {path}", "not_found")
        width = self.models.get(body.get("model", ""))
        if width is None:
            return 404, _error(f"The model `{body.get('model')}` does not exist", "model_not_found")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if not all(isinstance(t, str) for t in texts):
            return 400, _error("this endpoint takes text, not token arrays", "invalid_input")
        if self.hold_after is not None and len(self.inputs) > self.hold_after:
            self.held.set()
            self.released.wait()
        dimensions = int(body.get("dimensions") or width)
        vectors = np.asarray(HashingEmbeddings(width).embed_documents(texts), dtype=np.float32)
        vectors = vectors[:, :dimensions]
        data = []
        for row, vector in enumerate(vectors):
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(vector.astype("<f4").tobytes()).decode()
            else:
                encoded = vector.tolist()
            data.append({"object": "embedding", "index": row, "embedding": encoded})
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return 200, {"object": "list", "data": data, "model": body["model"], "usage": usage}


def _error(message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


@contextmanager
def serve_embeddings(endpoint: EmbeddingsEndpoint | None = None) -> Iterator[EmbeddingsEndpoint]:
    """Run ``endpoint`` on a free loopback port for the duration; ``endpoint.url`` is
    its base URL (``http://127.0.0.1:PORT/v1``)."""
    endpoint = endpoint or EmbeddingsEndpoint()

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, body: dict[str, Any]) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, payload = endpoint.answer(self.path, headers, body)
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._reply(json.loads(self.rfile.read(length) or b"{}"))

        def do_GET(self) -> None:
            self._reply({})

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client killed mid-request (the point of hold_after) is no error here

    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        endpoint.released.set()
        server.shutdown()
        server.server_close()
