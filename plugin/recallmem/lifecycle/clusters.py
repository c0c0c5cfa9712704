"""Which stored facts are close enough in meaning to be shown together. Pure.

Consolidation shows the model groups of facts, not the whole memory: within one scope
(a user's shared facts, or one agent's), facts whose cosine reaches a threshold are
linked, and each connected set of two or more is a group. Groups never mix scopes, and
their total size is bounded, so the one call per user and run stays small whatever the
size of the memory; the closest groups go first.

>>> import numpy as np
>>> from recallmem.types import Fact
>>> facts = [Fact(content=t, category="knowledge", user_id="u") for t in ("a", "b", "c")]
>>> vectors = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0]])
>>> [[f.content for f in g] for g in related_groups(facts, vectors, threshold=0.9)]
[['a', 'b']]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from recallmem.types import Fact

MAX_GROUP = 8  # facts in one group: more is a topic, not a subject


def related_groups(
    facts: Sequence[Fact],
    vectors: np.ndarray,
    *,
    threshold: float,
    max_facts: int = 40,
    max_group: int = MAX_GROUP,
) -> list[list[Fact]]:
    """Groups of facts of one scope each, linked by cosine >= ``threshold``, closest first.

    ``vectors[i]`` is the unit vector of ``facts[i]``; at most ``max_facts`` facts in all.
    """
    scopes: dict[str | None, list[int]] = {}
    for row, fact in enumerate(facts):
        scopes.setdefault(fact.agent_id, []).append(row)
    scored: list[tuple[float, list[int]]] = []
    for rows in scopes.values():
        scored += _groups_of(np.asarray(rows), vectors, threshold, max_group)
    scored.sort(key=lambda pair: -pair[0])
    chosen: list[list[Fact]] = []
    room = max_facts
    for _, rows in scored:
        if len(rows) <= room:
            chosen.append([facts[r] for r in rows])
            room -= len(rows)
    return chosen


def _groups_of(
    rows: np.ndarray, vectors: np.ndarray, threshold: float, max_group: int
) -> list[tuple[float, list[int]]]:
    """Connected sets of one scope's rows, each with its closest link's cosine."""
    if rows.size < 2:
        return []
    cosines = vectors[rows] @ vectors[rows].T
    np.fill_diagonal(cosines, -1.0)
    parent = list(range(rows.size))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(cosines >= threshold)), strict=True):
        parent[root(int(i))] = root(int(j))
    members: dict[int, list[int]] = {}
    for i in range(rows.size):
        members.setdefault(root(i), []).append(i)
    groups = []
    for local in members.values():
        if len(local) < 2:
            continue
        best = cosines[np.ix_(local, local)].max(axis=1)
        if len(local) > max_group:  # keep the members most tightly linked
            local = [local[k] for k in np.argsort(-best)[:max_group]]
        groups.append((float(best.max()), [int(rows[i]) for i in local]))
    return groups
