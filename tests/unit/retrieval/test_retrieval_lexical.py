from __future__ import annotations

import numpy as np
import pytest
from recallmem.retrieval.evidence import coverage
from recallmem.retrieval.lexical import LexicalIndex, query_terms, stem, terms
from recallmem.retrieval.lexicon import default_lexicon


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("researching", "research"),
        ("research", "research"),
        ("camped", "camp"),
        ("camping", "camp"),
        ("running", "run"),
        ("falling", "fall"),
        ("agencies", "agency"),
        ("boxes", "box"),
        ("types", "type"),
        ("cats", "cat"),
        ("class", "class"),
        ("bus", "bus"),
        ("analysis", "analysis"),
        ("esp32", "esp32"),
        ("café", "café"),
    ],
)
def test_stem_meets_inflected_forms_and_leaves_others(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_terms_stem_latin_and_pair_cjk() -> None:
    assert terms("Melanie went camping 去爬山") == [
        "melanie", "went", "camp", "去", "去爬", "爬", "爬山", "山",
    ]  # fmt: skip
    assert terms("went camping", stemming=False) == ["went", "camping"]


def test_question_words_leave_queries_but_not_documents() -> None:
    assert query_terms("When did Melanie go camping?") == ["melanie", "go", "camp"]
    assert query_terms("When did Melanie go camping?", question_words=True)[0] == "when"
    assert "what" in terms("what matters most")


def test_stemming_lets_a_question_find_the_inflected_fact() -> None:
    facts = ["Caroline is researching adoption agencies", "Caroline paints sunsets"]
    assert np.argmax(LexicalIndex(facts).scores("What did Caroline research?")) == 0
    plain = LexicalIndex(facts, stemming=False).scores("What did Caroline research?")
    assert plain[0] <= plain[1]  # only the shared name matches: the shorter fact wins


def test_a_question_word_alone_matches_nothing() -> None:
    index = LexicalIndex(["What a day it was", "A quiet evening"])
    assert index.scores("what")[0] == 0.0
    assert LexicalIndex(["What a day it was"], question_words=True).scores("what")[0] > 0


def test_empty_index_scores_nothing() -> None:
    assert LexicalIndex([]).scores("anything").shape == (0,)


def test_a_long_fact_matched_only_through_a_translation_earns_in_proportion_to_its_length() -> None:
    # A chatty turn that mentions the coffee machine in passing, beside the short fact
    # about it: both say 咖啡机, but a concept's dozens of translations match long facts
    # by chance, so the turn (38 units against a mean of 21.5) keeps 21.5 / 38 of it.
    facts = [
        "咖啡机漏水",
        "今天我和朋友去了一家新开的咖啡馆，聊了很久工作上的事情，后来又说起咖啡机坏了要修",
    ]
    found = coverage(LexicalIndex(facts), "coffee machine", default_lexicon(), length_b=1.0)
    assert found.tolist() == pytest.approx([1.0, 21.5 / 38])
    # Matched in its own words, a long fact is not discounted.
    direct = coverage(LexicalIndex(["Fixed the coffee machine", "x " * 40 + "coffee machine"]),
                      "coffee machine", None, length_b=1.0)  # fmt: skip
    assert direct.tolist() == pytest.approx([1.0, 1.0])
