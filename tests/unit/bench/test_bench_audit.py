"""The audit benchmark measures what it says: a full file, and both ways of erasing a
user leave no byte of their text under the home."""

from __future__ import annotations

from bench.audit import PER_USER, records_costs


def test_records_costs_on_a_small_file() -> None:
    result = records_costs(users=3)
    assert result["rows"] == 3 * PER_USER and result["file_mb"] > 0
    assert result["purge_checkpoint_files_left"] == 0
    assert result["purge_vacuum_files_left"] == 0
    p50, p95 = result["write_ms"]
    assert 0 < p50 <= p95
