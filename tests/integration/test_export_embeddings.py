"""Exports that carry their vectors: an import with the same embedder writes them as they
are (nothing embedded), any other embeds; a broken vector is a rejected row."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from recallmem import Memory, MemoryConfig
from recallmem.errors import ImportRejectedError
from recallmem.testing import HashingEmbeddings


class CountingEmbeddings(HashingEmbeddings):
    """The hashing embedder, counting the texts it embeds; named as the hashing embedder
    is (the store records the class's name), so its vectors count as the same embedder's."""

    def __init__(self, model_name: str = "hashing-v1") -> None:
        super().__init__(model_name=model_name)
        self.texts = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return super().embed_documents(texts)


CountingEmbeddings.__name__ = HashingEmbeddings.__name__


def _exported(memory: Memory, **options: Any) -> dict[str, Any]:
    memory.remember_many([{"content": f"Keeps kayak number {i} in shed {i * 3}",
                           "category": "context"} for i in range(30)], user_id="ada")  # fmt: skip
    memory.remember("Works on the tech desk", user_id="ada", category="identity", agent_id="w")
    exported: dict[str, Any] = json.loads(json.dumps(memory.export(user_id="ada", **options)))
    return exported


def _fresh(tmp_path: Path, name: str, embeddings: HashingEmbeddings) -> Memory:
    return Memory(MemoryConfig(home=tmp_path / name), embeddings=embeddings)


def test_an_import_keeps_the_vectors_an_export_carries(memory: Memory, tmp_path: Path) -> None:
    exported = _exported(memory, embeddings=True)
    carried = exported["embeddings"]
    assert (carried["embedder"], carried["dimension"]) == ("HashingEmbeddings:hashing-v1", 256)
    assert set(carried["vectors"]) == {f["id"] for f in exported["facts"]}
    counting = CountingEmbeddings()
    with _fresh(tmp_path, "other", counting) as other:
        report = other.import_(exported)
        assert (report.imported, report.embedded, counting.texts) == (31, 0, 0)
        ids = [f["id"] for f in exported["facts"]]
        assert np.array_equal(other.repository.vectors("ada", ids),
                              memory.repository.vectors("ada", ids))  # fmt: skip
        assert other.export(user_id="ada")["facts"] == exported["facts"]
        assert other.recall("kayak number 7", user_id="ada", k=1)[0].fact.content.endswith("21")


def test_vectors_of_another_embedder_are_embedded_again(memory: Memory, tmp_path: Path) -> None:
    exported = _exported(memory, embeddings=True)
    counting = CountingEmbeddings(model_name="hashing-other")
    with _fresh(tmp_path, "other", counting) as other:
        report = other.import_(exported)
        assert (report.imported, report.embedded, counting.texts) == (31, 31, 31)


def test_an_export_without_vectors_and_a_partial_block_import(
    memory: Memory, tmp_path: Path
) -> None:
    plain = _exported(memory)
    assert "embeddings" not in plain
    carried = json.loads(json.dumps(memory.export(user_id="ada", embeddings=True)))
    first = plain["facts"][0]["id"]
    carried["embeddings"]["vectors"] = {first: carried["embeddings"]["vectors"][first]}
    for name, document, embedded in (("plain", plain, 31), ("partial", carried, 30)):
        counting = CountingEmbeddings()
        with _fresh(tmp_path, name, counting) as other:
            assert other.import_(document).embedded == counting.texts == embedded
            assert len(other.list(user_id="ada", limit=100)) == 31


@pytest.mark.parametrize(
    ("vector", "reason"),
    [
        ("not base64!", "not base64 of float32 values"),
        ("AAAAAA==", "has 1 values, not 256"),
        (None, "zero or not finite"),
    ],
)
def test_a_broken_vector_rejects_its_row_and_nothing_is_written(
    memory: Memory, tmp_path: Path, vector: str | None, reason: str
) -> None:
    exported = _exported(memory, embeddings=True)
    import base64

    zero = base64.b64encode(np.zeros(256, "<f4").tobytes()).decode()
    exported["embeddings"]["vectors"][exported["facts"][4]["id"]] = vector or zero
    with _fresh(tmp_path, "other", CountingEmbeddings()) as other:
        with pytest.raises(ImportRejectedError, match=f"row 4: its vector .*{reason}") as caught:
            other.import_(exported)
        assert "remove 'embeddings'" in str(caught.value)
        assert other.count() == 0


def test_a_malformed_block_is_named_and_nothing_is_written(memory: Memory, tmp_path: Path) -> None:
    exported = _exported(memory, embeddings=True)
    exported["embeddings"]["dimension"] = "256"
    with _fresh(tmp_path, "other", CountingEmbeddings()) as other:
        with pytest.raises(ImportRejectedError, match="'embeddings' must hold"):
            other.import_(exported)
        assert other.count() == 0


def test_the_embeddings_flag_must_be_a_boolean(memory: Memory) -> None:
    from recallmem.errors import InvalidInputError

    memory.remember("Likes tea", user_id="ada", category="preference")
    with pytest.raises(InvalidInputError, match="embeddings must be True or False"):
        memory.export(user_id="ada", embeddings="yes")  # type: ignore[arg-type]
