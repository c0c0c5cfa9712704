"""What real models' replies do to a user's memory, replayed through the product.

The replies under ``tests/data/recorded/extraction`` were written by real models
(Claude sessions standing in for the API, ``bench/data/blind/LOG.md``) to the exact
requests the product renders for the blind conversations in
``bench/data/blind/extract``, day after day. Replaying them through ``Memory.observe``
and ``flush`` with the default embedder runs parsing, hygiene, deduplication,
supersedes, dates and storage on what a model really wrote; the figures asserted are
the ones ``python -m bench real_model`` measured on them (``docs/benchmarks.md``), so a
change to hygiene or storage that loses what the model got right fails here.

The held-out sets (``bench.record_sets.HELDOUT_SETS``) are replayed the same way, each
with its own floors. A conversation is replayed when every request of its days is recorded; at
least ``FLOORS[...]["replayed"]`` must be. A change to a prompt, a tool description or
what a request shows makes new requests, and this test then fails naming how many wait
to be answered (``tests/data/recorded/README.md``, "After a prompt change").
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.real_model import measure_extraction
from bench.record_extraction import RECORDED
from bench.record_sets import HELDOUT_SETS, load_conversations

# bench real_model on these recordings (extract@11, docs/benchmarks.md, 2026-12-04),
# by the labels:
# - the blind sets, 36 conversations: recall 99.5, supersede 91.5, old retired 94.7,
#   corrections 96.0, due dates 96.6, keywords in the other language on 99.2 % of facts,
#   3 of 147 traps broken, no secret;
# - held-out set 1, 30 conversations: recall 99.5, supersede 88.3, old retired 94.8,
#   corrections 100, due dates 97.1, keywords on 99.8 %, 2 of 147 traps broken;
# - held-out set 2, 30 conversations: recall 99.2, supersede 89.8, old retired 92.0,
#   corrections 100, due dates 92.9, keywords on 100 %, 2 of 128 traps broken;
# - held-out set 3, 30 conversations: recall 99.2, supersede 94.1, old retired 96.5,
#   corrections 100, due dates 98.6, keywords on 98.9 %, none of 125 traps broken.
# The floors leave a little room for a float's last bit in a near-duplicate decision.
FLOORS = {
    "blind": {"replayed": 36, "recall": 98.5, "keywords cross": 98.5, "traps broken": 4,
              "supersede": 90.0, "old retired": 93.0, "correction": 94.0, "due dates": 95.0},
    "heldout": {"replayed": 30, "recall": 98.5, "keywords cross": 99.0, "traps broken": 3,
                "supersede": 86.0, "old retired": 93.0, "correction": 97.0, "due dates": 96.0},
    "heldout2": {"replayed": 30, "recall": 98.0, "keywords cross": 99.0, "traps broken": 3,
                 "supersede": 88.0, "old retired": 90.0, "correction": 97.0, "due dates": 91.0},
    "heldout3": {"replayed": 30, "recall": 98.0, "keywords cross": 98.0, "traps broken": 1,
                 "supersede": 92.0, "old retired": 95.0, "correction": 97.0, "due dates": 97.0},
}  # fmt: skip


@pytest.fixture(scope="module", params=sorted(FLOORS))
def replayed(request: pytest.FixtureRequest) -> tuple[dict[str, Any], dict[str, float]]:
    from recallmem import MemoryConfig
    from recallmem.embedders import default_embeddings

    folder = HELDOUT_SETS.get(request.param)
    conversations = (
        load_conversations(folder / "extract" / "conversations.json") if folder else None
    )
    found = measure_extraction(default_embeddings(MemoryConfig()), RECORDED,
                               conversations=conversations)  # fmt: skip
    return found, FLOORS[request.param]


Replayed = tuple[dict[str, Any], dict[str, float]]


def test_the_conversations_are_replayed_from_real_replies(replayed: Replayed) -> None:
    found, floors = replayed
    assert found["complete"] >= floors["replayed"], (
        f"{found['waiting']} extraction requests have no recording: render them with "
        "`python -m bench.record render extraction --out DIR` and have them answered "
        "(tests/data/recorded/README.md)"
    )
    assert found["errors"] == []


def test_what_the_model_said_is_kept_and_nothing_secret_is(replayed: Replayed) -> None:
    found, floors = replayed
    table = found["table"]["all"]
    assert table["secrets"] == 0
    assert table["recall"] >= floors["recall"]
    assert table["keywords cross"] >= floors["keywords cross"]
    assert sum(t["broken"] for t in table["traps"].values()) <= floors["traps broken"]


def test_changes_and_corrections_retire_the_old_fact(replayed: Replayed) -> None:
    table = replayed[0]["table"]["all"]
    floors = replayed[1]
    for column in ("supersede", "old retired", "correction", "due dates"):
        assert table[column] >= floors[column], column
