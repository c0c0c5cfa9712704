"""The year benchmark's simulation, shortened: the real queue, hygiene, Chroma and the
daily maintenance step on a simulated clock keep every promise it measures."""

from __future__ import annotations

from pathlib import Path

from bench.year import simulate


def test_three_weeks_of_daily_use_keep_every_promise(tmp_path: Path) -> None:
    run = simulate(users=1, days=22, home=tmp_path / "home")
    assert run.late == [] and run.on_time == 4  # three todos and a trip, each out on its day
    assert run.lost == [] and len(run.kept_ids) >= 2  # the pinned fact, the re-confirmed one
    assert [s["day"] for s in run.sizes] == list(range(22))
    final = run.sizes[-1]
    assert final["expired"] == 3 and final["stored"] == final["active"] + final["expired"]
    assert len(run.costs) + len(run.purging_costs) == 22  # one run per talking user per day
