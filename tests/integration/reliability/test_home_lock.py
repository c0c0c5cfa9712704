"""One process owns an embedded home: the second opener fails at once, naming the owner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import HOLD, OPEN, env_for, free_port, kill9, python, start, wait_for
from recallmem import Memory, MemoryConfig
from recallmem.errors import StoreLockedError
from recallmem.store.chroma.home_lock import LOCK_NAME, read_holder
from recallmem.testing import HashingEmbeddings


def test_a_second_process_fails_fast_and_the_lock_dies_with_the_owner(home: Path) -> None:
    holder = start(HOLD, str(home))
    try:
        done = python(OPEN, str(home))
        assert done.returncode == 0, done.stderr
        second = json.loads(done.stdout)
        assert second["pid"] == holder.pid
        assert f"pid {holder.pid}" in second["locked"] and "chroma_url" in second["locked"]
        assert second["seconds"] < 2.0  # it fails at once, it does not wait for the lock
    finally:
        kill9(holder)
    # kill -9 runs no cleanup; the OS dropped the lock with the process.
    done = python(OPEN, str(home))
    assert json.loads(done.stdout) == {"locked": None, "facts": ["Holds the home"]}, done.stderr


def test_this_process_shares_its_lock_and_releases_it_on_close(home: Path) -> None:
    config = MemoryConfig(home=home)
    first = Memory(config, embeddings=HashingEmbeddings())
    second = Memory(config, embeddings=HashingEmbeddings())  # same process: shared
    first.close()
    assert json.loads(python(OPEN, str(home)).stdout)["locked"]  # `second` still holds it
    second.close()
    assert json.loads(python(OPEN, str(home)).stdout)["locked"] is None
    holder = read_holder(home)
    assert holder is not None and (home / LOCK_NAME).exists()


def test_a_locked_home_is_a_clear_error_in_process(home: Path) -> None:
    holder = start(HOLD, str(home))
    try:
        with pytest.raises(StoreLockedError, match=rf"pid {holder.pid}.*chroma_url"):
            Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    finally:
        kill9(holder)
    Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()).close()


SERVE = """
import sys
from recallmem.server.running import serve
from recallmem.testing import HashingEmbeddings
import recallmem.memory as memory_module
original = memory_module.default_embeddings
memory_module.default_embeddings = lambda name: HashingEmbeddings()  # fast and offline
sys.exit(serve(port=int(sys.argv[2]), home=sys.argv[1], out=sys.stdout))
"""


def test_the_cli_while_the_service_runs_prints_the_request_to_make(home: Path) -> None:
    port = free_port()
    service = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(home), str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env_for(),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=5) as client:

            def up() -> bool:
                assert service.poll() is None, service.stdout.read()  # type: ignore[union-attr]
                try:
                    return client.get("/v1/health").json()["status"] == "ok"
                except httpx.TransportError:
                    return False

            wait_for(up)
            cli = [sys.executable, "-m", "recallmem.cli", "--home", str(home)]
            done = subprocess.run(
                [*cli, "remember", "Keeps bees", "--user", "ada", "--category", "identity"],
                capture_output=True, text=True, timeout=120, env=env_for(),
            )  # fmt: skip
            assert done.returncode == 1
            assert f"pid {service.pid}" in done.stderr and base in done.stderr
            curl = done.stderr.split("run instead:\n", 1)[1].strip()
            assert curl.startswith(f"curl -sS -X POST {base}/v1/users/ada/facts")
            made = subprocess.run(curl, shell=True, capture_output=True, text=True, timeout=30)
            assert json.loads(made.stdout)["content"] == "Keeps bees", made.stdout
            listed = client.get("/v1/users/ada/facts").json()["items"]
            assert [f["content"] for f in listed] == ["Keeps bees"]
            # A second service on the same home refuses to start instead of answering 503.
            other = subprocess.run(
                [sys.executable, "-c", SERVE, str(home), str(free_port())],
                capture_output=True, text=True, timeout=120, env=env_for(),
            )  # fmt: skip
            assert other.returncode != 0
            assert "in use by another process" in other.stderr and base in other.stderr
    finally:
        service.terminate()
        service.communicate(timeout=30)


def _open_in_child(home: str, answers: Any) -> None:
    try:
        Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    except StoreLockedError as exc:
        answers.put(str(exc))
    else:
        answers.put("opened")


def test_a_forked_child_does_not_inherit_the_home(home: Path) -> None:
    import multiprocessing

    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_open_in_child, args=(str(home), answers))
    child.start()
    answer = answers.get(timeout=60)
    child.join(timeout=60)
    assert f"pid {os.getpid()}" in answer  # the parent owns it; the child is told so
    memory.close()


def test_a_lock_file_deleted_by_hand_still_keeps_a_second_process_out(home: Path) -> None:
    holder = start(HOLD, str(home))
    try:
        (home / LOCK_NAME).unlink()  # what an operator "cleaning up" might do
        done = python(OPEN, str(home))
        assert done.returncode == 0, done.stderr
        second = json.loads(done.stdout)
        assert second["locked"] and "Never delete that file" in second["locked"]
        assert LOCK_NAME in second["locked"]
    finally:
        kill9(holder)
    done = python(OPEN, str(home))  # the owner gone, the home opens (a new lock file)
    assert json.loads(done.stdout) == {"locked": None, "facts": ["Holds the home"]}, done.stderr
