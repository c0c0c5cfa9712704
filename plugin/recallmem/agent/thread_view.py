"""What a thread already shows the model of the user's memory. Pure.

The middleware marks every message it adds with the ids of the facts in it (``ids`` in
its marker, :mod:`recallmem.agent.messages`); a ``recall`` tool answer carries its hits
as the message's artifact. Together they say which facts the model has in front of it,
so a later turn adds only what is new.

>>> from langchain_core.messages import HumanMessage
>>> from recallmem.agent.messages import hidden_message
>>> thread = [hidden_message("<memory>…</memory>", "block", meta={"ids": ["f1", "f2"]}),
...           HumanMessage("hi", id="m1"), HumanMessage("and the report?", id="m2")]
>>> view = thread_view(thread)
>>> sorted(view.shown), [m.text for m in view.user_messages]
(['f1', 'f2'], ['hi', 'and the report?'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

from recallmem.agent.messages import is_hidden, marker
from recallmem.types import ScoredFact

SHOWN = "ids"  # the marker key listing the facts a message of ours shows


def shown_by(message: BaseMessage) -> tuple[str, ...]:
    """The fact ids a message shows: our marker's list, or a recall answer's hits."""
    if isinstance(message, ToolMessage) and message.name == "recall":
        hits = message.artifact if isinstance(message.artifact, list) else []
        return tuple(h.fact.id for h in hits if isinstance(h, ScoredFact))
    ids = marker(message).get(SHOWN)
    return tuple(str(i) for i in ids) if isinstance(ids, list | tuple) else ()


@dataclass(frozen=True)
class ThreadView:
    """The facts a thread shows, and the user's own messages in it, oldest first."""

    shown: frozenset[str]
    user_messages: tuple[HumanMessage, ...]

    def earlier_user_text(self, current: BaseMessage) -> str | None:
        """The user's message before ``current``, if any (the turn's context)."""
        texts = [m for m in self.user_messages if m is not current]
        return texts[-1].text if texts else None


def thread_view(messages: Sequence[BaseMessage]) -> ThreadView:
    """What ``messages`` show of memory, and the user's messages among them."""
    shown = frozenset(i for m in messages for i in shown_by(m))
    users = tuple(m for m in messages if isinstance(m, HumanMessage) and not is_hidden(m))
    return ThreadView(shown=shown, user_messages=users)


__all__ = ["SHOWN", "ThreadView", "shown_by", "thread_view"]
