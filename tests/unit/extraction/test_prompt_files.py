"""Every prompt and pattern file extraction ships loads, and a malformed override is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from recallmem.errors import PromptError
from recallmem.extraction.chain import prepare
from recallmem.extraction.filter import Utterance, load_filter_rules
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.prompts import load_prompt, shipped_prompt_names
from recallmem.secrets.detector import load_secret_rules


def test_the_extraction_files_ship_and_load() -> None:
    assert {"extract", "filter", "secrets", "scope_rules"} <= set(shipped_prompt_names())
    window = prepare([Utterance(id="1", role="user", content="我用 {braces} 写模板")], [])
    rendered = load_prompt("extract").render(**window.inputs)
    assert "我用 {braces} 写模板" in rendered[1][1]  # values are data, never re-formatted
    assert load_filter_rules().acknowledgements
    assert load_secret_rules().rules
    assert load_scope_rules().rules


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("secrets", "name: secrets\nversion: '1'\nredaction: x\n"
                    "rules: [{kind: k, value: any, patterns: ['(?P<v>x)']}]\n", "no (?P<value>"),
        ("scope_rules", "name: scope_rules\nversion: '1'\nrules: {p: {reason: a permission here, "
                        "en: ['x'], zh: ['y'], extra: 1}}\n", "extra"),
        ("filter", "name: filter\nversion: '1'\nacknowledgements: {en: [ok], zh: [好]}\n"
                   "injected_blocks: ['not a tag!']\nnarration: {en: [x], zh: [y]}\n", "not tag names"),
    ],
)  # fmt: skip
def test_a_malformed_override_is_refused_at_load(
    tmp_path: Path, name: str, text: str, problem: str
) -> None:
    (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    loader = {
        "secrets": load_secret_rules,
        "scope_rules": load_scope_rules,
        "filter": load_filter_rules,
    }[name]
    with pytest.raises(PromptError, match=problem.replace("(", r"\(").replace("?", r"\?")):
        loader(tmp_path)
