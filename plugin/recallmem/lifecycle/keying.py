"""The keying step: facts stored without search keys get them from the configured model.

Facts written by hand, imported, stored before keys existed, or whose text an edit
changed have no keys (``Fact.keyed_by`` None). A run takes each user's active unkeyed
facts, newest first, at most ``keying_max_facts`` in all, and asks the model for their
keys ``limits.KEYING_FACTS_PER_CALL`` facts of one user at a time
(``prompts/keys.yaml``, :mod:`.keying_prompt`). What it writes is vetted like any
model's keys (:mod:`recallmem.extraction.search_keys`) and stored under the user's lock
only on a fact still unkeyed and still saying what was shown: a person's edit made
meanwhile is never overwritten. The fact is re-embedded with its keys
(:mod:`recallmem.facts.fact_vectors`). A fact the reply covers without a usable key is
marked keyed all the same, so it is not asked about again.

Resumable by construction: what is done is in the facts themselves, so a run cut short
(or over budget) leaves the rest for the next one, at the cost of at most the call in
flight. Every call's tokens are recorded with the extraction cost figures
(``memory.queue.usage()``: ``keying_calls``). Runs only from maintenance and
``Memory.rekey`` (``recallmem rekey``), never from a read or a request; without a model
nothing happens.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict

from recallmem.config import MemoryConfig
from recallmem.extraction.backlog import KEYING_USAGE
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.extraction.search_keys import vet_questions
from recallmem.lifecycle.keying_prompt import KeysReply, ask_keys, render_facts
from recallmem.limits import KEYING_FACTS_PER_CALL, MAX_CONTENT_CHARS
from recallmem.prompts import load_prompt
from recallmem.secrets.detector import load_secret_rules, redact
from recallmem.types import Fact, Status, TokenUsage

log = logging.getLogger("recallmem.lifecycle")
RecordUsage = Callable[[str, TokenUsage, str | None], None]  # user, one call's usage, model


class KeyingPort(Protocol):
    """What the keying step needs from storage (``FactRepository`` provides it)."""

    def facts(self, user_id: str) -> list[Fact]:
        """Every fact of the user, all statuses."""
        ...

    def revise(
        self,
        user_id: str,
        change: Callable[[list[Fact]], tuple[list[Fact], list[str]]],
        *,
        scrub: bool = True,
    ) -> tuple[list[Fact], list[str]]:
        """Apply ``change`` under the user's lock; returns records written, ids purged."""
        ...


class KeyingFailure(BaseModel):
    """A user whose keying stopped in a run (the model failed or answered nothing
    readable), and why; tried again at the next run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    error: str


class KeyingReport(BaseModel):
    """What one keying run did: facts keyed, facts the model had no usable key for,
    keys set aside (redacted) with the reason, users it failed for, and its cost;
    ``remaining``: unkeyed active facts of the users visited, left for later runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keyed: tuple[str, ...] = ()
    declined: tuple[str, ...] = ()
    set_aside: tuple[str, ...] = ()
    failed: tuple[KeyingFailure, ...] = ()
    usage: TokenUsage = TokenUsage()
    remaining: int = 0

    def merge(self, other: KeyingReport) -> KeyingReport:
        """This report and another of the same run, as one."""
        return KeyingReport(
            keyed=self.keyed + other.keyed, declined=self.declined + other.declined,
            set_aside=self.set_aside + other.set_aside, failed=self.failed + other.failed,
            usage=self.usage + other.usage, remaining=self.remaining + other.remaining,
        )  # fmt: skip


def unkeyed(facts: Sequence[Fact]) -> list[Fact]:
    """The active facts no one has keyed yet, newest first."""
    waiting = [f for f in facts if f.status is Status.ACTIVE and f.keyed_by is None]
    return sorted(waiting, key=lambda f: f.created_at, reverse=True)


def _calls(facts: Sequence[Fact]) -> Iterator[list[Fact]]:
    for start in range(0, len(facts), KEYING_FACTS_PER_CALL):
        yield list(facts[start : start + KEYING_FACTS_PER_CALL])


class Keyer:
    """Keys facts with one model, recording each call's cost with ``record``."""

    def __init__(
        self, facts: KeyingPort, model: BaseChatModel, config: MemoryConfig, record: RecordUsage
    ) -> None:
        self.facts, self.model, self.record = facts, model, record
        self.prompt = load_prompt("keys", config.prompt_dir)
        self.secrets = load_secret_rules(config.prompt_dir)
        self.scope = load_scope_rules(config.prompt_dir)

    def run(self, users: Sequence[str], budget: int) -> KeyingReport:
        """Key the users' unkeyed facts, at most ``budget`` of them in all."""
        report = KeyingReport()
        for user_id in users:
            todo = unkeyed(self.facts.facts(user_id))
            taken = todo[: max(budget, 0)]
            budget -= len(taken)
            report = report.merge(self._user(user_id, taken, len(todo) - len(taken)))
        return report

    def _user(self, user_id: str, todo: list[Fact], left: int) -> KeyingReport:
        report = KeyingReport(remaining=left)
        for number, batch in enumerate(_calls(todo)):
            try:
                shown = render_facts(batch)
                reply = ask_keys(self.model, self.prompt, shown)
            except Exception as exc:  # one user's model trouble must not stop the run
                error = f"{type(exc).__name__}: {exc}"[:MAX_CONTENT_CHARS]
                log.warning("recallmem: keying user %r failed, tried again at the next "
                            "run: %s", user_id, error)  # fmt: skip
                unasked = len(todo) - number * KEYING_FACTS_PER_CALL
                failed = KeyingReport(failed=(KeyingFailure(user_id=user_id, error=error),),
                                      remaining=unasked)  # fmt: skip
                return report.merge(failed)
            self.record(user_id, reply.usage, reply.model)
            report = report.merge(self._store(user_id, shown.refs, reply))
        return report

    def _store(self, user_id: str, refs: dict[str, Fact], reply: KeysReply) -> KeyingReport:
        label = " ".join(filter(None, [self.prompt.label, reply.model]))
        keys: dict[str, tuple[str, ...]] = {}
        aside: list[str] = []
        for ref, value in reply.keys.items():
            shown = refs[ref]
            vetted = vet_questions(value, shown.content, self.secrets, self.scope)
            keys[shown.id] = vetted.kept
            aside += [redact(f"{shown.id}: {r.key} ({r.reason})", self.secrets)
                      for r in vetted.rejected]  # fmt: skip
        shown_text = {f.id: f.content for f in refs.values()}

        def change(facts: list[Fact]) -> tuple[list[Fact], list[str]]:
            still = {f.id: f for f in facts if f.id in keys and f.keyed_by is None
                     and f.status is Status.ACTIVE and f.content == shown_text[f.id]}  # fmt: skip
            return [f.model_copy(update={"questions": keys[i], "keyed_by": label})
                    for i, f in still.items()], []  # fmt: skip

        written, _ = self.facts.revise(user_id, change)
        return KeyingReport(
            keyed=tuple(f.id for f in written if f.questions),
            declined=tuple(f.id for f in written if not f.questions),
            set_aside=tuple(aside) + tuple(redact(u, self.secrets) for u in reply.unreadable),
            usage=reply.usage,
        )


def keying_usage(record: Callable[[str, str, dict[str, Any]], None]) -> RecordUsage:
    """A ``RecordUsage`` writing through ``record(key, user_id, usage)``
    (``QueueStore.log_usage``), under the key ``keying:<user>``."""

    def write(user_id: str, usage: TokenUsage, model: str | None) -> None:
        record(f"{KEYING_USAGE}{user_id}", user_id, {**usage.model_dump(), "model": model})

    return write
