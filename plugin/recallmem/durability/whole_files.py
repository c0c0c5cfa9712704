"""Files written whole or not at all: a temporary file, flushed to disk, then renamed.

Journals (import intents, rebuilds, consolidation plans) must exist complete or not at
all after a crash, so each is written to a temporary file, ``fsync``ed, renamed over its
name, and the directory ``fsync``ed so the rename itself survives a power cut. And what
a full disk looks like, whichever layer meets it.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recallmem.errors import DiskFullError

# How SQLite (Chroma's too) and the OS word a full disk when no errno comes along.
_DISK_FULL_TEXT = ("database or disk is full", "no space left on device", "disk is full")


def write_durably(path: Path, body: bytes) -> None:
    """Write ``body`` to ``path`` whole or not at all; raises OSError if it cannot."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, path)
        sync_directory(path.parent)
    finally:
        temporary.unlink(missing_ok=True)


def sync_directory(directory: Path) -> None:
    """Make the renames and removals in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def disk_full_message(where: str, action: str, detail: str) -> str:
    """The error text of a write refused or failed for lack of space."""
    return (
        f"disk full: could not {action} in {where} ({detail}). Free space on that disk "
        "(or move RECALLMEM_HOME to a larger one); reads keep working meanwhile."
    )


def is_disk_full(exc: BaseException) -> bool:
    """Whether an error (or one it was raised from) says the disk is full."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(text in str(seen).lower() for text in _DISK_FULL_TEXT):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextmanager
def disk_full_refused(where: str, action: str) -> Iterator[None]:
    """Turn a disk-full error of the block into DiskFullError (other errors pass):
    for SQLite files of ours, whose transactions on a full disk did not happen."""
    try:
        yield
    except Exception as exc:
        if not is_disk_full(exc) or isinstance(exc, DiskFullError):
            raise
        detail = f"{type(exc).__name__}: {exc}"
        raise DiskFullError(disk_full_message(where, action, detail)) from exc
