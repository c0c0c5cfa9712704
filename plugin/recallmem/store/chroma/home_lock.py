"""One process owns an embedded home: an OS lock on ``<home>/recallmem.lock``.

Embedded Chroma keeps caches and a write-ahead log that only one process may drive;
two processes writing one home lose facts. So opening the embedded store takes an
exclusive ``flock`` on a lock file in the home. The OS drops it when the process ends,
however it ends (``kill -9`` included), so the lock is never left stale. The file holds
who owns it (pid, host, command, start time, and the service's address when the owner
is ``recallmem serve``), as JSON, so a second opener can say whom to ask.

Within one process every ``Memory`` on a home shares the lock (Chroma shares one
client per path inside a process); it is released when the last of them closes.
A Chroma server (``chroma_url``) takes no lock: it serialises writers itself.

The home directory itself is locked too: a lock file deleted (or replaced) by hand
while its owner runs would let a second process lock a new file of the same name, and
the two then corrupt each other's Chroma ("Error finding id"). The directory cannot be
deleted under its owner without deleting the memory, so a second opener still fails,
and is told not to delete ``recallmem.lock``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from recallmem.errors import StoreLockedError
from recallmem.store.fact_store import HomeHold

LOCK_NAME = "recallmem.lock"


@dataclass(frozen=True)
class Holder:
    """Who owns a home, as its lock file says."""

    pid: int
    host: str
    command: str
    started_at: float
    serve_url: str | None = None
    open_access: bool = True

    @classmethod
    def of_this_process(cls) -> Holder:
        """This process, as it would be recorded: the program's name, not its arguments
        (``recallmem remember "..."`` would otherwise leave the fact in the lock file)."""
        program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
        if program == "__main__.py":  # python -m package
            program = Path(sys.argv[0]).parent.name
        return cls(os.getpid(), socket.gethostname(), program or "python", time.time())

    @classmethod
    def parse(cls, text: str) -> Holder | None:
        """The holder a lock file names, or None when it is empty or not ours."""
        try:
            data = json.loads(text)
            return cls(
                pid=int(data["pid"]),
                host=str(data["host"]),
                command=str(data["command"]),
                started_at=float(data["started_at"]),
                serve_url=data.get("serve_url"),
                open_access=bool(data.get("open_access", True)),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        """One phrase naming the process: pid, host, command, since when."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        return f"pid {self.pid} on {self.host}, `{self.command}`, since {since}"


def locked_message(home: Path, holder: Holder | None) -> str:
    """What a second opener is told: who holds the home and what to do instead."""
    who = holder.describe() if holder else "a process that did not record itself"
    advice = (
        "Stop that process first, or, for several processes on one memory, run a Chroma "
        "server and give each of them chroma_url (RECALLMEM_CHROMA_URL, `--chroma-url`)."
    )
    if holder and holder.serve_url:
        advice = (
            f"It is a recallmem service: use its HTTP API at {holder.serve_url}/v1 (for "
            f"example `curl {holder.serve_url}/v1/users/USER/facts`; OpenAPI at "
            f"{holder.serve_url}/openapi.json). " + advice
        )
    return (
        f"the memory at {home} is in use by another process ({who}). Embedded Chroma "
        "belongs to one process: two processes writing it lose facts. " + advice
    )


@dataclass
class _Held:
    fd: int
    holder: Holder
    users: int
    directory_fd: int | None = None


_held: dict[Path, _Held] = {}
_registry_lock = threading.Lock()


class HomeLock:
    """This process's share of the lock on one home; :meth:`release` gives it back."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self._released = False

    @property
    def holder(self) -> Holder:
        """This process, as the lock file records it."""
        return _held[self.home].holder

    def hold(self) -> HomeHold:
        """Whether this process still owns the home, as the lock file names its owner."""
        holder = read_holder(self.home)
        pid = holder.pid if holder else None
        return HomeHold(mode="home-lock", held=pid == os.getpid(), holder_pid=pid)

    def announce(self, serve_url: str, *, open_access: bool) -> None:
        """Record that this process serves the home at ``serve_url`` (for the CLI)."""
        with _registry_lock:
            held = _held[self.home]
            announced = {"command": "recallmem serve", "serve_url": serve_url,
                         "open_access": open_access}  # fmt: skip
            held.holder = Holder(**{**asdict(held.holder), **announced})
            _write(held.fd, held.holder)

    def release(self) -> None:
        """Give back this share; the last share of the process unlocks the home."""
        with _registry_lock:
            if self._released:
                return
            self._released = True
            held = _held.get(self.home)
            if held is None:  # a forked child: the lock is its parent's
                return
            held.users -= 1
            if held.users == 0:
                del _held[self.home]
                os.close(held.fd)  # closing the descriptor drops the flock
                if held.directory_fd is not None:
                    os.close(held.directory_fd)


def acquire(home: Path) -> HomeLock:
    """Own ``home`` (shared with other Memory objects of this process), or raise
    :class:`~recallmem.errors.StoreLockedError` at once naming the owner."""
    home = home.resolve()
    with _registry_lock:
        if home in _held:
            _held[home].users += 1
            return HomeLock(home)
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(home / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = Holder.parse(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
            os.close(fd)
            raise StoreLockedError(locked_message(home, holder), holder) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            directory_fd = _lock_directory(home)
        except StoreLockedError:
            os.close(fd)
            raise
        holder = Holder.of_this_process()
        _write(fd, holder)
        _held[home] = _Held(fd, holder, 1, directory_fd)
        return HomeLock(home)


def _lock_directory(home: Path) -> int | None:
    """Lock the home directory (None where the file system cannot lock a directory)."""
    try:
        fd = os.open(home, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreLockedError(
            f"the memory at {home} is in use by another process, whose lock file "
            f"{home / LOCK_NAME} was deleted or replaced while it ran. Never delete that "
            "file while a process uses the home: stop that process (or wait for it to end) "
            "and open the memory again; the lock is released when it ends."
        ) from None
    except OSError:  # a file system that cannot lock directories: the file lock holds
        os.close(fd)
        return None
    return fd


def _forget_after_fork() -> None:
    # A forked child shares the parent's lock (flock follows the open file), but must
    # not write the parent's home: it forgets the lock, so opening the home there fails.
    for held in _held.values():
        for fd in (held.fd, held.directory_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def read_holder(home: Path) -> Holder | None:
    """Who the lock file of ``home`` names (it may be a process that has ended)."""
    try:
        return Holder.parse((home / LOCK_NAME).read_text(encoding="utf-8"))
    except OSError:
        return None


def _write(fd: int, holder: Holder) -> None:
    # The record only explains the lock; a full disk must not stop the memory opening.
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(asdict(holder)).encode("utf-8"), 0)
