"""Canary of store/chroma/workarounds/settling.py.

A chromadb 1.5.9 server answers a read that overlaps another client's write to the same
collection with "Error finding id" now and then (one read in about a hundred under
load; no test makes it happen at will). The workaround recognises that message, which
the compiled core carries: if this fails, the message is gone and the retry never
triggers. Check whether the race is; delete the workaround if so, else match the new words.
"""

from __future__ import annotations

from recallmem.store.chroma.workarounds.settling import is_in_flight
from upstream import BINDINGS


def test_chroma_still_says_error_finding_id() -> None:
    assert b"Error finding id" in BINDINGS
    assert is_in_flight(RuntimeError("Error finding id"))
