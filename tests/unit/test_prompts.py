"""Every shipped prompt file loads through its strict model and renders."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from recallmem.errors import PromptError
from recallmem.extraction.filter import load_filter_rules
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.prompts import load_prompt, load_tool_texts, shipped_prompt_names
from recallmem.retrieval.injection import build_block, load_memory_block_spec
from recallmem.secrets import load_secret_rules
from recallmem.signal_prototypes import load_prototype_stage
from recallmem.signals import load_signals
from recallmem.types import Fact, Profile, ProfileSection, ScoredFact, ScoreParts


def _render_extract() -> None:
    spec = load_prompt("extract")
    messages = spec.render(**{name: f"<{name}>" for name in spec.variables})
    assert messages[0][0] == "system"
    rendered = "\n".join(text for _, text in messages)
    for name in spec.variables:
        assert f"<{name}>" in rendered
    spec.to_chat_prompt().invoke(dict.fromkeys(spec.variables, "x"))


def _render_memory_block() -> None:
    fact = Fact(content="Prefers reports in Chinese", category="preference", user_id="u")
    fix = Fact(content="Use pnpm", category="correction", user_id="u", source_error="npm")
    block = build_block(
        Profile(user_id="u", work_context=ProfileSection(summary="Front-end team")),
        [fix],
        [ScoredFact(fact=fact, score=0.9, parts=ScoreParts())],
        today=date(2026, 11, 30),
        max_tokens=500,
        spec=load_memory_block_spec(),
    )
    for text in (
        "Front-end team",
        "Use pnpm",
        "avoid: npm",
        "Prefers reports in Chinese",
        "2026-11-30",
    ):
        assert text in block.text


def _tools() -> None:
    assert set(load_tool_texts().tools) == {"recall", "remember"}


LOADERS: dict[str, Callable[[], object]] = {
    "extract": _render_extract,
    "memory_block": _render_memory_block,
    "tools": _tools,
    "signals": load_signals,
    "signals_prototypes": load_prototype_stage,
    "filter": load_filter_rules,
    "secrets": load_secret_rules,
    "scope_rules": load_scope_rules,
}


def test_every_shipped_prompt_has_a_loader_here() -> None:
    assert set(shipped_prompt_names()) == set(LOADERS)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_prompt_loads_and_renders(name: str) -> None:
    LOADERS[name]()


def test_override_directory_wins(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(
        "name: tools\nversion: '9'\ntools:\n  recall:\n    description: Look things up in memory, always.\n"
        "    args: {query: q}\nresponses: {recall_empty: none}\n",
        encoding="utf-8",
    )
    assert load_tool_texts(tmp_path).version == "9"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: x\nversion: '1'\nvariables: [a]\nmessages: [{role: human, content: 'hi {b}'}]\n",
            "not declared",
        ),
        (
            "name: x\nversion: '1'\nvariables: [a, c]\nmessages: [{role: human, content: 'hi {a}'}]\n",
            "never used",
        ),
        ("name: x\nversion: '1'\nvariables: []\nmessages: []\nsurprise: 1\n", "Extra inputs"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_malformed_prompts_fail_at_load(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "custom.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_prompt("custom", tmp_path)
