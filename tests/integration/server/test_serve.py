"""``recallmem serve``: what it binds to, what it says at start, and that it serves."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from recallmem.server.running import binding
from recallmem.server.settings import ServerSettings, is_loopback

TOKENS = [{"token": "tok-admin-0123456789abcdef", "admin": True}]


def test_without_tokens_only_loopback_is_bound() -> None:
    for host in ("0.0.0.0", "192.0.2.10", "::"):
        where = binding(ServerSettings(host=host))
        assert where.host == "127.0.0.1"
        assert "loopback only" in where.notice and host in where.notice
    assert binding(ServerSettings(host="::1")).host == "::1"


def test_with_tokens_the_requested_host_is_bound() -> None:
    where = binding(ServerSettings(host="0.0.0.0", api_tokens=TOKENS))
    assert where.host == "0.0.0.0" and "bearer auth on" in where.notice


@pytest.mark.parametrize(
    ("grants", "message"),
    [
        ([{"token": "short", "admin": True}], "at least 16"),
        ([{"token": "tok-0123456789abcdef"}], "exactly one of"),
        ([{"token": "tok-0123456789abcdef", "user_id": "a", "admin": True}], "exactly one of"),
        (TOKENS * 2, "configured twice"),
    ],
)
def test_bad_token_settings_say_what_to_fix(grants: list[dict[str, object]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ServerSettings(api_tokens=grants)


def test_tokens_from_the_environment_and_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "RECALLMEM_API_TOKENS", json.dumps([{"token": "tok-env-0123456789ab", "user_id": "ada"}])
    )
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps(TOKENS))
    monkeypatch.setenv("RECALLMEM_API_TOKENS_FILE", str(path))
    settings = ServerSettings()
    assert settings.grant_for("tok-env-0123456789ab").user_id == "ada"  # type: ignore[union-attr]
    assert settings.grant_for("tok-admin-0123456789abcdef").admin  # type: ignore[union-attr]
    assert not settings.open_access


@pytest.mark.parametrize(
    ("tokens", "words"),
    [("", "RECALLMEM_API_TOKENS is empty"), ("[{oops", "RECALLMEM_API_TOKENS is not JSON")],
)
def test_unreadable_tokens_stop_the_start_with_one_paragraph(
    tmp_path: Path, tokens: str, words: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    env |= {"RECALLMEM_HOME": str(tmp_path / "home"), "RECALLMEM_API_TOKENS": tokens}
    done = subprocess.run(
        [sys.executable, "-m", "recallmem.cli", "serve", "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert words in done.stderr and "JSON list of grants" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_loopback_detection() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.8.8", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "example.org", "10.0.0.1"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_serve_command_starts_on_loopback_and_serves(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    env["RECALLMEM_HOME"] = str(tmp_path / "home")
    command = [
        sys.executable,
        "-m",
        "recallmem.cli",
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
    ]
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as service:
        try:
            banner = [service.stdout.readline() for _ in range(3)]  # type: ignore[union-attr]
            assert "binds to loopback only" in banner[0]
            assert "refusing to listen on 0.0.0.0" in banner[0]
            assert f"http://127.0.0.1:{port}/" in banner[2]
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                deadline = time.monotonic() + 60
                while True:
                    try:
                        health = client.get("/v1/health").json()
                        break
                    except httpx.TransportError:
                        assert service.poll() is None and time.monotonic() < deadline
                        time.sleep(0.2)
                assert health["auth"] == "open-loopback"
                assert "recallmem" in client.get("/").text
                assert client.get("/static/app.js").status_code == 200
        finally:
            service.terminate()
            service.wait(timeout=20)
