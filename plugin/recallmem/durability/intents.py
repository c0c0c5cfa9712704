"""Import intents: an import is recorded whole before its first write, removed after
its last, and completed at the next open if the process died in between.

Chroma has no transaction across batches, so an import of thousands of rows cannot be
made atomic inside it. Instead the validated rows, with their vectors, are written to
``<home>/intents/<id>.intent`` first (a temporary file, flushed, then renamed, so an
intent exists whole or not at all). Writing them is idempotent: every row has its id.
A crash before the rename leaves nothing; after it, the next open writes the rows again
and removes the intent, so an import ends with all of its rows or none.

While a process applies an intent it holds an ``flock`` on it, so another process on
the same home (Chroma-server mode) never completes an import still in progress.

Format: one line of JSON (facts, profiles, vector shape), then the float32 vectors.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recallmem.durability.whole_files import sync_directory, write_durably
from recallmem.types import Fact, Profile

INTENTS_DIR = "intents"
_SUFFIX = ".intent"


@dataclass(frozen=True)
class Intent:
    """An import to apply: its rows, their vectors and profiles, and its file."""

    path: Path
    facts: list[Fact]
    vectors: np.ndarray
    profiles: list[Profile]


class IntentLog:
    """The intents of one home."""

    def __init__(self, home: Path) -> None:
        self.directory = home / INTENTS_DIR

    def record(
        self, facts: Sequence[Fact], vectors: np.ndarray, profiles: Sequence[Profile]
    ) -> Intent:
        """Write an intent durably; raises OSError (nothing recorded) if it cannot."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = uuid.uuid4().hex
        header = {
            "facts": [f.model_dump(mode="json") for f in facts],
            "profiles": [p.model_dump(mode="json") for p in profiles],
            "shape": list(vectors.shape),
        }
        body = json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n"
        body += np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
        final = self.directory / f"{name}{_SUFFIX}"
        write_durably(final, body)
        return Intent(final, list(facts), vectors, list(profiles))

    def done(self, intent: Intent) -> None:
        """The intent's rows are all written: remove it."""
        intent.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            sync_directory(self.directory)

    @contextlib.contextmanager
    def claimed(self, path: Path) -> Iterator[bool]:
        """Hold the intent while applying it; yields False if another process holds it."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            yield path.exists()  # it may have been completed while we opened it
        finally:
            os.close(fd)

    def pending(self) -> list[Path]:
        """Intents left by an import that did not finish, oldest first."""
        if not self.directory.is_dir():
            return []
        found = [p for p in self.directory.iterdir() if p.suffix == _SUFFIX]
        return sorted(found, key=lambda p: p.stat().st_mtime)

    def drop_rows(self, user_id: str, keep: Callable[[Fact], bool], *, profiles: bool) -> None:
        """Remove the user's facts that ``keep`` rejects (and with ``profiles`` the user's
        profiles) from every pending intent: a purge must not come back when an
        unfinished import is completed."""
        for path in self.pending():
            with self.claimed(path) as mine:
                if not mine:
                    continue
                intent = self.load(path)
                rows = [i for i, f in enumerate(intent.facts) if f.user_id != user_id or keep(f)]
                kept = [p for p in intent.profiles if p.user_id != user_id or not profiles]
                if len(rows) == len(intent.facts) and len(kept) == len(intent.profiles):
                    continue
                if rows or kept:
                    self.record([intent.facts[i] for i in rows], intent.vectors[rows], kept)
                self.done(intent)

    def load(self, path: Path) -> Intent:
        """Read an intent back; raises ValueError if the file is not one."""
        raw = path.read_bytes()
        head, _, tail = raw.partition(b"\n")
        header = json.loads(head)
        shape = tuple(int(n) for n in header["shape"])
        vectors = np.frombuffer(tail, dtype=np.float32).reshape(shape)
        facts = [Fact.model_validate(f) for f in header["facts"]]
        profiles = [Profile.model_validate(p) for p in header["profiles"]]
        if len(facts) != shape[0]:
            raise ValueError(f"{path}: {len(facts)} facts but {shape[0]} vectors")
        return Intent(path, facts, vectors, profiles)
