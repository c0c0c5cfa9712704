"""When each agent turn in flight began, so what it writes at its end meets the forgets
made while it ran.

A turn's words are said when it starts (``before_agent``) and written when it ends: the
turn is observed for extraction in ``after_agent``, and the ``remember`` tool runs in
between. A "forget me" while the model answers must refuse those writes
(``recallmem.persistence.forget_ledger``), so the middleware notes the time a turn began
on the ledger's clock and runs its writes as work that began then. LangGraph runs each
node in a context of its own, so the time is kept here, per user, thread and the user
message that opened the turn, not in a context variable; at most :data:`KEPT_TURNS`
(a turn whose end never came is dropped with the oldest).

>>> from langchain_core.messages import HumanMessage
>>> starts, scope = TurnStarts(), Scope(user_id="ada", thread_id="t1")
>>> said = [HumanMessage("I own a pet named rex", id="m1")]
>>> starts.note(scope, said)
>>> with starts.work(scope, said) as began:
...     began.at == starts.began(scope, said)
True
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from langchain_core.messages import BaseMessage

from recallmem.agent.messages import current_turn
from recallmem.agent.scope import Scope
from recallmem.persistence.forget_ledger import Began, work_began
from recallmem.persistence.forget_ledger import now as ledger_now

KEPT_TURNS = 4096
TurnKey = tuple[str, str, str]  # user, thread, the id of the message that opened the turn


class TurnStarts:
    """The start of each turn in flight, by :data:`TurnKey`."""

    def __init__(self, kept: int = KEPT_TURNS) -> None:
        self._began: OrderedDict[TurnKey, float] = OrderedDict()
        self._kept = kept
        self._guard = threading.Lock()

    def note(self, scope: Scope, messages: Sequence[BaseMessage]) -> None:
        """The turn these messages end with began now (a second note keeps the first)."""
        with self._guard:
            self._began.setdefault(turn_key(scope, messages), ledger_now())
            while len(self._began) > self._kept:
                self._began.popitem(last=False)

    def began(self, scope: Scope, messages: Sequence[BaseMessage]) -> float | None:
        """When the turn began, if it was noted."""
        with self._guard:
            return self._began.get(turn_key(scope, messages))

    def end(self, scope: Scope, messages: Sequence[BaseMessage]) -> None:
        """The turn is over."""
        with self._guard:
            self._began.pop(turn_key(scope, messages), None)

    @contextmanager
    def work(self, scope: Scope, messages: Sequence[BaseMessage]) -> Iterator[Began]:
        """Run the block as work of the turn (as work that begins now if it was not noted)."""
        with work_began(self.began(scope, messages), user_id=scope.user_id,
                        thread_id=scope.thread_id, agent_id=scope.agent_id) as began:  # fmt: skip
            yield began


def turn_key(scope: Scope, messages: Sequence[BaseMessage]) -> TurnKey:
    """The turn's user, thread and the message that opened it (its id, else its text)."""
    opened, _ = current_turn(messages)
    said = "" if opened is None else opened.id or opened.text
    return scope.user_id, scope.thread_id or "", said
