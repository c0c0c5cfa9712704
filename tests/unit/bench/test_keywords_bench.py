"""The keywords comparison: every fact of its set has valid keywords, and they reach
``remember_many`` (the benchmark stores them through the public API)."""

from __future__ import annotations

from recallmem.limits import check_keywords
from recallmem.secrets.detector import scan

from bench.bilingual_data import EvalSet, Fact, User, load_blind_sets
from bench.bilingual_public import memory_item
from bench.keywords import KEYWORDS, load_keywords, tagged


def test_the_shipped_keywords_cover_every_fact_of_their_set_and_pass_the_rules() -> None:
    name, keywords = load_keywords(KEYWORDS)
    (eval_set,) = [s for s in load_blind_sets() if s.name == name]
    assert set(keywords) == {f.id for u in eval_set.users for f in u.facts}
    for words in keywords.values():
        assert check_keywords(list(words)) == words and not any(scan(w) for w in words)


def test_tagged_facts_carry_their_keywords_into_the_stored_items() -> None:
    fact = Fact("u-f1", "用户对青霉素过敏", frozenset({"u-f1"}), "knowledge")
    plain = EvalSet("s", "blind", (User("u", "zh", (fact,), ()),))
    (stored,) = tagged(plain, {"u-f1": ("penicillin", "allergy")}).users[0].facts
    assert memory_item(stored)["keywords"] == ["penicillin", "allergy"]
    assert "keywords" not in memory_item(fact) and stored.text == fact.text
