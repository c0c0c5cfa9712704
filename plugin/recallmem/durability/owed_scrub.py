"""A scrub owed: a purge is recorded in the home before its first delete, so a crash
between the delete and the scrub (store/chroma/workarounds/scrub.py) cannot leave the
purged text for good.

Deleting a record leaves its text in Chroma's log, full-text index and free pages until
the scrub rewrites them; a ``kill -9`` in between left it there for good (a retried
purge of the fact found no fact, and nothing else scrubs). So before a purge deletes
anything, ``<home>/scrub.owed`` is written durably (durability/whole_files.py); a scrub removes
it once done, unless another purge began after that scrub started (its own scrub will).
Opening an embedded store finds a marker a crash left and scrubs then: Chroma's file,
the extraction queue's and the retrieval records'. Without a marker opening costs one ``stat``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from recallmem.durability.whole_files import (
    disk_full_message,
    is_disk_full,
    sync_directory,
    write_durably,
)
from recallmem.errors import DiskFullError, StoreError

log = logging.getLogger("recallmem.store")
OWED_NAME = "scrub.owed"
_NOTE = b"a purge deleted records whose bytes are not scrubbed yet; the next open scrubs\n"
_purges: dict[Path, int] = {}  # purges begun per marker, for every Memory of this process
_guard = threading.Lock()


class OwedScrub:
    """The marker of one home."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / OWED_NAME

    def owe(self) -> None:
        """Record durably that a scrub is owed; call before the first delete of a purge."""
        with _guard:
            _purges[self.path] = _purges.get(self.path, 0) + 1
            if not self.path.exists():
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    write_durably(self.path, _NOTE)
                except OSError as exc:  # before any delete: nothing was erased
                    _purges[self.path] -= 1
                    detail = f"{type(exc).__name__}: {exc}"
                    if is_disk_full(exc):
                        message = disk_full_message(str(self.path.parent), "purge", detail)
                        raise DiskFullError(f"{message} Nothing was erased.") from exc
                    raise StoreError(f"could not purge: {detail}; nothing was erased") from exc

    def scrubbed(self, scrub: Callable[[], None]) -> None:
        """Run ``scrub``; then the marker goes, unless a purge began while it ran."""
        with _guard:
            begun = _purges.get(self.path, 0)
        scrub()
        with _guard:
            if _purges.get(self.path, 0) == begun:
                self.path.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    sync_directory(self.path.parent)


def complete_owed_scrub(home: Path, scrub: Callable[[], None]) -> bool:
    """Run ``scrub`` if a purge a crash interrupted left one owed in ``home``; True if
    one was. A failed scrub is logged and stays owed for the next open or purge: opening
    must not fail for it."""
    owed = OwedScrub(home)
    if not owed.path.exists():
        return False
    log.warning("recallmem: a purge was interrupted before its bytes were scrubbed; scrubbing")

    try:
        owed.scrubbed(scrub)
    except StoreError as exc:
        log.warning("recallmem: the owed scrub failed (%s); it stays owed", exc)
    return True
