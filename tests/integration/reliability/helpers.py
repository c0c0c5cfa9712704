"""Subprocess helpers of the reliability suite: real processes on one home."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

HOLD = """
import sys
from recallmem import Memory, MemoryConfig
from recallmem.testing import HashingEmbeddings
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
memory.remember("Holds the home", user_id="holder", category="context")
print("ready", flush=True)
sys.stdin.read()  # until the test closes our stdin or kills us
"""

OPEN = """
import json, sys, time
from recallmem import Memory, MemoryConfig
from recallmem.errors import StoreLockedError
from recallmem.testing import HashingEmbeddings
started = time.monotonic()
try:
    memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
except StoreLockedError as exc:
    print(json.dumps({"locked": str(exc), "seconds": time.monotonic() - started,
                      "pid": exc.holder.pid if exc.holder else None}))
else:
    facts = memory.list(user_id="holder")
    print(json.dumps({"locked": None, "facts": [f.content for f in facts]}))
"""


def env_for(home: Path | None = None) -> dict[str, str]:
    """This environment without RECALLMEM_* settings (plus a home when given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    if home is not None:
        env["RECALLMEM_HOME"] = str(home)
    return env


def python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a Python snippet to completion."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True, text=True, timeout=timeout, env=env_for(),
    )  # fmt: skip


def start(code: str, *args: str) -> subprocess.Popen[str]:
    """Start a Python snippet that prints 'ready' once it holds what it should."""
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env_for(),
    )  # fmt: skip
    line = process.stdout.readline()  # type: ignore[union-attr]
    if line.strip() != "ready":
        process.kill()
        _, err = process.communicate(timeout=30)  # closes the pipes: what it said is here
        raise AssertionError(f"helper did not start: {line!r} {err}")
    return process


def kill9(process: subprocess.Popen[str]) -> str:
    """SIGKILL and reap (no handler, no atexit, no flush runs); returns what it printed."""
    os.kill(process.pid, signal.SIGKILL)
    out, _ = process.communicate(timeout=30)  # reaps it and closes the pipes
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(condition: object, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.2)
