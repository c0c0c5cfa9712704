"""The durable queue: debouncing, watermarks, leases, retries and dead letters, on a real SQLite file."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from recallmem.errors import InvalidInputError
from recallmem.extraction.backlog import Backlog
from recallmem.extraction.filter import Utterance
from recallmem.extraction.queue_schema import owner_is_dead
from recallmem.extraction.window_queue import QueueStore, ThreadScope, Timing

SCOPE = ThreadScope(user_id="u1", thread_id="t1")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def says(*texts: str, role: str = "user") -> list[Utterance]:
    return [Utterance(id=f"{role}-{t}", role=role, content=t) for t in texts]  # type: ignore[arg-type]


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def queue(tmp_path: Path, clock: Clock) -> QueueStore:
    timing = Timing(debounce=30, max_wait=120, flush_count=5, max_attempts=3, retry_base=10)
    store = QueueStore(tmp_path / "q.sqlite3", timing, clock=clock)
    yield store
    store.close()


def test_a_window_waits_for_the_debounce(queue: QueueStore, clock: Clock) -> None:
    queue.add(SCOPE, says("I write TypeScript"))
    clock.now += 29
    assert queue.claim() is None
    clock.now += 1
    window = queue.claim()
    assert window is not None and [m.content for m in window.messages] == ["I write TypeScript"]


def test_steady_traffic_cannot_starve_a_thread(queue: QueueStore, clock: Clock) -> None:
    for n in range(4):  # a message every 25 s never leaves 30 s of quiet
        queue.add(SCOPE, says(f"message {n}"))
        assert queue.claim() is None
        clock.now += 25
    clock.now += 21  # 121 s after the first message
    queue.add(SCOPE, says("message 4"))
    assert queue.claim() is not None


def test_message_count_and_remember_requests_flush_at_once(queue: QueueStore, clock: Clock) -> None:
    queue.add(SCOPE, says("a", "b", "c", "d", "e"))
    assert queue.claim() is not None
    other = ThreadScope(user_id="u1", thread_id="t2")
    queue.add(other, says("记住：我对花生过敏"), [True])
    window = queue.claim()
    assert window is not None and window.scope == other


def test_messages_seen_before_are_not_queued_again(queue: QueueStore) -> None:
    assert queue.add(SCOPE, says("a", "b")) == 2
    assert queue.add(SCOPE, says("a", "b", "c")) == 1
    assert queue.pending_count(SCOPE) == 3


def test_completing_moves_the_watermark_and_forgets_the_text(
    queue: QueueStore, tmp_path: Path
) -> None:
    queue.add(SCOPE, says("a", "b"))
    window = queue.claim(force=True)
    assert window is not None and (window.lo, window.hi) == (0, 2)
    assert queue.complete(window)
    assert queue.pending_count(SCOPE) == 0
    assert queue.add(SCOPE, says("a", "b")) == 0  # a resend after completion is still ignored
    rows = queue.read("SELECT content FROM messages")
    assert [r[0] for r in rows] == [None, None]


def test_a_window_is_capped_and_the_rest_follows(queue: QueueStore) -> None:
    queue.add(SCOPE, says(*(f"m{n}" for n in range(25))))
    first = queue.claim(force=True)
    assert first is not None and len(first.messages) == queue.timing.window_cap == 10
    queue.complete(first)
    second = queue.claim(force=True)
    assert second is not None and second.messages[0].content == "m10"


def test_two_workers_never_claim_the_same_window(tmp_path: Path, clock: Clock) -> None:
    a = QueueStore(tmp_path / "q.sqlite3", Timing(), clock=clock)
    b = QueueStore(tmp_path / "q.sqlite3", Timing(), clock=clock)
    a.add(SCOPE, says("x"))
    assert a.claim(force=True) is not None
    assert b.claim(force=True) is None
    clock.now += Timing().lease + 1  # a lease that ran out is taken over
    assert b.claim(force=True) is not None
    a.close()
    b.close()


def test_a_lease_of_a_dead_process_is_taken_over(queue: QueueStore) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    owner = f"{socket.gethostname()}:{dead.stdout.strip()}:deadbeef"
    assert owner_is_dead(owner, queue.owner)
    assert not owner_is_dead(queue.owner, "another worker")  # this process is alive
    assert not owner_is_dead(f"another-host:{dead.stdout.strip()}:x", queue.owner)  # cannot tell
    queue.add(SCOPE, says("x"))
    with queue.tx() as db:
        db.execute("UPDATE threads SET lease_owner=?, lease_until=?", (owner, queue.clock() + 600))
    assert queue.claim(force=True) is not None


def test_failures_back_off_then_park_in_the_dead_letters(queue: QueueStore, clock: Clock) -> None:
    backlog = Backlog(queue)
    queue.add(SCOPE, says("I write TypeScript", "I live in Berlin"))
    clock.now += 30
    window = queue.claim()
    assert window is not None and not queue.fail(window, "model timed out")
    clock.now += 9
    assert queue.claim() is None  # backing off 10 s after the first failure
    (entry,) = backlog.pending()
    assert (entry.attempts, entry.last_error, len(entry.messages)) == (1, "model timed out", 2)
    clock.now += 1
    window = queue.claim()
    assert window is not None and not queue.fail(window, "model timed out")
    clock.now += 19
    assert queue.claim() is None  # then 20 s
    clock.now += 1
    window = queue.claim()
    assert window is not None and queue.fail(window, "reply unreadable")
    assert backlog.pending() == []
    (letter,) = backlog.dead_letters()
    assert (letter.user_id, letter.thread_id, letter.reason, letter.attempts) == (
        "u1",
        "t1",
        "reply unreadable",
        3,
    )
    assert [m.content for m in letter.messages] == ["I write TypeScript", "I live in Berlin"]
    backlog.retry_dead_letter(letter.id)
    assert backlog.dead_letters() == []
    window = queue.claim()  # due at once
    assert window is not None and [m.content for m in window.messages] == [
        "I write TypeScript",
        "I live in Berlin",
    ]
    with pytest.raises(InvalidInputError, match="no dead letter"):
        backlog.retry_dead_letter(letter.id)


def test_a_journal_survives_a_restart_and_pins_its_window(tmp_path: Path, clock: Clock) -> None:
    first = QueueStore(tmp_path / "q.sqlite3", Timing(), clock=clock)
    first.add(SCOPE, says("a"))
    window = first.claim(force=True)
    assert window is not None
    first.journal(window, '{"plan": "..."}', {"model": "m", "calls": 1, "input_tokens": 900})
    first.close()  # the process dies before writing: its lease stays
    clock.now += Timing().lease + 1
    second = QueueStore(tmp_path / "q.sqlite3", Timing(), clock=clock)
    second.add(SCOPE, says("b"))
    again = second.claim()  # due at once: a journaled window never waits
    assert again is not None and again.journal == '{"plan": "..."}' and again.hi == 1
    assert Backlog(second).usage() == {
        "windows": 1,
        "calls": 1,
        "input_tokens": 900,
        "output_tokens": 0,
        "keying_calls": 0,
    }
    second.close()


def test_purge_erases_a_users_queue(queue: QueueStore) -> None:
    other = ThreadScope(user_id="u2", thread_id="t1")
    queue.add(SCOPE, says("a", "b"))
    queue.add(other, says("c"))
    assert Backlog(queue).purge("u1") == 2
    assert [e.user_id for e in Backlog(queue).pending()] == ["u2"]


def test_seconds_until_due(queue: QueueStore, clock: Clock) -> None:
    backlog = Backlog(queue)
    assert backlog.seconds_until_due() is None
    queue.add(SCOPE, says("a"))
    clock.now += 10
    assert backlog.seconds_until_due() == pytest.approx(20)


def test_scope_keys_keep_users_apart() -> None:
    a, b = ThreadScope("u1", "t"), ThreadScope("u2", "t")
    assert a.key != b.key and json.loads(a.key) == ["u1", None, "t"]


def test_a_window_whose_worker_keeps_dying_ends_in_the_dead_letters(
    queue: QueueStore, clock: Clock
) -> None:
    queue.add(SCOPE, says("a message that crashes the process"))
    for _ in range(queue.timing.max_attempts):  # each worker dies holding the lease
        assert queue.claim(force=True) is not None
        clock.now += queue.timing.lease + 1
    assert queue.claim(force=True) is None
    (letter,) = Backlog(queue).dead_letters()
    assert "stopped while extracting" in letter.reason and letter.attempts == 4


def test_giving_a_window_back_does_not_count_as_an_attempt(queue: QueueStore) -> None:
    queue.add(SCOPE, says("a"))
    for _ in range(5):
        window = queue.claim(force=True)
        assert window is not None and window.attempts == 1
        queue.release(window)


def test_resending_old_messages_does_not_delay_the_window(queue: QueueStore, clock: Clock) -> None:
    queue.add(SCOPE, says("a"))
    clock.now += 20
    queue.add(SCOPE, says("a"))  # the whole history again, nothing new
    clock.now += 10
    assert queue.claim() is not None
