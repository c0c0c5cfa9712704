from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "bench.bilingual_data",
    "bench.bilingual_metrics",
    "bench.data",
    "bench.metrics",
    "bench.report",
    "bench.signals_prototypes",
    "bench.synthetic",
    "bench.systems.bm25",
    "bench.systems.langgraph_peer",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0
    assert result.failed == 0
