"""Per-user write sequences: read-your-writes across processes on one store.

The claims rest on one property of Chroma (``add`` never replaces a record), checked
here on both stores; then the sequence itself, a forced interleaving of two writers,
and two real processes writing one user at the same time.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from coherence import USER, run
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.store.chroma.client import open_client
from recallmem.store.chroma.revisions import CHUNK, HEAD_EVERY, Revisions, _head_id
from recallmem.testing import HashingEmbeddings

from tests.conformance.stores import (
    CHROMA_STORES,
    CHROMA_URL,
    Opener,
    close_chroma_http_sessions,
    needs_server,
    open_memory,
)

__all__ = ["open_memory"]  # the fixture: one Memory per simulated process
WRITES_EACH = int(os.environ.get("RECALLMEM_COHERENCE_WRITES", "60"))


@pytest.fixture(params=CHROMA_STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def client(store_kind: str, tmp_path: Path) -> Iterator[Any]:
    """A Chroma client on the embedded store or on the test server."""
    url = CHROMA_URL if store_kind == "server" else None
    yield open_client(MemoryConfig(home=tmp_path / "home", chroma_url=url))
    if url is not None:
        close_chroma_http_sessions()


def test_chroma_add_never_replaces_a_record(client: Any) -> None:
    records = client.get_or_create_collection(f"add_{uuid.uuid4().hex[:8]}")
    records.add(ids=["n"], embeddings=[[1.0]], metadatas=[{"writer": "first"}])
    records.add(ids=["n", "m"], embeddings=[[1.0], [1.0]],
                metadatas=[{"writer": "second"}, {"writer": "other"}])  # fmt: skip
    got = records.get(ids=["n", "m"], include=["metadatas"])
    assert dict(zip(got["ids"], got["metadatas"], strict=True)) == {
        "n": {"writer": "first"},
        "m": {"writer": "other"},
    }


def test_numbers_follow_each_other_and_a_skipped_one_is_noticed(client: Any) -> None:
    prefix = f"rev_{uuid.uuid4().hex[:8]}"
    mine, theirs = (
        Revisions(client.get_or_create_collection(prefix), "here"),
        Revisions(client.get_or_create_collection(prefix), "here"),
    )
    assert mine.latest("ada") == 0 and mine.is_current("ada", 0)
    assert mine.record_write("ada", 0) == 1
    assert theirs.record_write("ada", 0) == 0  # number 1 was taken: it got 2 and stays at 0
    assert not theirs.is_current("ada", 0) and not mine.is_current("ada", 1)
    assert mine.latest("ada") == theirs.latest("ada") == 2 and mine.is_current("ada", 2)
    assert mine.latest("bob") == 0  # users never share numbers


def test_the_latest_number_is_found_past_the_head_hint(client: Any) -> None:
    revisions = Revisions(client.get_or_create_collection(f"rev_{uuid.uuid4().hex[:8]}"), "here")
    seen = 0
    for _ in range(3 * HEAD_EVERY + 5):  # past two head rewrites and one probe page
        seen = revisions.record_write("ada", seen)
    assert seen == 3 * HEAD_EVERY + 5 == revisions.latest("ada")


def test_claims_for_many_users_at_once_take_each_users_next_free_number(client: Any) -> None:
    prefix = f"rev_{uuid.uuid4().hex[:8]}"
    mine, theirs = (
        Revisions(client.get_or_create_collection(prefix), "here"),
        Revisions(client.get_or_create_collection(prefix), "here"),
    )
    seen = 0
    for _ in range(HEAD_EVERY + 2):  # the head hint says 16: number 17 is taken already
        seen = theirs.record_write("ada", seen)
    theirs.record_write("bob", 0)
    mine.record_writes(["ada", "bob", "cy", "ada"])
    assert [mine.latest(u) for u in ("ada", "bob", "cy")] == [HEAD_EVERY + 3, 2, 1]
    assert theirs.record_write("cy", 0) == 0 and theirs.latest("cy") == 2  # no number twice


def _write(revisions: Revisions, user_id: str, times: int, seen: int = 0) -> int:
    for _ in range(times):
        seen = revisions.record_write(user_id, seen)
    return seen


def test_trimming_drops_old_records_and_changes_no_answer(client: Any) -> None:
    records = client.get_or_create_collection(f"rev_{uuid.uuid4().hex[:8]}")
    revisions = Revisions(records, "here")
    seen = _write(revisions, "ada", 5 * CHUNK + 3)
    _write(revisions, "bob", 3)
    before = records.count()
    assert revisions.trim("ada") == 4 * CHUNK  # the last CHUNK to 2 * CHUNK numbers stay
    assert records.count() == before - 4 * CHUNK + 4  # one mark per chunk
    assert revisions.latest("ada") == seen and revisions.is_current("ada", seen)
    assert not revisions.is_current("ada", seen - 1)
    assert not revisions.is_current("ada", 10)  # number 11's record is gone, still claimed
    assert revisions.trim("ada") == 0 and revisions.trim("bob") == 0
    assert revisions.latest("bob") == 3


def test_a_writer_whose_index_predates_a_trim_takes_a_fresh_number(client: Any) -> None:
    records = client.get_or_create_collection(f"rev_{uuid.uuid4().hex[:8]}")
    mine, stale = Revisions(records, "here"), Revisions(records, "here")
    seen = _write(mine, "ada", 3 * CHUNK)
    mine.trim("ada")
    after_trim = records.count()
    # Its index reflects write 10; number 11's record was deleted, and adding it back
    # must not make 11 its own: it takes the next free number and stays at 10.
    assert stale.record_write("ada", 10) == 10
    assert mine.latest("ada") == seen + 1 and not mine.is_current("ada", seen)
    assert records.count() == after_trim + 1  # number 11 was not left behind


def test_a_stale_head_hint_inside_trimmed_numbers_still_finds_the_latest(client: Any) -> None:
    records = client.get_or_create_collection(f"rev_{uuid.uuid4().hex[:8]}")
    revisions = Revisions(records, "here")
    seen = _write(revisions, "ada", 3 * CHUNK)
    revisions.trim("ada")
    # The head is last-writer-wins: a slow writer can leave it far behind.
    records.upsert(ids=[_head_id("ada")], embeddings=[[1.0]], metadatas=[{"seq": 5}])
    assert revisions.latest("ada") == seen
    revisions.record_writes(["ada"])  # an import's claim, starting from the head
    assert revisions.latest("ada") == seen + 1


def test_a_trim_cut_short_after_its_marks_is_finished_by_the_next(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = client.get_or_create_collection(f"rev_{uuid.uuid4().hex[:8]}")
    revisions = Revisions(records, "here")
    seen = _write(revisions, "ada", 4 * CHUNK)

    def crash(ids: list[str]) -> None:
        if ids:
            raise OSError("killed between the marks and the deletion")

    monkeypatch.setattr(revisions, "_delete", crash)
    with pytest.raises(OSError):
        revisions.trim("ada")
    monkeypatch.undo()
    marked = records.count()
    assert revisions.latest("ada") == seen and not revisions.is_current("ada", 20)
    assert revisions.trim("ada") == 0  # its chunks were marked already
    assert records.count() == marked - 3 * CHUNK  # and their records are deleted now


def test_maintenance_trims_a_users_sequence(open_memory: Opener) -> None:
    memory = open_memory()
    for n in range(2 * CHUNK + 5):
        memory.remember(f"Note number {n} about bees", user_id="ada", category="knowledge")
    revision = memory.revision("ada")
    memory.maintain(user_id="ada")
    assert memory.revision("ada") == revision
    assert memory.repository.store.compact("ada") == 0  # maintenance did it
    assert len(memory.recall("bees", user_id="ada", k=3)) == 3


def test_a_write_landing_inside_anothers_write_is_seen_by_both(
    open_memory: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = open_memory(), open_memory()
    for memory in (first, second):
        memory.recall("warm the index", user_id="ada")
    store = second.repository.store
    write_facts = store.upsert
    landed: list[str] = []

    def first_writes_in_between(facts: Any, vectors: Any) -> None:
        # After second checked its index and before it claims a number: the instant at
        # which a last-writer-wins token let second keep an index without first's fact.
        if not landed:
            landed.append(first.remember("Keeps bees", user_id="ada", category="identity").id)
        write_facts(facts, vectors)

    monkeypatch.setattr(store, "upsert", first_writes_in_between)
    goats = second.remember("Keeps goats", user_id="ada", category="identity").id
    for memory in (first, second):
        assert {f.id for f in memory.list(user_id="ada")} == {landed[0], goats}
        assert [h.fact.id for h in memory.recall("bees", user_id="ada", k=1)] == landed


@pytest.mark.chroma_server
@needs_server
def test_two_processes_writing_one_user_read_each_others_writes(tmp_path: Path) -> None:
    assert CHROMA_URL is not None
    prefix = f"coherence_{uuid.uuid4().hex[:8]}"
    outcome = run(CHROMA_URL, prefix, tmp_path, WRITES_EACH)
    print(f"\ncoherence: {outcome.writes} writes, {outcome.checks} cross-process checks, "
          f"{len(outcome.stale)} stale")  # fmt: skip
    assert outcome.writes == outcome.checks == 2 * WRITES_EACH
    assert outcome.stale == []
    config = MemoryConfig(home=tmp_path / "after", chroma_url=CHROMA_URL, collection=prefix)
    with Memory(config, embeddings=HashingEmbeddings()) as after:
        assert len(after.list(user_id=USER, limit=1000)) == 2 * WRITES_EACH
        assert after.revision(USER) == str(2 * WRITES_EACH)
    close_chroma_http_sessions()
