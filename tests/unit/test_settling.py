"""A read racing another process's write is retried until it settles, and only then."""

from __future__ import annotations

import pytest
from recallmem.store.chroma.workarounds import settling
from recallmem.store.chroma.workarounds.settling import SETTLE_TRIES, settled


class Reads:
    """A read that fails with ``error`` its first ``failures`` times."""

    def __init__(self, failures: int, error: str) -> None:
        self.failures, self.error, self.calls = failures, error, 0

    def __call__(self) -> list[str]:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(self.error)
        return ["f1"]


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(settling, "SETTLE_PAUSE_SECONDS", 0.0)


def test_a_read_that_met_a_write_in_flight_is_tried_again() -> None:
    read = Reads(2, "Error executing plan: Internal error: Error finding id")
    assert settled(read) == ["f1"] and read.calls == 3


def test_a_state_that_does_not_settle_still_raises() -> None:
    read = Reads(99, "Error executing plan: Internal error: Error finding id")
    with pytest.raises(RuntimeError, match="Error finding id"):
        settled(read)
    assert read.calls == SETTLE_TRIES


def test_any_other_failure_raises_at_once() -> None:
    read = Reads(1, "Error loading hnsw index")
    with pytest.raises(RuntimeError, match="loading hnsw"):
        settled(read)
    assert read.calls == 1
