"""A request whose body never arrives whole (a Content-Length larger than what is sent)
holds no connection for long: after ``body_read_timeout_seconds`` without a byte the
service answers 408 and closes it. Once the body is complete, a long answer (a chat
stream) is not cut short by that timeout."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.settings import ServerSettings
from recallmem.testing import FakeChatModel
from serverkit import LiveServer

BOUND_SECONDS = 75  # what a proxy or a load balancer waits for an idle connection


def _held_for(url: str, request: bytes, wait: float = 30) -> tuple[float, bytes]:
    """Send ``request`` and read until the service closes the connection."""
    host, port = url.removeprefix("http://").split(":")
    started, answer = time.monotonic(), b""
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(request)
        while chunk := sock.recv(4096):
            answer += chunk
    return time.monotonic() - started, answer


def _short(method: str, path: str) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    return (head + "Content-Length: 1000\r\n\r\n").encode() + b'{"content": "Likes t'


def test_a_body_shorter_than_its_length_is_answered_408_and_closed(memory: Memory) -> None:
    assert ServerSettings().body_read_timeout_seconds < BOUND_SECONDS
    app = create_app(memory, ServerSettings(body_read_timeout_seconds=1.0))
    with LiveServer(app) as url:
        held, answer = _held_for(url, _short("POST", "/v1/users/ada/facts"))
        assert answer.startswith(b"HTTP/1.1 408") and b"connection: close" in answer.lower()
        assert b"Content-Length was reached" in answer and held < 10
        for method, path in (("DELETE", "/v1/users/ada/memory"), ("GET", "/v1/users/ada/facts")):
            held, answer = _held_for(url, _short(method, path))  # the body is never read
            assert held < 10, (method, held)
    assert memory.list(user_id="ada") == []


def test_a_long_answer_is_not_cut_by_the_body_timeout(memory: Memory) -> None:
    def slow(_: Any) -> str:
        time.sleep(2.5)  # longer than the body timeout, after the body came whole
        return "Here is the slow answer."

    model = FakeChatModel(responses=[slow])
    app = create_app(memory, ServerSettings(body_read_timeout_seconds=1.0), model=model)
    with LiveServer(app) as url:
        body = {"message": "Tell me slowly", "thread_id": "t1", "user_id": "ada"}
        answer = httpx.post(f"{url}/v1/chat/stream", json=body, timeout=30)
    assert answer.status_code == 200 and "Here is the slow answer." in answer.text
