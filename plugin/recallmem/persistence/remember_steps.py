"""``remember_many`` in steps: the next step embedded while this one is written, and the
costs Chroma charges per call paid once for the whole call.

Embedding (numpy, which releases the GIL) and writing (Chroma) overlap when the steps of a
call are pipelined (:mod:`recallmem.persistence.ahead`). Each Chroma call also costs a few
milliseconds whatever it writes, and the directory and the revision are one call each: so
the call's ids are entered in the directory once, while its first step is embedded
(:meth:`~recallmem.store.fact_store.FactWrites.list_ahead`; a call of one step registers
what it writes, as any write does, on the caller's thread alone), each step writes only the
user's collection, and the last step claims one revision number for the whole call.
Candidates folded into stored facts leave the directory again at the end.

A step that fails drops the user's index and raises: the steps before it are stored, the
call is not acknowledged, and a retry folds the stored facts in as duplicates. When
Chroma is what failed, nothing more is asked of it: the directory keeps the entries of
the steps not written (they name nothing and are skipped by lookups; ``count()``
includes them until the user is forgotten) and no revision is claimed, so another
process may miss the stored steps of the unacknowledged call until the user's next
write. Any other failure claims a number for what reached Chroma and removes the entries.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np

from recallmem.errors import StoreError
from recallmem.facts.fact_vectors import fact_vectors
from recallmem.facts.near_duplicates import merge_batch
from recallmem.persistence.ahead import prepared_ahead
from recallmem.store.fact_store import FactStore
from recallmem.types import Fact

if TYPE_CHECKING:  # the repository calls this module
    from recallmem.persistence.repository import FactRepository

log = logging.getLogger("recallmem.store")
# Facts embedded, folded and written as one step; the next step is embedded meanwhile.
# On 2 cores embedding ahead did not pay: USE's encode already keeps both cores busy, and
# a step written beside the next one's embedding takes a core from it. One step per call
# of up to 1,000 facts (the size merge_batch compares as one matrix) was about 10 % faster
# in wall time and CPU than steps of 50, and still no slower once USE ran one BLAS thread
# per micro-batch (docs/decisions/0070-write-steps-and-per-call-costs.md).
WRITE_STEP = 1000


def remember_in_steps(
    target: FactRepository, candidates: Sequence[Fact], *, threshold: float, now: datetime
) -> list[Fact]:
    """Store new facts of one user and agent in steps; per candidate, the fact it became."""
    if not candidates:
        return []
    steps = [candidates[s : s + WRITE_STEP] for s in range(0, len(candidates), WRITE_STEP)]
    target.store.refuse_if_full()  # before the directory is asked anything
    # One step registers exactly what it writes; several list every candidate at once,
    # while the first step is embedded (and what they did not write leaves again).
    listed = candidates if len(steps) > 1 else []
    ahead = (lambda: target.store.list_ahead(listed)) if listed else None
    user_id = candidates[0].user_id
    written: set[str] = set()
    results: list[Fact] = []
    try:
        embed = lambda step: fact_vectors(target.embed, step)  # noqa: E731
        with closing(prepared_ahead(steps, embed, ahead)) as ready:
            for number, (step, vectors) in enumerate(ready, start=1):
                last = number == len(steps)
                results += _write_step(target, step, vectors, threshold, now, last, written)
    except StoreError:
        # Chroma failed: ask nothing more of it (on a full disk a delete can hang). The
        # directory keeps the call's other entries, which name nothing and are skipped.
        target.store.unlist(_unwritten(listed, written), user_id=None)
        raise
    except BaseException:
        if written and len(results) < len(candidates):  # the last step's claim did not happen
            _claim_after_failure(target, user_id)
        _unlist_unwritten(target.store, listed, written, user_id)
        raise
    _unlist_unwritten(target.store, listed, written, user_id)
    return results


def _write_step(
    target: FactRepository, candidates: Sequence[Fact], vectors: np.ndarray, threshold: float,
    now: datetime, claim: bool, written: set[str],
) -> list[Fact]:  # fmt: skip
    # A step is compared with itself as one matrix; later steps see earlier ones through
    # the index.
    with target.writing(candidates[0].user_id) as index:
        neighbours = index.nearest(vectors, agent_id=candidates[0].agent_id, k=3, now=now)
        merged = merge_batch(candidates, vectors, neighbours, threshold=threshold, now=now)
        rows = [row for _, row in merged.embedded]
        embedded = [fact for fact, _ in merged.embedded]
        written.update(f.id for f in embedded)
        target.write(index, embedded, vectors[rows], merged.records, claim=claim)
    return merged.results


def _claim_after_failure(target: FactRepository, user_id: str) -> None:
    try:  # the index reloads (a failed write dropped it) and claims the next number
        with target.writing(user_id) as index:
            target.write(index, [], None)
    except StoreError as exc:  # Chroma may be what failed; the next write claims
        log.warning("recallmem: no revision claimed after a failed write of %r: %s", user_id, exc)


def _unwritten(candidates: Sequence[Fact], written: set[str]) -> list[str]:
    # Candidates folded into stored facts, or never reached.
    return [c.id for c in candidates if c.id not in written]


def _unlist_unwritten(
    store: FactStore, listed: Sequence[Fact], written: set[str], user_id: str
) -> None:
    unwritten = _unwritten(listed, written)
    try:
        store.unlist(unwritten, user_id=user_id)  # nothing listed: Chroma is not called
    except StoreError as exc:  # an entry that names nothing is skipped by lookups
        log.warning("recallmem: %d fact id(s) left in the id directory: %s", len(unwritten), exc)
