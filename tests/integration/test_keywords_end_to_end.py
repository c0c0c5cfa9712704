"""Search keywords end to end: extracted, stored in Chroma, recalled across languages,
edited, exported and imported, and shown by the CLI and the API; never a secret."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from recallmem import Memory, MemoryConfig
from recallmem.cli import main
from recallmem.errors import ImportRejectedError, InvalidInputError, SecretRefusedError
from recallmem.testing import FakeChatModel, HashingEmbeddings

MACHINE = "Bought a Breville espresso maker last week; it drips water"
TAGS = ["咖啡机", "漏水"]
# Chinese facts about coffee and machines, and English ones about other things: the trap
# words of a question about the machine's problem.
DISTRACTORS = [
    "喜欢喝美式咖啡，不加糖",
    "用户的咖啡杯是蓝色的",
    "每天早上在楼下咖啡店买咖啡",
    "家里的洗衣机有问题，声音很大",
    "每周三晚上打羽毛球",
    "Likes dark mode in every editor",
    "Drinks green tea in the afternoon",
    "Works as a front-end engineer",
    "The washing machine makes a loud noise",
]


def _store(memory: Memory, keywords: list[str]) -> None:
    items = [{"content": MACHINE, "category": "context", "keywords": keywords}]
    items += [{"content": text, "category": "context"} for text in DISTRACTORS]
    memory.remember_many(items, user_id="ada")


def _rank(memory: Memory, query: str) -> int:
    hits = memory.recall(query, user_id="ada", k=len(DISTRACTORS) + 1)
    return [h.fact.content for h in hits].index(MACHINE)


def test_chinese_keywords_lift_an_english_fact_for_a_chinese_question(
    use_memory: Memory, tmp_path: Path
) -> None:
    _store(use_memory, TAGS)
    with Memory(MemoryConfig(home=tmp_path / "bare")) as bare:
        _store(bare, [])
        # The dictionary cannot read "espresso maker ... drips" as 咖啡机漏水; the keywords can.
        assert _rank(bare, "咖啡机漏水") > 0 and _rank(use_memory, "咖啡机漏水") == 0
        top = use_memory.recall("咖啡机漏水", user_id="ada", k=1)[0]
        assert top.parts.lexical == 1.0  # every word of the question, matched directly
        assert _rank(use_memory, "我的咖啡机有什么问题") < _rank(bare, "我的咖啡机有什么问题")
        # An English question is untouched by Chinese keywords.
        question = "What is wrong with my espresso maker?"
        assert _rank(use_memory, question) == _rank(bare, question) == 0


def test_remember_refuses_a_keyword_holding_a_secret_and_writes_nothing(memory: Memory) -> None:
    with pytest.raises(SecretRefusedError, match=r"keywords\[2\]"):
        memory.remember("Has a home wifi network", user_id="ada", category="context",
                        keywords=["wifi", "password", "hunter2-oak"])  # fmt: skip
    with pytest.raises(InvalidInputError, match="at most 24 characters"):
        memory.remember("Has a home wifi network", user_id="ada", category="context",
                        keywords=["a keyword that is really a whole sentence"])  # fmt: skip
    assert memory.count() == 0


def test_keywords_are_edited_cleared_and_survive_a_reopen(home: Path) -> None:
    # A name in pinyin: no dictionary translates it; a keyword can.
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        fact = memory.remember("用户的猫叫团子", user_id="ada", category="context")
        assert memory.recall("Tuanzi", user_id="ada")[0].parts.lexical == 0
        memory.update(fact.id, keywords=["Tuanzi", "cat"])
        hit = memory.recall("Tuanzi", user_id="ada")[0]
        assert hit.fact.id == fact.id and hit.parts.lexical == 1.0
        with pytest.raises(SecretRefusedError):
            memory.update(fact.id, keywords=["card", "4111 1111 1111 1111"])
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        assert memory.get(fact.id).keywords == ("Tuanzi", "cat")
        assert memory.update(fact.id, keywords=[]).keywords == ()
        assert memory.recall("Tuanzi", user_id="ada")[0].parts.lexical == 0


def test_export_then_import_keeps_keywords(memory: Memory, tmp_path: Path) -> None:
    tagged = memory.remember(MACHINE, user_id="ada", category="context", keywords=TAGS)
    memory.remember("Likes tea", user_id="ada", category="preference")
    exported = json.loads(json.dumps(memory.export(user_id="ada")))
    assert {tuple(f["keywords"]) for f in exported["facts"]} == {tuple(TAGS), ()}
    with Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings()) as other:
        other.import_(exported)
        assert other.get(tagged.id).keywords == tuple(TAGS)
        assert other.recall("咖啡机漏水", user_id="ada", k=1)[0].fact.id == tagged.id
        again = {f["id"]: f["keywords"] for f in other.export(user_id="ada")["facts"]}
        assert again == {f["id"]: f["keywords"] for f in exported["facts"]}


def test_an_import_with_a_secret_in_keywords_is_rejected(memory: Memory) -> None:
    memory.remember(MACHINE, user_id="ada", category="context", keywords=TAGS)
    exported = memory.export(user_id="ada")
    exported["facts"][0]["keywords"] = ["wifi", "password", "hunter2-oak"]
    with pytest.raises(ImportRejectedError, match=r"row 0: keywords\[2\] holds a secret"):
        memory.import_(exported)


def test_extracted_keywords_are_stored_and_recalled(home: Path) -> None:
    reply = json.dumps({"facts": [{
        "content": MACHINE, "category": "context", "confidence": 0.95,
        "evidence": "I bought a Breville espresso maker last week", "message_ids": ["m1"],
        "keywords": ["咖啡机", "漏水", "x" * 30],
    }]}, ensure_ascii=False)  # fmt: skip
    model = FakeChatModel(responses=[reply])
    said = "I bought a Breville espresso maker last week and it drips water everywhere."
    config = MemoryConfig(home=home)
    with Memory(config, embeddings=HashingEmbeddings(), model=model) as memory:
        report = memory.extract([{"role": "user", "content": said}], user_id="ada", thread_id="t")
        (added,) = report.added
        assert added.fact.keywords == ("咖啡机", "漏水")
        assert any("longer than 24" in d.reason for d in report.dropped)  # said, not lost
        assert memory.recall("咖啡机漏水", user_id="ada")[0].fact.id == added.fact.id
        # Keywords help recall; the memory block shows the fact as it was said.
        block = memory.recall("咖啡机", user_id="ada")[0].fact
        assert block.content == MACHINE


def _cli(home: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["--home", str(home), *argv], out=out), out.getvalue()


def test_the_cli_takes_and_shows_keywords(home: Path) -> None:
    code, out = _cli(home, "remember", MACHINE, "--user", "ada", "--category", "context",
                     "--keyword", "咖啡机", "--keyword", "漏水")  # fmt: skip
    assert code == 0 and "[keywords: 咖啡机, 漏水]" in out
    code, out = _cli(home, "list", "--user", "ada")
    assert code == 0 and "[keywords: 咖啡机, 漏水]" in out
    code, out = _cli(home, "recall", "咖啡机漏水", "--user", "ada")
    assert code == 0 and MACHINE in out and "咖啡机, 漏水" in out


def test_the_remember_tool_takes_keywords_and_the_model_never_reads_them(memory: Memory) -> None:
    from recallmem import MemoryToolkit

    recall, remember = MemoryToolkit(memory=memory).get_tools()
    assert "keywords" in remember.args and "other language" in remember.args["keywords"][
        "description"]  # fmt: skip
    config = {"configurable": {"user_id": "ada"}}
    said = remember.invoke({"content": "用户的猫叫团子", "category": "context",
                            "keywords": ["Tuanzi", "cat"]}, config)  # fmt: skip
    assert said.startswith("Saved to memory") and "Tuanzi" not in said
    answer = recall.invoke({"query": "Tuanzi"}, config)
    assert "用户的猫叫团子" in answer and "Tuanzi" not in answer  # shown as stored, words apart
    refused = remember.invoke({"content": "Has a home wifi", "category": "context",
                               "keywords": ["password", "hunter2-oak"]}, config)  # fmt: skip
    assert "secret" in refused and "hunter2" not in refused and memory.count() == 1
