"""What the "forget me" tests share: a grep of the home's files, and gates for races,
which hold the slow part of a path (a model, an embedder) until the test has done what
must happen meanwhile (a purge), then let the work finish."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from recallmem import Memory
from recallmem.testing import HashingEmbeddings

USER = "zed.quarnix@example.com"  # a user id that no file holds by chance
SAID = "I own a pet named Zorblatt and I live on Quarnix street"
FACT = "Owns a pet named Zorblatt"
WAIT = 60.0


class Gate:
    """Holds whoever passes it until opened; says when someone arrived."""

    def __init__(self) -> None:
        self.arrived, self.opened = threading.Event(), threading.Event()

    def pass_(self) -> None:
        self.arrived.set()
        assert self.opened.wait(WAIT), "the gate was never opened"

    def reached(self) -> None:
        assert self.arrived.wait(WAIT), "the work never reached the gate"


class GatedEmbeddings(HashingEmbeddings):
    """Embeds documents only once the gate opens (queries pass at once)."""

    def __init__(self, gate: Gate) -> None:
        super().__init__()
        self.gate = gate

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.gate.pass_()
        return super().embed_documents(texts)


def extraction(_: Sequence[BaseMessage]) -> str:
    return json.dumps({"facts": [{"content": FACT, "category": "identity", "confidence": 0.95,
                                  "evidence": "I own a pet named Zorblatt"}]})  # fmt: skip


def gated(gate: Gate, reply: Callable[[Sequence[BaseMessage]], str]) -> Any:
    def answer(messages: Sequence[BaseMessage]) -> str:
        gate.pass_()
        return reply(messages)

    return answer


class Running:
    """A call on another thread; :meth:`result` returns its value or raises its error."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.value = call()
        except BaseException as exc:  # reported by result()
            self.error = exc

    def result(self) -> Any:
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), "the call never finished"
        if self.error is not None:
            raise self.error
        return self.value


def files_holding(home: Path, texts: list[str]) -> dict[str, list[str]]:
    """Which raw files under ``home`` contain which texts (as UTF-8 bytes)."""
    found: dict[str, list[str]] = {}
    for root, _, names in os.walk(home):
        for name in names:
            data = (Path(root) / name).read_bytes()
            hits = [t for t in texts if t.encode("utf-8") in data]
            if hits:
                found[str(Path(root, name).relative_to(home))] = hits
    return found


def nothing_left(memory: Memory, *texts: str, user: str = USER) -> None:
    """The user has no fact, no queued window, no dead letter, no profile, and no file
    under the home holds the words or the user id."""
    assert memory.list(user_id=user, status=None) == []
    assert memory.queue.pending(user) == [] and memory.queue.dead_letters(user) == []
    assert memory.get_profile(user_id=user).sections() == {}
    held = files_holding(memory.config.home, [*texts, "Zorblatt", user])
    assert held == {}, held
