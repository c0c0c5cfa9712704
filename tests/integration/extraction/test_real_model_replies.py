"""What real models' replies do to a user's memory, replayed through the product.

The replies under ``tests/data/recorded/extraction`` were written by real models
(Claude sessions standing in for the API, ``bench/data/blind/LOG.md``) to the exact
requests the product renders for the blind conversations in
``bench/data/blind/extract``, day after day. Replaying them through ``Memory.observe``
and ``flush`` with the default embedder runs parsing, hygiene, deduplication,
supersedes, dates and storage on what a model really wrote; the figures asserted are
the ones ``python -m bench real_model`` measured on them (``docs/benchmarks.md``), so a
change to hygiene or storage that loses what the model got right fails here.

A conversation is replayed when every request of its days is recorded; at least
``REPLAYED`` must be. A change to a prompt, a tool description or what a request shows
makes new requests, and this test then fails naming how many wait to be answered
(``tests/data/recorded/README.md``, "After a prompt change").
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.real_model import measure_extraction
from bench.record_extraction import RECORDED

# bench real_model on these recordings (extract@10, docs/benchmarks.md, 2026-12-04): 36
# conversations replayed, recall 98.2, supersede 89.4, old retired 91.5, corrections 92.0,
# due dates 96.6, keywords in the other language on 99.6 % of facts, 5 of 147 traps
# broken, no secret. The floors leave a little room for a float's last bit in a
# near-duplicate decision.
REPLAYED = 36
RECALL = 97.0
KEYWORDS_CROSS = 99.0
TRAPS_BROKEN = 6
SUPERSEDE = 87.0
OLD_RETIRED = 89.0
CORRECTION = 90.0
DUE_DATES = 93.0


@pytest.fixture(scope="module")
def replayed() -> dict[str, Any]:
    from recallmem import MemoryConfig
    from recallmem.embedders import default_embeddings

    return measure_extraction(default_embeddings(MemoryConfig()), RECORDED)


def test_the_blind_conversations_are_replayed_from_real_replies(replayed: dict[str, Any]) -> None:
    assert replayed["complete"] >= REPLAYED, (
        f"{replayed['waiting']} extraction requests have no recording: render them with "
        "`python -m bench.record render extraction --out DIR` and have them answered "
        "(tests/data/recorded/README.md)"
    )
    assert replayed["errors"] == []


def test_what_the_model_said_is_kept_and_nothing_secret_is(replayed: dict[str, Any]) -> None:
    table = replayed["table"]["all"]
    assert table["secrets"] == 0
    assert table["recall"] >= RECALL
    assert table["keywords cross"] >= KEYWORDS_CROSS
    broken = sum(t["broken"] for t in table["traps"].values())
    assert broken <= TRAPS_BROKEN


def test_changes_and_corrections_retire_the_old_fact(replayed: dict[str, Any]) -> None:
    table = replayed["table"]["all"]
    assert table["supersede"] >= SUPERSEDE
    assert table["old retired"] >= OLD_RETIRED
    assert table["correction"] >= CORRECTION
    assert table["due dates"] >= DUE_DATES
