"""The queue's vocabulary: a kept message, a conversation thread, a claimed window, timing.

Shared by the filter (which produces utterances), the queue (which stores them per
thread and hands out windows) and the stages after it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field

from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.retrieval.when import user_zone

Role = Literal["user", "assistant"]
# The metadata key of a message's time: ``additional_kwargs["said_at"]`` of a LangChain
# message, or a ``"said_at"`` key beside "role" and "content" in a dict.
SAID_AT = "said_at"


class Utterance(BaseModel):
    """One kept message: who said it and what, with a stable id, and when it was said
    (epoch seconds) if the caller said so."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    role: Role
    content: str = Field(min_length=1)
    said_at: float | None = None


@dataclass(frozen=True)
class Timing:
    """When windows are due and how failures are retried."""

    debounce: float = 30.0
    max_wait: float = 120.0
    flush_count: int = 20
    max_attempts: int = 5
    retry_base: float = 5.0
    retry_max: float = 600.0
    lease: float = 600.0

    @classmethod
    def from_config(cls, config: MemoryConfig) -> Timing:
        """The timing a configuration asks for."""
        return cls(
            debounce=config.debounce_seconds,
            max_wait=config.max_wait_seconds,
            flush_count=config.flush_message_count,
            max_attempts=config.max_attempts,
        )

    @property
    def window_cap(self) -> int:
        """Most messages sent in one model call."""
        return max(2 * self.flush_count, 10)

    def due_at(self, row: Any, *, urgent: bool, now: float) -> float:
        """When a thread's window is due (a ``threads`` row; the SQL in ``claim`` agrees)."""
        pending = row["next_seq"] - 1 - row["watermark"]
        if row["journal"] is not None or urgent or pending >= self.flush_count:
            due = now
        else:
            due = min(
                row["last_observed_at"] + self.debounce, row["first_pending_at"] + self.max_wait
            )
        return float(max(due, row["next_attempt_at"] or 0.0))

    def backoff(self, attempts: int) -> float:
        """Seconds to wait before attempt ``attempts + 1``."""
        return float(min(self.retry_max, self.retry_base * 2 ** max(attempts - 1, 0)))


def zone_name(zone: str | tzinfo | None) -> str | None:
    """The name a user's timezone is stored under in the queue (None: not given, UTC).

    An IANA name or a ``ZoneInfo`` is kept by name, a fixed offset as ``UTC+08:00``.

    >>> zone_name("Asia/Shanghai"), zone_name(timezone(timedelta(hours=-5))), zone_name(None)
    ('Asia/Shanghai', 'UTC-05:00', None)
    """
    if zone is None:
        return None
    resolved = user_zone(zone)
    if resolved is UTC:
        return "UTC"
    if isinstance(resolved, ZoneInfo) and resolved.key:
        return resolved.key
    if isinstance(resolved, timezone):
        offset = resolved.utcoffset(None)
        minutes = int(offset.total_seconds()) // 60
        sign = "-" if minutes < 0 else "+"
        return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    name = getattr(resolved, "key", None) or getattr(resolved, "zone", None)  # pytz's zones
    if isinstance(name, str) and name:
        return zone_name(name)
    raise InvalidInputError(
        f"timezone {zone!r} cannot be stored with the queued conversation: pass an IANA "
        "name such as 'Asia/Shanghai', a ZoneInfo, or a fixed datetime.timezone"
    )


def stored_zone(name: str | None) -> tzinfo:
    """The timezone :func:`zone_name` stored; UTC for a window queued without one.

    >>> stored_zone("UTC+08:00").utcoffset(None), stored_zone(None)
    (datetime.timedelta(seconds=28800), datetime.timezone.utc)
    """
    if not name or name == "UTC":
        return UTC
    if name.startswith(("UTC+", "UTC-")):
        hours, minutes = name[4:].split(":")
        offset = timedelta(hours=int(hours), minutes=int(minutes))
        return timezone(offset if name[3] == "+" else -offset)
    return user_zone(name)


def said_time(row: Mapping[str, Any]) -> float:
    """When a queued message (a ``messages`` row) was said: as it said, else when observed."""
    said = row["said_at"]
    return float(said if said is not None else row["observed_at"])


def first_day(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The leading queued messages said on the first one's local day (each in its own
    zone), so a window's "today" is the day every message in it was said."""
    if not rows:
        return []
    day = datetime.fromtimestamp(said_time(rows[0]), stored_zone(rows[0]["timezone"])).date()
    for index, row in enumerate(rows[1:], 1):
        if datetime.fromtimestamp(said_time(row), stored_zone(row["timezone"])).date() != day:
            return list(rows[:index])
    return list(rows)


@dataclass(frozen=True)
class ThreadScope:
    """One conversation thread of one user (and agent), and the user's timezone.

    The timezone (a :func:`zone_name`) is not part of the thread's key: it travels with
    each queued message, and a claimed window's scope carries its last message's zone.
    """

    user_id: str
    thread_id: str
    agent_id: str | None = None
    timezone: str | None = None

    @property
    def key(self) -> str:
        """The thread's key in the queue."""
        return json.dumps([self.user_id, self.agent_id, self.thread_id])

    @property
    def zone(self) -> tzinfo:
        """The user's timezone (UTC when none was given)."""
        return stored_zone(self.timezone)


@dataclass(frozen=True)
class Window:
    """A claimed window: messages ``(lo, hi]`` of a thread, and its journal if any.

    ``said_at`` is when its last message was said (epoch seconds; when it was observed,
    if the caller did not say): the window's "today" is that instant's date in the
    user's timezone, however late it is extracted. A window never spans two local days.
    ``began`` is when it was claimed, on the forget ledger's clock
    (``recallmem.persistence.forget_ledger``): its work began then.
    """

    scope: ThreadScope
    lo: int
    hi: int
    messages: tuple[Utterance, ...]
    attempts: int
    journal: str | None
    owner: str
    said_at: float
    began: float

    @property
    def said(self) -> datetime:
        """When the window's last message was said, in the user's timezone."""
        return datetime.fromtimestamp(self.said_at, self.scope.zone)
