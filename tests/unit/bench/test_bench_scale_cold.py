from __future__ import annotations

import json
from pathlib import Path

from bench.scale_cold import BUILT, build, cached_build, render


def _stored(home: str) -> tuple[int, list[int]]:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.testing import HashingEmbeddings

    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(dimension=512)) as memory:
        return memory.repository.store.count(), [
            len(memory.list(user_id=f"user-{u}", limit=1000)) for u in range(3)
        ]


def test_a_cached_build_resumes_where_it_stopped_and_is_then_reused(tmp_path: Path) -> None:
    home = tmp_path / "scale-cold-300-100-per-user-512d"
    home.mkdir()
    build(str(home), 100)  # as if a build of 300 had been interrupted after one user
    marker = json.loads((home / BUILT).read_text())
    assert marker["done"] == 100
    (home / BUILT).write_text(json.dumps({**marker, "size": 300}))

    built_home, rate = cached_build(tmp_path, 300)
    assert built_home == str(home) and rate["build_facts_per_s"] > 0
    assert _stored(built_home) == (300, [100, 100, 100])  # nothing written twice
    assert json.loads((home / BUILT).read_text())["done"] == 300

    again_home, again = cached_build(tmp_path, 300)  # nothing left to build: reused
    assert again_home == built_home
    assert again["build_seconds"] == json.loads((home / BUILT).read_text())["seconds"]
    assert _stored(again_home)[0] == 300


def test_render_marks_the_rows_and_reports_growth_and_load() -> None:
    def run(size: int, p50: float) -> dict[str, object]:
        return {"size": size, "users": size // 100, "first_recall_ms": {"p50": p50, "p95": 2 * p50},
                "random_user_ms": {"p50": 3.0, "p95": 9.0}, "random_recalls": size // 100,
                "random_users_asked": size // 150, "rss_mb": 400.0, "peak_rss_mb": 420.0,
                "cached_facts": 1500, "build_facts_per_s": 500.0, "load": 1.2}  # fmt: skip

    text = render({"runs": [run(10_000, 20.0), run(100_000, 24.0), run(1_000_000, 26.4)]})
    assert "| 1,000,000 | 10,000 | 26.4 | 52.8 | 10,000 (6,666) |" in text
    assert "hashing, 512 d (no model)" in text and "| 1.2 |" in text
    assert "from 10k to 100k: 1.20x; from 100k to 1M: 1.10x" in text
