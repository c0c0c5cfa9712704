"""Copying facts between scopes on real Chroma: provenance, dedup, secrets, exports."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from recallmem.cli import main
from recallmem.config import MemoryConfig
from recallmem.errors import FactNotFoundError, InvalidInputError, SecretRefusedError
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings
from recallmem.types import Fact, Source

TEMPLATE = "team-template"


def _template(memory: Memory) -> list[Fact]:
    return memory.remember_many(
        [
            {"content": "The team writes reports in Chinese", "category": "preference",
             "source": Source(quote="reports in Chinese, always")},
            {"content": "Deploys with Argo CD on Kubernetes", "category": "context",
             "pinned": True},
            {"content": "Code review happens on Friday mornings", "category": "behavior"},
        ],
        user_id=TEMPLATE,
    )  # fmt: skip


def test_a_template_seeds_a_new_user_with_provenance(memory: Memory) -> None:
    originals = _template(memory)
    memory.update(originals[2].id, status="deleted")  # forgotten: not copied
    copies = memory.copy(from_user_id=TEMPLATE, to_user_id="ada")

    assert [c.content for c in copies] == [o.content for o in originals[:2]]
    for original, copy in zip(originals, copies, strict=False):
        assert copy.id != original.id and copy.user_id == "ada" and copy.agent_id is None
        assert copy.copied_from is not None
        assert (copy.copied_from.user_id, copy.copied_from.fact_id) == (TEMPLATE, original.id)
        assert copy.sources == original.sources and copy.confirmations == 0
    assert copies[1].pinned
    assert [h.fact.id for h in memory.recall("report language", user_id="ada", k=1)] == [
        copies[0].id
    ]
    assert {f.id for f in memory.list(user_id=TEMPLATE, status=None)} == {o.id for o in originals}


def test_filters_agents_and_duplicates_of_the_destination(memory: Memory) -> None:
    originals = _template(memory)
    mine = memory.remember("The team writes reports in Chinese", user_id="bo", category="preference",
                           agent_id="writer")  # fmt: skip
    copies = memory.copy(from_user_id=TEMPLATE, to_user_id="bo", to_agent_id="writer",
                         categories=["preference", "behavior"])  # fmt: skip
    assert [c.id for c in copies] == [mine.id, copies[1].id]  # the duplicate was confirmed
    assert copies[0].confirmations == 1 and copies[0].copied_from is None
    assert copies[1].agent_id == "writer" and copies[1].category.value == "behavior"
    again = memory.copy(from_user_id=TEMPLATE, to_user_id="bo", to_agent_id="writer")
    assert len(memory.list(user_id="bo", agent_id="writer")) == 3  # copying twice adds no twins
    assert {f.id for f in again} >= {mine.id, copies[1].id}

    one = memory.copy(from_user_id="bo", from_agent_id="writer", to_user_id="bo",
                      to_agent_id="coder", ids=[copies[1].id])  # fmt: skip
    assert [(f.agent_id, f.content) for f in one] == [("coder", originals[2].content)]
    assert one[0].copied_from is not None and one[0].copied_from.agent_id == "writer"


def test_bad_requests_are_refused_and_write_nothing(memory: Memory) -> None:
    originals = _template(memory)
    with pytest.raises(InvalidInputError, match="same scope"):
        memory.copy(from_user_id=TEMPLATE, to_user_id=TEMPLATE)
    with pytest.raises(FactNotFoundError, match="no fact with id 'nope'"):
        memory.copy(from_user_id=TEMPLATE, to_user_id="ada", ids=["nope"])
    with pytest.raises(InvalidInputError, match="belongs to the shared scope"):
        memory.copy(from_user_id=TEMPLATE, from_agent_id="a", to_user_id="ada",
                    ids=[originals[1].id])  # fmt: skip
    with pytest.raises(InvalidInputError, match="list of fact ids"):
        memory.copy(from_user_id=TEMPLATE, to_user_id="ada", ids=originals[0].id)  # type: ignore[arg-type]
    memory.update(originals[0].id, status="superseded")
    with pytest.raises(InvalidInputError, match="not active"):
        memory.copy(from_user_id=TEMPLATE, to_user_id="ada", ids=[originals[0].id])
    with pytest.raises(InvalidInputError, match="category"):
        memory.copy(from_user_id=TEMPLATE, to_user_id="ada", categories=["hobby"])
    assert memory.list(user_id="ada", status=None) == []


def test_the_secrets_rule_applies_to_copies(home: Path) -> None:
    leaked = Fact(content="The shared wifi password is hunter2-Blue!", category="context",
                  user_id=TEMPLATE)  # fmt: skip
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.put([leaked])  # written before today's rules: put does not screen
        with pytest.raises(SecretRefusedError):
            memory.copy(from_user_id=TEMPLATE, to_user_id="ada")
        assert memory.list(user_id="ada", status=None) == []
    config = MemoryConfig(home=home, secrets="redact")
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        (copy,) = memory.copy(from_user_id=TEMPLATE, to_user_id="ada")
        assert "hunter2" not in copy.content and "[REDACTED]" in copy.content


def test_exports_carry_the_provenance_and_older_exports_import(
    memory: Memory, tmp_path: Path
) -> None:
    _template(memory)
    copies = memory.copy(from_user_id=TEMPLATE, to_user_id="ada")
    document = memory.export(user_id="ada")
    with Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings()) as other:
        other.import_(document)
        assert other.get(copies[0].id).copied_from == copies[0].copied_from
        older = memory.export(user_id=TEMPLATE)
        for row in older["facts"]:
            del row["copied_from"], row["merged_from"]  # written before these fields
        assert other.import_(older).imported == 3
        assert all(f.copied_from is None for f in other.list(user_id=TEMPLATE))


def test_a_copy_logs_an_event(memory: Memory, caplog: pytest.LogCaptureFixture) -> None:
    _template(memory)
    with caplog.at_level(logging.INFO, logger="recallmem.events"):
        memory.copy(from_user_id=TEMPLATE, to_user_id="ada", categories=["context"])
    (event,) = [r for r in caplog.records if getattr(r, "event", "") == "memory_copy"]
    assert event.data == {"from_user_id": TEMPLATE, "from_agent_id": None,  # type: ignore[attr-defined]
                          "to_user_id": "ada", "to_agent_id": None, "copied": 1, "confirmed": 0}  # fmt: skip


def test_the_cli_copies_a_template(tmp_path: Path) -> None:
    def run(*argv: str) -> tuple[int, str]:
        out = io.StringIO()
        return main(["--home", str(tmp_path / "cli"), *argv], out=out), out.getvalue()

    assert run("remember", "Writes reports in Chinese", "--user", TEMPLATE,
               "--category", "preference")[0] == 0  # fmt: skip
    code, out = run("copy", "--from-user", TEMPLATE, "--to-user", "cy", "--to-agent", "helper")
    assert code == 0 and "copied 1 new fact(s), confirmed 0 existing" in out
    code, out = run("copy", "--from-user", TEMPLATE, "--to-user", "cy", "--to-agent", "helper")
    assert code == 0 and "confirmed 1 existing" in out
    code, out = run("list", "--user", "cy", "--agent", "helper")
    assert out.count("Writes reports in Chinese") == 1
    code, _ = run("copy", "--from-user", TEMPLATE, "--to-user", TEMPLATE)
    assert code == 2
