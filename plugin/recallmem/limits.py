"""Every limit and default on caller input, and the rules that check it.

One definition, used by the library (:mod:`recallmem.facts.validation`), the command line
(which goes through the library), the HTTP API (its schemas and path parameters) and
the inspector (its form fields are filled from here when the page is served), so all
of them accept and refuse exactly the same inputs.

>>> check_user_id("ada")
'ada'
>>> check_user_id("ada/admin")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
recallmem.errors.MissingScopeError: user_id must be 1-200 characters without spaces, '/'...
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from recallmem.errors import InvalidInputError, MissingScopeError
from recallmem.text.quoting import (
    BRAILLE_BLANK,
    character_class,
    hidden_characters,
    stored_text,
    visible_text,
)

# Characters no reader sees (recallmem.text.quoting: format characters, joiners, variation
# selectors, fillers) and the braille blank: two user ids differing only by one would
# look the same in the inspector, a table or a log, and a forget-me could be aimed at
# the wrong user.
_HIDDEN_CLASS = character_class(hidden_characters() | {BRAILLE_BLANK})
MAX_ID_CHARS = 200  # user, agent and thread ids, fact ids, reasons, text filters
# No control character (C0, DEL, C1: "ada\x00" and "ada\x1b" print as "ada") and no
# hidden one, in any id: an agent or thread id also reaches tables, logs and prompts.
_UNSEEN = rf"\x00-\x1f\x7f-\x9f{_HIDDEN_CLASS}"
# A user id is a path segment of the API (/v1/users/{user}/...), so no '/', no space,
# and not "." or "..", which clients resolve as the path's dot segments. Spelled without
# a look-ahead, which pydantic's regex engine lacks: no dot first, one dot then another
# character, or two dots then at least one more.
_ID_CHAR = rf"[^\s/{_UNSEEN}]"
_NOT_DOT = rf"[^\s/.{_UNSEEN}]"
USER_ID_PATTERN = (
    rf"^(?:{_NOT_DOT}{_ID_CHAR}{{0,{MAX_ID_CHARS - 1}}}|\.{_NOT_DOT}{_ID_CHAR}{{0,"
    rf"{MAX_ID_CHARS - 2}}}|\.\.{_ID_CHAR}{{1,{MAX_ID_CHARS - 2}}})$"
)
SCOPE_ID_PATTERN = rf"^[^{_UNSEEN}]{{1,{MAX_ID_CHARS}}}$"  # agent and thread ids
# USER_ID_PATTERN in words, for the errors of user ids and of fact ids, which share it.
ID_FORM = (
    f"1-{MAX_ID_CHARS} characters without spaces, '/', control or invisible format "
    "characters, and not '.' or '..'"
)
# "Has something besides whitespace", in the sense of Python's str.strip.
NOT_BLANK = r"[^\s\x1c-\x1f]"

SHORT_ID_CHARS = 12  # of a fact id, in tables and tool answers: any unique prefix finds it
MAX_CONTENT_CHARS = 2000  # one fact is one self-contained sentence
MAX_QUERY_CHARS = 1000  # a recall query; longer text (a whole message) is cut to this
MAX_SUMMARY_CHARS = 4000  # one profile section
DEFAULT_K = 6  # facts a recall returns when k is not given (MemoryConfig.recall_k)
MAX_K = 100
DEFAULT_PAGE = 50  # facts per listed page

# What the memory middleware adds to a turn (MemoryMiddleware; measured in
# docs/benchmarks.md, agent-loop, and docs/decisions/0050).
DEFAULT_TURN_K = 3  # facts in a later turn's note, at most
DEFAULT_TURN_NOTE_TOKENS = 200  # the budget of that note
DEFAULT_CORE_FACTS = 40  # core facts in the thread-start block, at most
DEFAULT_CORE_SHARE = 0.5  # of the block's budget, at most
DEFAULT_FRESH_WAIT_SECONDS = 2.0  # a new thread's wait for the user's waiting turns
DEFAULT_RECENT_TOKENS = 300  # the budget of those turns' words, carried
MAX_PAGE = 1000
MAX_OFFSET = 1_000_000
MAX_IMPORT_ROWS = 200_000
DEDUP_SIMILARITY = 0.7  # see docs/benchmarks.md, "Near-duplicate rule"
# A fact's search keywords (``Fact.keywords``): a few short words, often in the user's other
# language, indexed lexically beside the content; a sentence would be content, not a keyword.
MAX_KEYWORDS = 6
MAX_KEYWORD_CHARS = 24  # "automatic plant watering"; in Chinese, a word or two
# A fact's search keys (``Fact.questions``): the questions it answers, in the user's
# language and the other, and perhaps a paraphrase in the other language; embedded with
# the fact (docs/decisions/0040-search-keys.md). A paraphrase of a one-sentence fact fits.
MAX_QUESTIONS = 4
MAX_QUESTION_CHARS = 200
# Facts whose search keys one model call writes (prompts/keys.yaml): a call's answer is
# about 60 output tokens a fact, so 20 facts stay far below any model's output limit.
KEYING_FACTS_PER_CALL = 20

# New facts read from one extraction reply; the rest are set aside, and the report says so.
# A window holds at most 40 messages (twice the default flush count of 20), half of them
# the user's, and a real reply holds a handful: the recorded replies of the labelled set
# (prompts/evaluation/extraction.yaml) hold 1 to 3 facts for 1 to 4 messages. 40 is two
# new facts for every user message of a full window; a reply with more is malformed or
# injected, and would fill a user's memory (and, at the scope cap, empty it) in one call.
MAX_FACTS_PER_WINDOW = 40

# The instants recallmem takes as a fact's valid_until or a maintenance run's now (UTC):
# any real deadline (a past one stores the fact already expired), and far enough from
# the calendar's ends (years 1 and 9999) that a zone offset, a day's end or the due-soon
# window can never step past them (Python's datetime raises OverflowError there).
EARLIEST_TIME = datetime(1900, 1, 1, tzinfo=UTC)
TIMES_END = datetime(9999, 1, 1, tzinfo=UTC)  # the first instant refused
FOREVER_HINT = "; a fact that holds for good takes no valid_until"
# How far from the real clock a maintenance run's now may be. A clock a little off is
# harmless; a now far ahead fades every unpinned fact and a second call purges them (the
# retention period counts from the fade), and one far behind stamps what consolidation
# merges as long idle, so it fades. A simulation opts out (Memory.maintain's
# simulated_clock; never over HTTP) and is held to the range above only.
MAINTAIN_SKEW = timedelta(days=1)

# Retrieval records kept per user (MemoryConfig.retrievals_per_user; the oldest go first):
# a turn writes one to three (its note, a cue's or a tool's recall; the block once per
# thread), so 200 cover the last hundred or so turns. A record names facts by id: with a
# query of a sentence and ten facts it is about 2 KB, so 200 are about 400 KB per user.
RETRIEVALS_PER_USER = 200

# What the model may ask through the recall / remember tools: fewer facts and shorter
# texts than a program may, so one tool call cannot flood the context.
MAX_TOOL_K = 20
MAX_TOOL_CONTENT_CHARS = 500

_USER_ID = re.compile(USER_ID_PATTERN)
_SCOPE_ID = re.compile(SCOPE_ID_PATTERN)


def check_user_id(user_id: object) -> str:
    """The user id, or an error naming the argument to pass and its form."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise MissingScopeError(
            "user_id is required and must be a non-empty string: every memory belongs to "
            "exactly one user (pass user_id=...)"
        )
    if not _USER_ID.fullmatch(user_id):
        raise MissingScopeError(
            f"user_id must be {ID_FORM} (it names the user in API paths), got {user_id[:40]!r}"
        )
    return user_id


def check_scope_id(value: object, name: str) -> str | None:
    """An optional agent or thread id: None, or 1 to MAX_ID_CHARS characters, none of
    them a control or hidden character."""
    if value is None:
        return None
    if not isinstance(value, str) or not _SCOPE_ID.fullmatch(value):
        raise InvalidInputError(
            f"{name} must be a string of 1 to {MAX_ID_CHARS} characters without control "
            f"or invisible format characters, or None, got {str(value)[:40]!r}"
        )
    return value


def _bounded(name: str, value: object, low: int, high: int, hint: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInputError(
            f"{name} must be an integer from {low} to {high}, got {value!r}{hint}"
        )
    return value


def check_time(value: datetime, what: str, hint: str = "") -> datetime:
    """A timezone-aware ``value`` as UTC, if from EARLIEST_TIME up to TIMES_END.

    >>> check_time(datetime(9999, 12, 31, 23, tzinfo=UTC), "valid_until")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recallmem.errors.InvalidInputError: valid_until 9999-12-31T23:00:00+00:00 is out of range...
    """
    try:
        utc: datetime | None = value.astimezone(UTC)
    except OverflowError:  # past year 1 or 9999 once in UTC
        utc = None
    if utc is None or not EARLIEST_TIME <= utc < TIMES_END:
        raise time_range_error(f"{what} {value.isoformat()}", hint)
    return utc


def time_range_error(what: str, hint: str = "") -> InvalidInputError:
    """The error for a time outside the range recallmem keeps (``what`` names it)."""
    return InvalidInputError(
        f"{what} is out of range: recallmem takes times from {EARLIEST_TIME:%Y-%m-%d} up to "
        f"(not including) {TIMES_END:%Y-%m-%d}, UTC{hint}"
    )


def check_maintain_now(now: object, *, clock: datetime, simulated: bool = False) -> datetime:
    """The instant a maintenance run is as of, in UTC: timezone-aware, in the range of
    :func:`check_time` and, unless ``simulated``, within MAINTAIN_SKEW of ``clock``."""
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise InvalidInputError(
            f"now must be a timezone-aware datetime, got {now!r}; use datetime.now(UTC) "
            "or leave it out"
        )
    at = check_time(now, "now")
    if not simulated and abs(at - clock) > MAINTAIN_SKEW:
        hours = abs(at - clock).total_seconds() / 3600
        off = f"{hours:.0f} hours" if hours < 48 else f"{hours / 24:.0f} days"
        raise InvalidInputError(
            f"now {now.isoformat()} is {off} {'ahead of' if at > clock else 'behind'} the "
            f"current time; maintenance runs as of the real time, give or take "
            f"{MAINTAIN_SKEW.days} day (far ahead, it would fade and then purge every "
            "unpinned fact). A test or simulation that moves the clock passes "
            "simulated_clock=True to the library's Memory.maintain"
        )
    return at


def check_k(k: object, *, most: int = MAX_K) -> int:
    """How many facts to return: an integer from 1 to ``most``."""
    return _bounded("k", k, 1, most)


def check_query(query: object) -> str:
    """A recall query with visible text, within the limit, stripped."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query is empty; describe what to recall")
    if not visible_text(query).strip():  # as empty as content of invisible characters
        raise InvalidInputError("query has only invisible characters; describe what to recall")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInputError(
            f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}. "
            "Ask about one thing, in a sentence"
        )
    return query.strip()


def check_keywords(value: object) -> tuple[str, ...]:
    """A fact's keywords: a list of at most MAX_KEYWORDS short strings, their whitespace
    collapsed, repeats (ignoring case) dropped; a blank or over-long keyword is refused.

    >>> check_keywords([" 咖啡机 ", "漏水", "咖啡机"])
    ('咖啡机', '漏水')
    """
    return _short_texts(value, "keyword", MAX_KEYWORDS, MAX_KEYWORD_CHARS,
                        '["咖啡机", "漏水"]', "keep the words a question would use")  # fmt: skip


def check_questions(value: object) -> tuple[str, ...]:
    """A fact's search keys (``Fact.questions``): at most MAX_QUESTIONS lines of at most
    MAX_QUESTION_CHARS, whitespace collapsed, repeats (ignoring case) dropped.

    >>> check_questions(["What am I allergic to? ", "我对什么过敏？"])
    ('What am I allergic to?', '我对什么过敏？')
    """
    return _short_texts(value, "question", MAX_QUESTIONS, MAX_QUESTION_CHARS,
                        '["What am I allergic to?", "我对什么过敏？"]',
                        "keep a question in each language and one paraphrase")  # fmt: skip


def _short_texts(
    value: object, noun: str, most: int, chars: int, example: str, advice: str
) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise InvalidInputError(
            f"{noun}s must be a list of short strings, got {type(value).__name__}; e.g. {example}"
        )
    kept: dict[str, str] = {}
    for text in value:
        # One line, shown and matched as one, and stored without escapes or controls.
        line = " ".join(stored_text(text).split()) if isinstance(text, str) else ""
        if not line:
            raise InvalidInputError(f"each {noun} must be a non-blank string, got {text!r}")
        if len(line) > chars:
            raise InvalidInputError(
                f"{noun} {line[:60]!r} is {len(line)} characters; a {noun} is one short "
                f"line of at most {chars} characters"
            )
        kept.setdefault(line.casefold(), line)
    if len(kept) > most:
        raise InvalidInputError(
            f"{len(kept)} {noun}s given; a fact takes at most {most} ({advice})"
        )
    return tuple(kept.values())


def check_page(limit: object, offset: object) -> tuple[int, int]:
    """A page of a listing: ``limit`` from 1 to MAX_PAGE, ``offset`` from 0 to MAX_OFFSET."""
    hint = "; page through longer listings with offset"
    return _bounded("limit", limit, 1, MAX_PAGE, hint), _bounded("offset", offset, 0, MAX_OFFSET)


def inspector_limits() -> dict[str, str]:
    """The values the inspector's form fields carry (``{{NAME}}`` in its page)."""
    return {
        "MAX_ID_CHARS": str(MAX_ID_CHARS),
        "USER_ID_PATTERN": USER_ID_PATTERN.strip("^$"),
        "MAX_CONTENT_CHARS": str(MAX_CONTENT_CHARS),
        "MAX_SUMMARY_CHARS": str(MAX_SUMMARY_CHARS),
        "MAX_QUERY_CHARS": str(MAX_QUERY_CHARS),
        "DEFAULT_K": str(DEFAULT_K),
        "MAX_K": str(MAX_K),
    }
