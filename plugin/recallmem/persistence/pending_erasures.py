"""Erasures under way, recorded in the home until done: one that a full disk or a crash
interrupted is finished when the memory next opens, never left half done.

A purge deletes in several places (the extraction queue, the user's collection, the id
directory, the profiles) and then scrubs; a full disk or a ``kill -9`` can stop it
between two of them. So before anything is erased, the purge's scope (user, and thread,
agent or fact) is added to ``<home>/erasing.json``, written whole (store/durable.py),
and removed once the purge returns. If that first write fails, nothing was erased and
the purge raises DiskFullError (503 through the API) saying so. An entry left behind is
an erasure that did not finish: ``Memory`` finishes it when it opens (operations/
writing.py), and until it is finished no write of that user is accepted (it would be
erased by the finish). The file names the users being erased, for as long as that takes.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path
from typing import ClassVar

from recallmem.durability.whole_files import (
    disk_full_message,
    is_disk_full,
    sync_directory,
    write_durably,
)
from recallmem.errors import DiskFullError, StoreError

ERASING_NAME = "erasing.json"
Erasure = tuple[str, str | None, str | None, str | None]  # user, thread, agent, fact


class PendingErasures:
    """The erasures of one home under way or interrupted (shared in the process)."""

    _homes: ClassVar[dict[Path, PendingErasures]] = {}
    _homes_guard: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def of(cls, home: Path) -> PendingErasures:
        """The erasures of ``home``, shared by every Memory of this process on it."""
        with cls._homes_guard:
            return cls._homes.setdefault(Path(home).resolve(), cls(home))

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / ERASING_NAME
        self._guard = threading.Lock()
        self._pending: list[Erasure] = []
        self.interrupted: list[Erasure] = self._read()  # left by an earlier process

    def _read(self) -> list[Erasure]:
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return [(str(r[0]), *(None if v is None else str(v) for v in r[1:4])) for r in rows]  # type: ignore[misc]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError, IndexError):
            return []  # unreadable: a purge asked again erases anyway

    def _write(self) -> None:
        rows = [*self.interrupted, *(e for e in self._pending if e not in self.interrupted)]
        if rows:
            write_durably(self.path, json.dumps(rows).encode("utf-8"))
        elif self.path.exists():
            self.path.unlink()
            with contextlib.suppress(OSError):
                sync_directory(self.path.parent)

    def begin(self, erasure: Erasure) -> None:
        """Record an erasure before anything of it is erased; DiskFullError (or
        StoreError) if it cannot be recorded, and then nothing is erased."""
        with self._guard:
            self._pending.append(erasure)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._write()
            except OSError as exc:
                self._pending.remove(erasure)
                what = f"{type(exc).__name__}: {exc}"
                if is_disk_full(exc):
                    message = disk_full_message(str(self.path.parent), "record the erasure", what)
                    raise DiskFullError(f"{message} Nothing was erased.") from exc
                raise StoreError(
                    f"could not record the erasure in {self.path} ({what}); nothing was "
                    "erased. Check that the data directory is writable, then forget again."
                ) from exc

    def end(self, erasure: Erasure, *, finished: bool) -> None:
        """The erasure returned: ``finished``, or interrupted (it stays recorded, and
        the user's writes are refused until a forget finishes it)."""
        with self._guard:
            if erasure in self._pending:
                self._pending.remove(erasure)
            if not finished:
                if erasure not in self.interrupted:
                    self.interrupted.append(erasure)
                return
            self.interrupted = [e for e in self.interrupted if e != erasure]
            with contextlib.suppress(OSError):  # a leftover entry is only erased again
                self._write()

    def refuse_writes(self, user_id: str) -> None:
        """Refuse a write to a user whose erasure (of a scope, not of one fact: a new
        fact never has its id) was interrupted (StoreError)."""
        if any(e[0] == user_id and e[3] is None for e in self.interrupted):
            raise StoreError(
                f"erasing the memory of user {user_id!r} was interrupted (a full disk, or "
                "the process stopped); nothing was written. Forget the user again "
                "(forget(user_id=..., purge=True), DELETE /v1/users/{user_id}/memory"
                "?purge=true) to finish the erasure; it also finishes when the memory "
                "next opens"
            )
