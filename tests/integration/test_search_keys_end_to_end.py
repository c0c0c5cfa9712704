"""Search keys end to end: stored and embedded with the fact, found in the other language,
exported and imported, and written for unkeyed facts by the keying step (``rekey`` and
maintenance): batched, bounded, resumable, costed, never over a person's edit, and
nothing at all without a model."""

from __future__ import annotations

import io
import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from langchain_core.messages import BaseMessage
from recallmem import Memory, MemoryConfig
from recallmem.cli import main
from recallmem.embedders import embed_matrix
from recallmem.facts.fact_vectors import fact_vectors
from recallmem.limits import KEYING_FACTS_PER_CALL
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.types import Fact, Source

CAT = "Has a ginger cat named Biscuit"
KEYS = ["What is my cat called?", "我的猫叫什么名字？"]


ALLERGY = "Allergic to shellfish"
ALLERGY_KEYS = ["What can't I eat?", "我不能吃什么？", "对贝类海鲜过敏"]
MEALS = ["喜欢吃辣的川菜", "晚饭一般吃面条", "Likes sushi and ramen", "每天早上喝豆浆"]


def test_keys_embedded_with_a_fact_find_it_in_the_other_language(
    use_memory: Memory, tmp_path: Path
) -> None:
    items = [{"content": text, "category": "preference"} for text in MEALS]
    use_memory.remember_many([*items, {"content": ALLERGY, "category": "identity",
                                       "questions": ALLERGY_KEYS}], user_id="ada")  # fmt: skip
    with Memory(MemoryConfig(home=tmp_path / "bare")) as bare:
        bare.remember_many([*items, {"content": ALLERGY, "category": "identity"}], user_id="ada")
        question = "我有什么不能吃的"
        keyed = use_memory.recall(question, user_id="ada", k=5, min_score=None)
        plain = bare.recall(question, user_id="ada", k=5, min_score=None)
        assert keyed[0].fact.content == ALLERGY
        assert [h.fact.content for h in plain].index(ALLERGY) > 0  # food likes win without keys


def test_a_facts_vector_follows_its_keys(memory: Memory) -> None:
    fact = memory.remember(CAT, user_id="ada", category="identity", questions=KEYS)
    encoder = HashingEmbeddings()

    def stored() -> np.ndarray:
        return memory.repository.vectors("ada", [fact.id])[0]

    def expected(fact: Fact) -> np.ndarray:
        return fact_vectors(lambda texts: embed_matrix(encoder, texts), [fact])[0]

    assert np.allclose(stored(), expected(fact))
    edited = memory.update(fact.id, questions=KEYS[:1])
    assert np.allclose(stored(), expected(edited)) and not np.allclose(stored(), expected(fact))
    moved = memory.update(edited.id, content="Has a cat named Pudding")
    assert moved.questions == () and np.allclose(stored(), encoder.embed_query(moved.content))


def test_export_and_import_carry_keys_and_their_vectors(memory: Memory, tmp_path: Path) -> None:
    fact = memory.remember(CAT, user_id="ada", category="identity", questions=KEYS)
    exported = memory.export(user_id="ada", embeddings=True)
    assert exported["facts"][0]["questions"] == KEYS
    with Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings()) as other:
        other.import_(exported)
        copy = other.get(fact.id)
        assert copy.questions == tuple(KEYS) and copy.keyed_by == "given"
        assert np.allclose(other.repository.vectors("ada", [fact.id]),
                           memory.repository.vectors("ada", [fact.id]))  # fmt: skip


# -- the keying step --------------------------------------------------------------------------


def _keys_for(messages: list[BaseMessage]) -> str:
    """A keying model's reply: one Chinese question per fact shown, naming its id."""
    shown = re.findall(r"^\[(F\d+)\] \(\w+\) (.+)$", messages[-1].text, re.MULTILINE)
    return json.dumps({"keys": [{"id": ref, "questions": [f"关于{text}的问题？"]}
                                for ref, text in shown]}, ensure_ascii=False)  # fmt: skip


def _keyer() -> FakeChatModel:
    return FakeChatModel(responses=[_keys_for], cycle=True)


def test_rekey_keys_facts_in_calls_of_twenty_within_the_budget(home: Path) -> None:
    model = _keyer()
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model) as memory:
        memory.remember_many([{"content": f"Fact number {n} about the garden", "category":
                               "context"} for n in range(45)], user_id="ada")  # fmt: skip
        given = memory.remember(CAT, user_id="ada", category="identity", questions=KEYS)
        first = memory.rekey(user_id="ada", max_facts=30)
        assert len(first.keyed) == 30 and first.remaining == 15
        assert model.calls == 2  # 20 + 10 facts, one user per call
        assert memory.queue.usage(user_id="ada")["keying_calls"] == 2
        assert memory.queue.usage()["calls"] == 2 and memory.queue.usage()["windows"] == 0
        second = memory.rekey(user_id="ada")  # resumes with the facts still unkeyed
        assert len(second.keyed) == 15 and second.remaining == 0 and model.calls == 3
        assert memory.rekey(user_id="ada").keyed == () and model.calls == 3  # nothing left
        facts = {f.id: f for f in memory.list(user_id="ada", limit=100)}
        assert facts[given.id].questions == tuple(KEYS)  # a person's keys stay theirs
        keyed = next(f for f in facts.values() if f.id != given.id)
        assert keyed.questions == (f"关于{keyed.content}的问题？",)
        assert keyed.keyed_by == "keys@1 fake-chat-model"
        embed = lambda texts: embed_matrix(HashingEmbeddings(), texts)  # noqa: E731
        assert np.allclose(memory.repository.vectors("ada", [keyed.id])[0],
                           fact_vectors(embed, [keyed])[0])  # fmt: skip
        shown = model.requests[0][-1].text
        assert shown.count("\n[F") == KEYING_FACTS_PER_CALL and CAT not in shown


def test_a_person_s_edit_made_during_a_call_is_never_overwritten(home: Path) -> None:
    holder: dict[str, Memory] = {}

    def edit_while_asked(messages: list[BaseMessage]) -> str:
        memory = holder["memory"]
        fact = memory.list(user_id="ada")[0]
        memory.update(fact.id, content="Has a ginger cat named Pudding")
        return _keys_for(messages)

    model = FakeChatModel(responses=[edit_while_asked])
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model) as memory:
        holder["memory"] = memory
        memory.remember(CAT, user_id="ada", category="identity")
        report = memory.rekey(user_id="ada")
        assert report.keyed == () and report.usage.calls == 1
        (fact,) = memory.list(user_id="ada")
        assert fact.content.endswith("Pudding") and fact.questions == () and fact.keyed_by is None


def test_a_reply_without_usable_keys_marks_the_fact_and_a_failure_waits(home: Path) -> None:
    replies = ['{"keys": [{"id": "F1", "questions": ["Does Ada feed Biscuit?"]}]}',
               RuntimeError("the model is down")]  # fmt: skip
    model = FakeChatModel(responses=replies)
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model) as memory:
        fact = memory.remember(CAT, user_id="ada", category="identity")
        report = memory.rekey(user_id="ada")
        assert report.declined == (fact.id,) and "Ada" in report.set_aside[0]
        assert memory.get(fact.id).keyed_by == "keys@1 fake-chat-model"  # not asked again
        memory.remember("Drinks oolong tea", user_id="ada", category="preference")
        failed = memory.rekey(user_id="ada")
        assert failed.failed[0].user_id == "ada" and failed.remaining == 1


def test_maintenance_keys_within_one_budget_for_the_whole_run(home: Path) -> None:
    model = _keyer()
    config = MemoryConfig(home=home, keying_max_facts=3)
    with Memory(config, embeddings=HashingEmbeddings(), model=model) as memory:
        for user in ("ada", "bob"):
            memory.remember_many([{"content": f"{user} fact {n}", "category": "context"}
                                  for n in range(2)], user_id=user)  # fmt: skip
        report = memory.maintain()
        assert len(report.keyed) == 3 and report.counts()["keyed"] == 3
        assert len(memory.maintain().keyed) == 1  # the next run finishes


def test_without_a_model_nothing_is_keyed_and_nothing_fails(home: Path) -> None:
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.remember(CAT, user_id="ada", category="identity")
        assert memory.rekey().keyed == () and memory.maintain().keyed == ()
        assert memory.list(user_id="ada")[0].keyed_by is None
    out = io.StringIO()
    assert main(["--home", str(home.parent / "cli"), "rekey"], out=out) == 0
    assert "no model configured" in out.getvalue()


# -- the newer fact ---------------------------------------------------------------------------


def test_a_change_whose_supersede_was_missed_ranks_above_the_old_fact(use_memory: Memory) -> None:
    said = {"Drives a 2012 Honda Civic": "2026-02-02", "Plays bass in a cover band": "2026-02-11",
            "Sold the Civic and now rides an electric bike": "2026-09-02",
            "Pepper the beagle turned five": "2026-09-20", "Has a beagle named Pepper": "2026-03-01"}  # fmt: skip
    items = [{"content": text, "category": "context",
              "source": Source(at=datetime.fromisoformat(f"{day}T09:00:00+00:00"))}
             for text, day in said.items()]  # fmt: skip
    use_memory.remember_many(items, user_id="ada")
    hits = use_memory.recall("what car do I have?", user_id="ada", k=3)
    assert hits[0].fact.content.startswith("Sold the Civic") and hits[0].parts.newer > 0
    assert hits[1].fact.content == "Drives a 2012 Honda Civic" and hits[1].parts.newer == 0
    top = hits[0]
    assert top.weights is not None and top.weights.newer == 1.0
    rebuilt = sum(getattr(top.weights, p) * getattr(top.parts, p)
                  for p in ("dense", "lexical", "recency", "confidence", "time", "newer"))  # fmt: skip
    assert rebuilt == pytest.approx(top.score, abs=1e-3)
    # Facts that add to each other keep their order: the name is in the older one.
    assert use_memory.recall("what is my dog's name?", user_id="ada", k=1)[0].fact.content == (
        "Has a beagle named Pepper"
    )


def test_the_matched_key_is_named_in_the_score_parts(memory: Memory) -> None:
    memory.remember(CAT, user_id="ada", category="identity", questions=KEYS)
    (hit,) = memory.recall("我的猫叫什么", user_id="ada", k=1)
    assert hit.parts.key == "我的猫叫什么名字？"
    assert memory.recall("ginger", user_id="ada", k=1)[0].parts.key is None


def test_a_keys_words_are_lexical_evidence_for_its_fact(memory: Memory) -> None:
    keyed = memory.remember(CAT, user_id="ada", category="identity", questions=["我的宠物叫什么？"])
    bare = memory.remember(CAT, user_id="bob", category="identity")
    (hit,) = memory.recall("宠物", user_id="ada", k=1)
    assert hit.fact.id == keyed.id and hit.parts.lexical > 0
    (plain,) = memory.recall("宠物", user_id="bob", k=1)
    assert plain.fact.id == bare.id and plain.parts.lexical == 0  # "pet" is not in the fact
