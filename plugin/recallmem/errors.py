"""Errors for developers: each says what happened and how to fix it.

Errors meant for the model (inside tools) are ``ToolException`` text instead; see
``recallmem.agent.tools``.
"""

from __future__ import annotations

from collections.abc import Sequence


class RecallmemError(Exception):
    """Base of every error recallmem raises on purpose."""


class InvalidInputError(RecallmemError, ValueError):
    """An argument is malformed: blank content, an unknown category, a bad confidence..."""


class MissingScopeError(InvalidInputError):
    """No user (or other scope key) was given where one is required."""


class SecretRefusedError(InvalidInputError):
    """A text to be stored holds a secret (a password, key, token, card or ID number).

    Says which field and which kinds were found, never the secret itself; nothing was
    written.
    """

    def __init__(self, field: str, kinds: Sequence[str]) -> None:
        self.field, self.kinds = field, tuple(kinds)
        super().__init__(
            f"{field} holds a secret ({', '.join(self.kinds)}); secrets are never stored, "
            'so nothing was written. Store the fact without it (for example "Keeps the '
            "email password in a password manager\"), or set MemoryConfig(secrets='redact') "
            "(RECALLMEM_SECRETS=redact) to store the text with the secret replaced by a marker"
        )


class FactNotFoundError(RecallmemError, KeyError):
    """No fact with that id exists for the user asked about (or at all, when none was given)."""

    def __init__(self, fact_id: str, user_id: str | None = None) -> None:
        super().__init__(fact_id)
        self.fact_id = fact_id
        self.user_id = user_id

    def problem(self) -> str:
        """What was not found, in words; each surface adds its own way to find valid ids."""
        if self.user_id is not None:
            return f"user {self.user_id!r} has no fact with id {self.fact_id!r}"
        return f"no fact of any user has id {self.fact_id!r}"

    def __str__(self) -> str:
        return f"{self.problem()}; list the user's facts with memory.list(user_id=...) to find ids"


class AmbiguousIdError(InvalidInputError):
    """A shortened id matches more than one fact."""

    def __init__(self, prefix: str, candidates: list[str]) -> None:
        shown = "; ".join(candidates)
        super().__init__(
            f"id prefix {prefix!r} matches {len(candidates)} facts ({shown}); "
            "give more characters of the id"
        )
        self.prefix = prefix
        self.candidates = candidates


class DeadLetterNotFoundError(InvalidInputError):
    """No dead letter has that id."""

    def __init__(self, letter_id: int) -> None:
        super().__init__(f"no dead letter with id {letter_id}; list them with dead_letters()")
        self.letter_id = letter_id


class ForgottenMeanwhileError(RecallmemError):
    """A write that began before a forget of what it writes, and would end after it.

    Refused so that nothing said or read before "forget me" comes back; nothing was
    written. ``forget`` is the forget it met (``recallmem.persistence.forget_ledger``).
    """

    def __init__(self, scope: str, forget: object = None) -> None:
        super().__init__(
            f"{scope} was forgotten while this write was under way (it began before the "
            "forget), so nothing was written; say or send it again to store it now"
        )
        self.forget = forget


class EmbeddingMismatchError(RecallmemError):
    """The collection was built with a different embedding model than the one given."""


class StoreError(RecallmemError):
    """The vector store could not be opened, read or written."""


class BrokenIndexError(StoreError):
    """Chroma cannot read a collection whose vector index a crash left inconsistent with
    its records (``collection`` names it); :meth:`recallmem.Memory.maintain` rebuilds it."""

    def __init__(self, message: str, collection: str) -> None:
        super().__init__(message)
        self.collection = collection


class StoreLockedError(StoreError):
    """Another process owns this embedded home; ``holder`` says which (when recorded)."""

    def __init__(self, message: str, holder: object = None) -> None:
        super().__init__(message)
        self.holder = holder


class DiskFullError(StoreError):
    """The disk under the store is full; the message names the path."""


class QueueUnavailableError(StoreError):
    """The extraction queue file cannot be used; facts and recall still work."""

    def __init__(self, path: object, cause: BaseException) -> None:
        super().__init__(
            f"the extraction queue at {path} cannot be used ({type(cause).__name__}: {cause}). "
            "Facts, recall and listing still work; observing conversations, extraction and "
            "the queue views do not. Stop the process, move that file aside (it holds only "
            "conversation turns not yet extracted and dead letters; keep it for inspection "
            "with sqlite3 if they matter) and open the memory again: a new queue is created."
        )
        self.path = path


class ImportRejectedError(RecallmemError):
    """An import payload failed validation; nothing was written."""

    def __init__(self, message: str, rejected: list[tuple[int, str]]) -> None:
        super().__init__(message)
        self.rejected = rejected


class ExtractionError(RecallmemError):
    """The model's output could not be turned into facts; the window stays queued."""


class ModelNotConfiguredError(RecallmemError):
    """An operation needs a chat model and none was given or configured."""


class PromptError(RecallmemError):
    """A prompt file is malformed: unknown keys, missing variables, bad YAML."""


class ModelUnreachableError(RecallmemError):
    """A configured model endpoint (chat or embeddings) failed a call: it could not be
    reached, refused the key, or does not serve the model. The message names the
    endpoint's base URL and the model, and what to check."""
