"""A small OpenAI-compatible server on 127.0.0.1 that answers from recordings.

``POST /v1/chat/completions`` (plain or streamed) and ``GET /v1/models``, in a thread,
on a free loopback port; for tests that drive the product over HTTP exactly as a user's
configuration does (``RECALLMEM_LLM_MODEL``, ``RECALLMEM_OPENAI_API_KEY``,
``RECALLMEM_OPENAI_BASE_URL``). Any key is accepted; the model name is ignored.

>>> import tempfile, httpx
>>> from recallmem.replay.recordings import Recordings
>>> with ReplayServer(Recordings(tempfile.mkdtemp())) as server:
...     reply = httpx.post(f"{server.base_url}/chat/completions",
...                        json={"messages": [{"role": "user", "content": "hi"}]})
>>> reply.status_code, reply.json()["error"]["code"]
(404, 'no_recording')
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from recallmem.replay.answer import Answerer, HttpAnswer
from recallmem.replay.recordings import Recordings


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _send(self, answer: HttpAnswer) -> None:
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/").endswith("/chat/completions"):
            self._send(self.server.answerer.answer(raw))
        else:
            self._send(HttpAnswer(404, "application/json", b'{"error": {"message": "not here"}}'))

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": "replay", "object": "model"}]}
            self._send(HttpAnswer(200, "application/json", json.dumps(body).encode()))
        else:
            self._send(HttpAnswer(404, "application/json", b'{"error": {"message": "not here"}}'))

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read the recordings, not the access log."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    answerer: Answerer


class ReplayServer:
    """The replay API on ``127.0.0.1`` (a free port), for a ``with`` block or start/stop.

    Args:
        recordings: where the recorded replies are.
        requests_dir: where a request without a recording is written (see
            :class:`~recallmem.replay.answer.Answerer`).
    """

    def __init__(self, recordings: Recordings | str | Path,
                 requests_dir: str | Path | None = None) -> None:  # fmt: skip
        if not isinstance(recordings, Recordings):
            recordings = Recordings(recordings)
        folder = Path(requests_dir) if requests_dir is not None else None
        self.answerer = Answerer(recordings, folder)
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.answerer = self.answerer
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The base URL an OpenAI client takes (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ReplayServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
