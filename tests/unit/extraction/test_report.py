"""Reports say what happened and why, and merge across windows."""

from __future__ import annotations

from recallmem.extraction.parser import TokenUsage
from recallmem.extraction.report import Change, ExtractionReport
from recallmem.extraction.write_plan import Dropped
from recallmem.types import Fact


def test_merge_and_summary() -> None:
    fact = Fact(content="Lives in Berlin", category="identity", user_id="u")
    first = ExtractionReport(user_id="u", thread_id="t", messages=2, added=(Change(fact=fact, reason="new"),),
                             usage=TokenUsage(calls=1, input_tokens=900, output_tokens=50))  # fmt: skip
    second = ExtractionReport(user_id="u", thread_id="t", messages=1,
                              dropped=(Dropped(content="x", reason="secret"),),
                              usage=TokenUsage(calls=1, input_tokens=800, output_tokens=10))  # fmt: skip
    merged = first.merge(second)
    assert merged.usage == TokenUsage(calls=2, input_tokens=1700, output_tokens=60)
    assert merged.summary() == "1 added, 1 dropped (3 messages, 2 model calls, 1700 prompt tokens)"
