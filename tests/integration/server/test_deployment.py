"""The deployment of docs/deployment.md, started locally without docker.

A Chroma server, ``recallmem serve --workers 2`` on one port and a second service (a
replica, as behind a load balancer) on another, all on loopback: readiness and liveness
mean what they say, and a write acknowledged by any worker is read by the others.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from coherence import marker as note_marker

from tests.conformance.stores import free_port

BIN = Path(sys.executable).parent
START_SECONDS = 180.0  # three workers load the default encoder on a shared machine
USER = "ada"


class Chroma:
    """``chroma run`` on a loopback port, stoppable and startable again on its data."""

    def __init__(self, directory: Path) -> None:
        self.path, self.port = directory / "chroma", free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = directory / "chroma.log"

    def start(self) -> None:
        command = [str(BIN / "chroma"), "run", "--host", "127.0.0.1", "--port", str(self.port),
                   "--path", str(self.path)]  # fmt: skip
        with self.log.open("ab") as log:
            env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
            self.process = subprocess.Popen(command, stdout=log, stderr=log, env=env)
        wait_for(lambda: httpx.get(f"{self.url}/api/v2/heartbeat", timeout=2).status_code == 200,
                 self.process, "the Chroma server")  # fmt: skip

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None


def wait_for(ready: Any, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while True:
        assert process.poll() is None, f"{what} exited with {process.returncode}"
        with contextlib.suppress(httpx.HTTPError):
            if ready():
                return
        assert time.monotonic() < deadline, f"{what} did not become ready"
        time.sleep(0.3)


def serve(chroma: Chroma, home: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    env["RECALLMEM_HOME"] = str(home)
    command = [sys.executable, "-m", "recallmem.cli", "serve", "--chroma-url", chroma.url,
               "--port", str(port), *extra]  # fmt: skip
    with (home.parent / f"serve-{port}.log").open("ab") as log:
        return subprocess.Popen(command, env=env, stdout=log, stderr=log)


def ask(method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request on a new connection, so each lands on whichever worker accepts it."""
    return httpx.request(method, url, timeout=120, **kwargs)


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[tuple[Chroma, str, str]]:
    chroma = Chroma(tmp_path)
    chroma.start()
    services: list[subprocess.Popen[bytes]] = []
    try:
        pooled, single = free_port(), free_port()
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        services.append(serve(chroma, tmp_path / "a" / "home", pooled, "--workers", "2"))
        services.append(serve(chroma, tmp_path / "b" / "home", single))
        urls = [f"http://127.0.0.1:{pooled}", f"http://127.0.0.1:{single}"]
        for url, service in zip(urls, services, strict=True):
            wait_for(lambda u=url: ask("GET", f"{u}/v1/ready").status_code == 200, service,
                     f"the service at {url}")  # fmt: skip
        yield chroma, urls[0], urls[1]
    finally:
        for service in services:
            service.terminate()
        for service in services:
            service.wait(timeout=60)
        chroma.stop()


def test_workers_behind_one_port_share_one_memory(deployment: tuple[Chroma, str, str]) -> None:
    _, pooled, single = deployment
    pids, deadline = set(), time.monotonic() + START_SECONDS
    while len(pids) < 2:  # the two workers of the pooled service, each its own process
        body = ask("GET", f"{pooled}/v1/ready").json()
        assert body["status"] == "ready" and body["worker"]["workers"] == 2
        assert body["lock"] == {"mode": "none", "held": True, "holder_pid": None}
        pids.add(body["worker"]["pid"])
        assert time.monotonic() < deadline, "only one worker ever answered"
    stale, rounds = [], 12
    for n in range(rounds):  # alternate: write on one service, read on the other
        writer, reader = (pooled, single) if n % 2 == 0 else (single, pooled)
        marker = note_marker()
        created = ask("POST", f"{writer}/v1/users/{USER}/facts",
                      json={"content": f"Note {n} says {marker}", "category": "context"})  # fmt: skip
        assert created.status_code == 201, created.text
        for _ in range(2):  # on the pooled service, likely both workers
            hits = ask("POST", f"{reader}/v1/users/{USER}/search",
                       json={"query": f"Note {n} says {marker}", "k": 3}).json()["hits"]  # fmt: skip
            if created.json()["id"] not in [h["fact"]["id"] for h in hits]:
                stale.append(n)
    assert stale == [], f"{len(stale)} stale reads of {2 * rounds}"
    listed = ask("GET", f"{pooled}/v1/users/{USER}/facts", params={"limit": 100}).json()
    assert len(listed["items"]) == rounds


def test_readiness_follows_the_store_and_liveness_does_not(
    deployment: tuple[Chroma, str, str],
) -> None:
    chroma, _, single = deployment
    chroma.stop()
    down = ask("GET", f"{single}/v1/ready")
    assert down.status_code == 503 and down.json()["status"] == "not-ready"
    assert down.json()["store"]["reachable"] is False and down.json()["problems"]
    assert ask("GET", f"{single}/v1/live").status_code == 200
    chroma.start()
    again = ask("GET", f"{single}/v1/ready")
    assert again.status_code == 200 and again.json()["store"]["reachable"]
