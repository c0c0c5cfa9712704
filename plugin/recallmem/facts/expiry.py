"""Time-bound facts: when a fact stops being true, and when a todo is due soon.

A fact with ``valid_until`` at or before ``now`` is out of recall and injection from
that instant; the check is made at query time, so no maintenance run is needed for
it. Maintenance later sets its status to ``expired``, for audit.

>>> from datetime import UTC, datetime, timedelta
>>> from recallmem.types import Category, Fact
>>> now = datetime(2026, 6, 1, tzinfo=UTC)
>>> trip = Fact(content="Trip to Tokyo", category="context", user_id="u",
...             valid_until=now + timedelta(days=1))
>>> is_expired(trip, now), is_expired(trip, now + timedelta(days=2))
(False, True)
>>> due_soon(trip.model_copy(update={"category": Category.TODO}), now)
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta, tzinfo

import numpy as np

from recallmem.limits import FOREVER_HINT, check_time, time_range_error
from recallmem.types import Category, Fact, Status

# A todo due within this span is shown in the memory block with its due date, so the
# agent can bring it up before it is too late (a day's notice plus a weekend).
DUE_SOON = timedelta(days=3)
NEVER = np.inf  # the valid_until of a fact without one, in the index's arrays


_LOCAL = re.compile(r"(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::\d{2})?)?")


def _parse_local(text: str) -> tuple[date, time | None]:
    match = _LOCAL.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not YYYY-MM-DD or YYYY-MM-DDTHH:MM")
    day = date.fromisoformat(match[1])
    return day, time.fromisoformat(match[2]) if match[2] else None


def normalise_local(text: str) -> str:
    """A local date (``YYYY-MM-DD``) or date and time (``YYYY-MM-DDTHH:MM``), checked."""
    day, clock = _parse_local(text)
    return day.isoformat() if clock is None else f"{day.isoformat()}T{clock.strftime('%H:%M')}"


def resolve_local(text: str, zone: tzinfo) -> datetime:
    """The UTC instant a local date or time in ``zone`` ends: a date holds to its last second.

    >>> from datetime import UTC
    >>> from zoneinfo import ZoneInfo
    >>> resolve_local("2026-12-08", ZoneInfo("Asia/Shanghai")).isoformat()
    '2026-12-08T16:00:00+00:00'
    >>> resolve_local("2026-12-08T09:30", UTC).isoformat()
    '2026-12-08T09:30:00+00:00'

    One outside the range :func:`recallmem.limits.check_time` allows is an
    InvalidInputError (a day after 9999-12-31 does not exist).
    """
    day, clock = _parse_local(text)
    try:
        if clock is None:  # the whole day: until the next one begins
            end = datetime.combine(day + timedelta(days=1), time(), zone)
        else:
            end = datetime.combine(day, clock, zone)
    except OverflowError:
        raise time_range_error(f"valid_until {text!r}", FOREVER_HINT) from None
    return check_time(end, "valid_until", FOREVER_HINT)


def start_local(text: str, zone: tzinfo) -> datetime:
    """The UTC instant a local date or time in ``zone`` begins: a date from its first second.

    The day a change still ahead takes effect ("moving on the 28th"): the fact it
    replaces holds until then.

    >>> from zoneinfo import ZoneInfo
    >>> start_local("2026-12-28", ZoneInfo("Asia/Shanghai")).isoformat()
    '2026-12-27T16:00:00+00:00'
    """
    day, clock = _parse_local(text)
    try:
        begins = datetime.combine(day, clock or time(), zone)
    except OverflowError:
        raise time_range_error(f"from {text!r}", FOREVER_HINT) from None
    return check_time(begins, "from", FOREVER_HINT)


def is_expired(fact: Fact, now: datetime) -> bool:
    """Whether the fact's ``valid_until`` has passed."""
    return fact.valid_until is not None and fact.valid_until <= now


def valid_until_ts(fact: Fact) -> float:
    """``valid_until`` as epoch seconds, infinite for a fact without one."""
    return NEVER if fact.valid_until is None else fact.valid_until.timestamp()


def due_label(valid_until: datetime, zone: tzinfo) -> str:
    """The due date as the user reads it: the local day a date-only deadline ends on, or
    the local day and time.

    >>> from datetime import UTC
    >>> due_label(resolve_local("2026-12-11", UTC), UTC), due_label(datetime(2026, 12, 4, 17,
    ...     tzinfo=UTC), UTC)
    ('2026-12-11', '2026-12-04 17:00')
    """
    local = valid_until.astimezone(zone)
    if local.time() == time():  # a whole day ends when the next begins
        return (local.date() - timedelta(days=1)).isoformat()
    return local.strftime("%Y-%m-%d %H:%M")


def due_soon(fact: Fact, now: datetime, within: timedelta = DUE_SOON) -> bool:
    """Whether an active todo falls due in ``within`` from ``now`` (and has not yet)."""
    return (
        fact.category is Category.TODO
        and fact.status is Status.ACTIVE
        and fact.valid_until is not None
        and now < fact.valid_until <= now + within
    )


def next_change(shown: Iterable[Fact], todos: Iterable[Fact], now: datetime) -> datetime | None:
    """The first instant after ``now`` at which time alone changes what a memory block
    shows: a shown fact's ``valid_until``, or a todo entering the due-soon window."""
    ends = [f.valid_until for f in shown if f.valid_until is not None]
    ends += [t.valid_until - DUE_SOON for t in todos if t.valid_until is not None]
    later = [at for at in ends if at > now]
    return min(later, default=None)
