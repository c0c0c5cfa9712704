"""Helpers for extraction tests: a Memory on real Chroma whose model replays given replies."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


def reply(*facts: dict[str, Any], **rest: Any) -> str:
    """A plain JSON reply of the extraction model."""
    return json.dumps({"facts": list(facts), **rest}, ensure_ascii=False)


def fact(
    content: str, category: str, evidence: str, confidence: float = 0.95, **extra: Any
) -> dict[str, Any]:
    return {
        "content": content,
        "category": category,
        "confidence": confidence,
        "evidence": evidence,
        **extra,
    }


MemoryFactory = Callable[..., tuple[Memory, FakeChatModel]]


@pytest.fixture
def make_memory(home: Path) -> Iterator[MemoryFactory]:
    """Build Memory objects on one home (as successive process runs would), closing them after."""
    opened: list[Memory] = []

    def build(responses: list[Any] | None = None, **config: Any) -> tuple[Memory, FakeChatModel]:
        model = FakeChatModel(responses=list(responses or []))
        memory = Memory(
            MemoryConfig(home=home, **config), embeddings=HashingEmbeddings(), model=model
        )
        opened.append(memory)
        return memory, model

    yield build
    for memory in opened:
        memory.close(timeout=5)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def cite(messages: list[Any], content: str) -> str:
    """The id under which the extraction prompt showed the stored fact ``content``."""
    prompt = messages[-1].text
    for line in prompt.splitlines():
        if line.startswith("[F") and line.endswith(f") {content}"):
            return line[1 : line.index("]")]
    raise AssertionError(f"{content!r} was not shown to the model")
