"""``recallmem serve --workers N``: refused on the embedded store; readiness and liveness."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.running import check_workers, worker_environment
from recallmem.server.settings import ServerSettings


def test_several_workers_on_the_embedded_store_are_refused_before_anything_opens(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    env["RECALLMEM_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-m", "recallmem.cli", "serve", "--workers", "3"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    for words in ("--workers 3 needs a Chroma server", "home lock", "lose facts",
                  "chroma run", "--chroma-url", "one worker"):  # fmt: skip
        assert words in done.stderr
    assert not home.exists()  # refused before the store, the lock or the queue opened


def test_workers_from_the_environment_are_refused_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLMEM_WORKERS", "2")
    assert ServerSettings().workers == 2
    with pytest.raises(InvalidInputError, match="needs a Chroma server"):
        check_workers(ServerSettings().workers, MemoryConfig())
    check_workers(1, MemoryConfig())  # one worker: the embedded store is fine
    check_workers(2, MemoryConfig(chroma_url="http://127.0.0.1:8000"))


def test_each_worker_gets_the_commands_options() -> None:
    config = MemoryConfig(chroma_url="http://127.0.0.1:8000", home="/srv/mem")
    env = worker_environment(ServerSettings(workers=4, port=9000), config)
    assert env["RECALLMEM_CHROMA_URL"] == "http://127.0.0.1:8000"
    assert env["RECALLMEM_HOME"] == "/srv/mem" and env["RECALLMEM_WORKERS"] == "4"
    assert env["RECALLMEM_PORT"] == "9000"


def test_readiness_on_the_embedded_store_names_the_lock_and_the_worker(memory: Memory) -> None:
    client = TestClient(create_app(memory), base_url="http://localhost")
    assert client.get("/v1/live").json() == {"status": "alive", "pid": os.getpid()}
    ready = client.get("/v1/ready")
    body = ready.json()
    assert ready.status_code == 200 and body["status"] == "ready" and body["problems"] == []
    assert body["store"]["kind"] == "chroma-embedded" and body["store"]["reachable"]
    assert body["lock"] == {"mode": "home-lock", "held": True, "holder_pid": os.getpid()}
    assert body["worker"]["pid"] == os.getpid() and body["worker"]["workers"] == 1


def test_a_lost_home_lock_makes_the_worker_unready(memory: Memory) -> None:
    client = TestClient(create_app(memory), base_url="http://localhost")
    lock_file = memory.config.home / "recallmem.lock"
    lock_file.write_text('{"pid": 1, "host": "h", "command": "other", "started_at": 0}')
    ready = client.get("/v1/ready")
    assert ready.status_code == 503 and ready.json()["status"] == "not-ready"
    assert "no longer owns the embedded home" in ready.json()["problems"][0]
    assert client.get("/v1/live").status_code == 200  # alive all the same
