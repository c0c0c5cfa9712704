"""A full disk: a refused write did not happen, reads keep working, the error says where.

Needs root to mount a small tmpfs; skipped otherwise (the skip says why).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import pytest
from fastapi.testclient import TestClient
from forgetting import files_holding
from helpers import env_for, python
from recallmem import Memory, MemoryConfig
from recallmem.durability.owed_scrub import OwedScrub
from recallmem.errors import DiskFullError, StoreError
from recallmem.server.app import create_app
from recallmem.testing import HashingEmbeddings
from recallmem.types import Profile, ProfileSection

DISK_MB = 4
MAX_BATCHES = 400


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (mount -t tmpfs -o size=4m)")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MB}m", "tmpfs", str(disk)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(out: BinaryIO) -> int:
    """Write until the disk refuses; returns the bytes written."""
    written = 0
    try:
        while wrote := out.write(b"\0" * 65536):
            written += wrote
    except OSError:
        pass
    return written


def batch(n: int) -> list[dict[str, str]]:
    return [{"content": f"Batch {n} fact {i} " + "padding " * 30, "category": "context"}
            for i in range(40)]  # fmt: skip


READ = """
import json, sys
from recallmem import Memory, MemoryConfig
from recallmem.testing import HashingEmbeddings
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
facts, _ = memory.repository.store.load_user("ada")
print(json.dumps(sorted({int(f.content.split()[1]) for f in facts})))
"""


def stored_batches(home: Path) -> list[int]:
    done = python(READ, str(home))
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def test_a_full_disk_refuses_writes_whole_and_keeps_reads(small_disk: Path) -> None:
    home = small_disk / "home"
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    written: list[int] = []
    refused: list[int] = []
    messages: list[str] = []
    for n in range(MAX_BATCHES):
        try:
            memory.remember_many(batch(n), user_id="ada")
        except DiskFullError as exc:
            refused.append(n)
            messages.append(str(exc))
            if len(refused) == 3:
                break
        else:
            written.append(n)
    assert refused and written, "the disk never filled, or filled at once"
    assert all(m.startswith("disk full") and str(small_disk) in m for m in messages)
    # Reads keep working while the disk is full, and show exactly the accepted batches.
    listed = {int(f.content.split()[1]) for f in memory.list(user_id="ada", limit=1000)}
    assert listed == set(written)
    assert memory.recall("Batch fact padding", user_id="ada")
    memory.close()
    assert stored_batches(home) == written  # another process sees the same, still full
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    assert stored_batches(home) == written  # no refused batch shows up once there is room
    print(json.dumps({"written": len(written), "refused": refused}))


def test_a_disk_filled_by_something_else_still_reads(small_disk: Path) -> None:
    home = small_disk / "home"
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    memory.remember_many(batch(0), user_id="ada")
    stored = len(memory.list(user_id="ada", limit=1000))
    filler = small_disk / "filler"
    # Unbuffered: a buffered file keeps what the full disk refused and raises ENOSPC
    # again when it closes (this test once failed so, creating its filler).
    with filler.open("wb", buffering=0) as out:  # fill the disk to the last byte
        filled = fill(out)
    assert filled > 0
    with pytest.raises(DiskFullError, match=r"disk full.*Nothing was written"):
        memory.remember("One more", user_id="ada", category="context")
    assert len(memory.list(user_id="ada", limit=1000)) == stored
    assert memory.recall("Batch 0 fact 7", user_id="ada", k=1)
    memory.close()
    # Chroma writes when a client opens, so a new process cannot open a disk filled to
    # the last byte; it is told so, with the path (a running one keeps reading, above).
    fresh = python(READ, str(home))
    assert fresh.returncode != 0 and "disk full: could not open the embedded Chroma" in fresh.stderr
    assert str(home) in fresh.stderr
    filler.unlink()
    assert stored_batches(home) == [0]


UNGUARDED = """
import sys
import recallmem.store.chroma.adapter as chroma
from recallmem import Memory, MemoryConfig
from recallmem.errors import StoreError
from recallmem.testing import HashingEmbeddings
chroma.check_room = lambda *args: None  # as if another program filled the disk meanwhile
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
failed = 0
for n in range(400):
    items = [{"content": f"Batch {n} fact {i} " + "padding " * 30, "category": "context"}
             for i in range(40)]
    print("writing", n, flush=True)
    try:
        memory.remember_many(items, user_id="ada")
        print("written", n, flush=True)
    except StoreError as exc:
        print("failed", n, flush=True)
        failed += 1
        if failed == 3:
            break
"""
# Chroma 1.5 sometimes never returns from a write that meets a full disk (inside its
# Rust core; 1-4 runs in 14 here, with or without this wave's changes). That write is
# then killed, as a crash in mid-write would end it: it was never acknowledged. The
# whole fill takes about 20 s; a run past this has hung in its last write.
FILL_TIMEOUT_SECONDS = 60


def fill_the_disk(home: Path) -> dict[str, list[int]]:
    """Write batches with the free-space check off until Chroma fails three (or hangs in
    one, which is then killed); which batches were acknowledged, and which were not."""
    child = subprocess.Popen([sys.executable, "-c", UNGUARDED, str(home)], env=env_for(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        out, err = child.communicate(timeout=FILL_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    assert child.returncode in (0, -9), err
    events = [line.split() for line in out.splitlines()]
    run: dict[str, list[int]] = {"written": [], "failed": [], "killed": []}
    for event, n in events:
        if event in run:
            run[event].append(int(n))
    if child.returncode == -9:  # the write it hung in: never acknowledged
        run["killed"] = [int(n) for event, n in events[-1:] if event == "writing"]
    return run


def test_a_write_chroma_half_did_is_reported_at_the_next_open(
    small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = small_disk / "home"
    run = fill_the_disk(home)
    assert run["failed"] or run["killed"], "the disk never filled"
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    with caplog.at_level("WARNING", logger="recallmem.store"):
        memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    facts, _ = memory.repository.store.load_user("ada")
    batches = [int(f.content.split()[1]) for f in facts]
    assert set(run["written"]) <= set(batches)  # nothing acknowledged is lost
    for killed in run["killed"]:  # killed in mid-write: all of that call or none
        assert batches.count(killed) in (0, 40)
    ghosts = set(batches) - set(run["written"]) - set(run["killed"])
    assert ghosts <= set(run["failed"])
    # Every write that failed but is present after all was counted and reported.
    assert (memory.repository.store.unapplied_at_open > 0) == bool(ghosts), (run, ghosts)
    if ghosts:
        assert "reported as failed may be present" in caplog.text
    memory.close()
    print(json.dumps({"failed": run["failed"], "present_after_all": sorted(ghosts),
                      "unapplied_rows": memory.repository.store.unapplied_at_open}))  # fmt: skip


CAROL = "carol.jones@example.com"


def _carol(memory: Memory) -> str:
    """Carol's facts, profile and a queued turn; returns one fact's id."""
    fact = memory.remember("Owns a Quuxmobile", user_id=CAROL, category="context")
    memory.remember("Keeps bees", user_id=CAROL, category="identity")
    memory.set_profile(Profile(user_id=CAROL, work_context=ProfileSection(summary="Beekeeper")))
    memory.observe([{"role": "user", "content": "My Quuxmobile is blue"}], user_id=CAROL,
                   thread_id="t1")  # fmt: skip
    memory.remember("Grace keeps honey", user_id="grace", category="preference")
    return fact.id


def test_a_purge_on_a_full_disk_is_refused_whole(small_disk: Path) -> None:
    home = small_disk / "home"
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    fact_id = _carol(memory)
    client = TestClient(create_app(memory), base_url="http://localhost")
    filler = small_disk / "filler"
    with filler.open("wb", buffering=0) as out:
        assert fill(out) > 0
    with pytest.raises(DiskFullError, match=r"disk full.*Nothing was erased"):
        memory.forget(user_id=CAROL, purge=True)
    with pytest.raises(DiskFullError, match=r"disk full.*Nothing was erased"):
        memory.forget(fact_id, user_id=CAROL, purge=True)
    for path in (f"/v1/users/{CAROL}/memory", f"/v1/users/{CAROL}/facts/{fact_id}"):
        answer = client.delete(path, params={"purge": "true"})
        assert answer.status_code == 503, answer.text
        assert answer.json()["detail"].startswith("disk full")
    assert len(memory.list(user_id=CAROL)) == 2 and memory.queue.pending(CAROL)  # nothing half gone
    memory.close()
    filler.unlink()
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as reopened:
        assert len(reopened.list(user_id=CAROL)) == 2
        reopened.forget(user_id=CAROL, purge=True)  # with room again, "forget me" works
        assert reopened.list(user_id=CAROL, status=None) == []
    assert files_holding(home, [CAROL, "Quuxmobile", "Beekeeper"]) == {}


def test_a_purge_the_disk_stops_half_way_is_finished_at_the_next_open(
    small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = small_disk / "home"
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    _carol(memory)
    filler = small_disk / "filler"
    owe = OwedScrub.owe

    def owe_then_fill(self: OwedScrub) -> None:  # the disk fills once the purge began
        owe(self)
        if not filler.exists():
            with filler.open("wb", buffering=0) as out:
                fill(out)

    monkeypatch.setattr(OwedScrub, "owe", owe_then_fill)
    with pytest.raises(DiskFullError, match="disk full"):
        memory.forget(user_id=CAROL, purge=True)
    monkeypatch.undo()
    # Until the erasure is finished, nothing new of carol is written (it would be erased).
    with pytest.raises(StoreError, match="was interrupted"):
        memory.remember("Owns a kite", user_id=CAROL, category="context")
    memory.close()
    filler.unlink()
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as reopened:
        assert reopened.list(user_id=CAROL, status=None) == []  # finished at the open
        assert reopened.queue.pending(CAROL) == []
        assert reopened.get_profile(user_id=CAROL).sections() == {}
        assert [f.content for f in reopened.list(user_id="grace")] == ["Grace keeps honey"]
        reopened.remember("Owns a kite", user_id=CAROL, category="context")  # writes again
    assert files_holding(home, ["Quuxmobile", "Beekeeper"]) == {}
