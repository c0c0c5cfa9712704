"""A background thread that runs due work as it falls due, and stops within a bound.

Generic over the work: it calls ``run_due()`` (returns whether anything was done) and
asks ``seconds_until_due()`` how long it may sleep (None: nothing pending). ``poke()``
wakes it early, when new work may be due at once.

>>> import threading
>>> done = threading.Event()
>>> worker = Worker(lambda: done.set() or False, lambda: None)
>>> worker.poke(); done.wait(5)
True
>>> worker.stop(timeout=5)
True
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("recallmem.extraction")
MAX_SLEEP = 5.0  # re-check at least this often: another process may have queued work
MIN_SLEEP = 0.05


class Worker:
    """One daemon thread looping over ``run_due``; started lazily by ``poke``."""

    def __init__(
        self, run_due: Callable[[], bool], seconds_until_due: Callable[[], float | None]
    ) -> None:
        self._run_due, self._seconds_until_due = run_due, seconds_until_due
        self._thread: threading.Thread | None = None
        self._stop, self._wake = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def poke(self) -> None:
        """Start the thread if needed and wake it."""
        with self._lock:
            if self._stop.is_set():
                return
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="recallmem-extraction", daemon=True
                )
                self._thread.start()
        self._wake.set()

    def _sleep_for(self) -> float:
        try:
            if self._run_due():
                return 0.0
            due = self._seconds_until_due()
        except Exception:  # the worker must outlive any one bad window
            log.exception("recallmem: extraction worker error; retrying in %s s", MAX_SLEEP)
            return MAX_SLEEP
        return MAX_SLEEP if due is None else min(MAX_SLEEP, max(MIN_SLEEP, due))

    def _loop(self) -> None:
        while not self._stop.is_set():
            pause = self._sleep_for()
            if pause:
                self._wake.wait(timeout=pause)
                self._wake.clear()

    def stop(self, timeout: float) -> bool:
        """Ask the thread to stop after its current step; True if it stopped in time."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wake.set()
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()
