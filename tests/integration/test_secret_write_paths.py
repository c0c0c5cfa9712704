"""No secret is ever written: every write path refuses it (or redacts it when configured).

Paths: ``remember``, ``remember_many``, ``update``, ``set_profile``, ``import_``, the
``remember`` tool, and the extraction queue (the API: server/test_api_secrets.py) that
``observe`` writes. After each, no byte of the secret is in any file under the home; the
same for secrets disguised by hidden characters, look-alike letters and fullwidth forms.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from recallmem import Memory, MemoryConfig, MemoryToolkit
from recallmem.errors import ImportRejectedError, SecretRefusedError
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.text.quoting import stored_text, visible_text
from recallmem.types import Profile, ProfileSection

from tests.hidden_text import EVASIONS

# One secret of each family, said as users say them.
SAID = {
    "my email password is hunter2": "hunter2",
    "Ada's AWS key is AKIAIOSFODNN7EXAMPLE": "AKIAIOSFODNN7EXAMPLE",
    "我的密码是 Zhang@1990，帮我记住": "Zhang@1990",
    "DB_PASSWORD=S3curePassw0rd in staging": "S3curePassw0rd",
    "Pays with card 4111 1111 1111 1111": "4111 1111 1111 1111",
    "身份证号 11010519491231002X": "11010519491231002X",
    "Her SSN is 123-45-6789": "123-45-6789",
}


def assert_nowhere_on_disk(home: Path, secrets: list[str]) -> None:
    checked = 0
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            checked += 1
            for secret in secrets:
                assert secret.encode() not in data, (secret, path)
    assert checked, "the home holds no file: nothing was checked"


@pytest.fixture
def redacting(home: Path) -> Iterator[Memory]:
    config = MemoryConfig(home=home, secrets="redact")
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        yield memory


@pytest.mark.parametrize(("text", "secret"), SAID.items())
def test_remember_refuses_a_secret_naming_its_kind_never_the_secret(
    memory: Memory, home: Path, text: str, secret: str
) -> None:
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    with pytest.raises(SecretRefusedError, match="content holds a secret") as caught:
        memory.remember(text, user_id="ada", category="knowledge")
    assert secret not in str(caught.value) and caught.value.kinds
    assert [f.content for f in memory.list(user_id="ada")] == ["Prefers reports in Chinese"]
    memory.close()
    assert_nowhere_on_disk(home, [secret])


def test_remember_many_refuses_the_whole_batch(memory: Memory) -> None:
    items = [
        {"content": "Writes TypeScript", "category": "knowledge"},
        {"content": "Uses sk-proj-AbCdEf1234567890XyZ0987qwe for the bot", "category": "context"},
    ]
    with pytest.raises(SecretRefusedError, match=r"API key or token"):
        memory.remember_many(items, user_id="ada")
    assert memory.list(user_id="ada") == []


def test_every_stored_text_of_a_fact_is_checked(memory: Memory) -> None:
    with pytest.raises(SecretRefusedError, match="source_error"):
        memory.remember_many(
            [{"content": "Uses the vault", "category": "correction",
              "source_error": "typed password: hunter22 in chat"}],
            user_id="ada",
        )  # fmt: skip
    with pytest.raises(SecretRefusedError, match=r"sources\[0\]\.quote"):
        memory.remember_many(
            [{"content": "Has a staging database", "category": "context",
              "source": {"quote": "MYSQL_PWD=rootpw1 on staging"}}],
            user_id="ada",
        )  # fmt: skip


def test_update_refuses_new_text_with_a_secret(memory: Memory, home: Path) -> None:
    fact = memory.remember("Has a home router", user_id="ada", category="context")
    with pytest.raises(SecretRefusedError):
        memory.update(fact.id, content="Home router pw: Mango!77")
    with pytest.raises(SecretRefusedError, match="reason"):
        memory.update(fact.id, content="Has a home router at home", reason="pw is Mango!77")
    assert memory.get(fact.id).content == "Has a home router"
    memory.close()
    assert_nowhere_on_disk(home, ["Mango!77"])


def test_set_profile_refuses_a_secret_in_a_summary(memory: Memory) -> None:
    profile = Profile(
        user_id="ada",
        top_of_mind=ProfileSection(summary="Rotating key ghp_abcdefghijklmnopqrstuvwxyz0123"),
    )
    with pytest.raises(SecretRefusedError, match="profile top_of_mind"):
        memory.set_profile(profile)
    assert memory.get_profile(user_id="ada").sections() == {}


def test_import_rejects_rows_holding_a_secret_and_writes_nothing(
    memory: Memory, home: Path
) -> None:
    memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    export = memory.export(user_id="ada")
    memory.forget(user_id="ada", purge=True)
    export["facts"].append({**export["facts"][0], "id": "x" * 32,
                            "content": "Gmail password is Summer2024!"})  # fmt: skip
    export["profiles"] = [{"user_id": "ada", "recent": {"summary": "card 5500-0000-0000-0004"}}]
    with pytest.raises(ImportRejectedError) as caught:
        memory.import_(export)
    assert {row for row, _ in caught.value.rejected} == {0, 1}
    assert "Summer2024!" not in str(caught.value) and "5500" not in str(caught.value)
    assert memory.list(user_id="ada") == []
    memory.close()
    assert_nowhere_on_disk(home, ["Summer2024!", "5500-0000-0000-0004"])


def test_redact_mode_stores_the_rest_of_the_text(redacting: Memory, home: Path) -> None:
    fact = redacting.remember(
        "My email password is hunter2, kept in 1Password", user_id="ada", category="context"
    )
    assert fact.content == "My email password is [REDACTED], kept in 1Password"
    imported = redacting.export(user_id="ada")
    imported["facts"][0] = {**imported["facts"][0], "id": "y" * 32,
                            "content": "Backup card 4111 1111 1111 1111"}  # fmt: skip
    redacting.import_(imported)
    assert redacting.get("y" * 32).content == "Backup card [REDACTED]"
    redacting.close()
    assert_nowhere_on_disk(home, ["hunter2", "4111 1111 1111 1111"])


def test_the_remember_tool_refuses_and_says_why(memory: Memory, home: Path) -> None:
    _, remember = MemoryToolkit(memory=memory).get_tools()
    config: Any = {"configurable": {"user_id": "ada"}}
    answer = remember.invoke({"content": "my email password is hunter2", "category": "knowledge"},
                             config)  # fmt: skip
    assert "holds a secret (password)" in answer and "hunter2" not in answer
    assert memory.list(user_id="ada") == []
    memory.close()
    assert_nowhere_on_disk(home, ["hunter2"])


def test_the_remember_tool_refuses_a_secret_in_redact_mode_too(redacting: Memory) -> None:
    """A model's proposal is held to extraction's rule, whatever the library's policy:
    storing "Router pw: [REDACTED]" would keep that a secret exists beside its words."""
    _, remember = MemoryToolkit(memory=redacting).get_tools()
    answer = remember.invoke(
        {"content": "Router pw: Mango!77", "category": "context"},
        {"configurable": {"user_id": "ada"}},
    )
    assert answer.startswith("Not saved: it holds a secret (") and "Mango" not in answer
    assert redacting.list(user_id="ada", status=None) == []


def test_observe_queues_only_redacted_words(home: Path) -> None:
    config = MemoryConfig(home=home)
    said = " ".join(SAID)
    with Memory(config, embeddings=HashingEmbeddings()) as memory:
        observed = memory.observe([HumanMessage(said)], user_id="ada", thread_id="t1")
        assert observed.queued == 1
        (entry,) = memory.queue.pending(user_id="ada")
        assert entry.messages[0].content.count("[REDACTED]") == len(SAID)
    assert_nowhere_on_disk(home, list(SAID.values()))


def test_extraction_never_shows_or_journals_a_secret(home: Path) -> None:
    reply = (
        '{"facts": [{"content": "Email password is hunter2", "category": "knowledge", '
        '"confidence": 0.95, "evidence": "my email password is", "message_ids": ["m1"]}], '
        '"supersede": [], "confirmed": [], "todos_done": [], "profile": {}}'
    )
    model = FakeChatModel(responses=[reply])
    config = MemoryConfig(home=home)
    with Memory(config, embeddings=HashingEmbeddings(), model=model) as memory:
        report = memory.extract(
            [HumanMessage("remember: my email password is hunter2"), AIMessage("Noted.")],
            user_id="ada",
            thread_id="t1",
        )
        assert [d.content for d in report.dropped] == ["Email password is [REDACTED]"]
        assert memory.list(user_id="ada") == []
    sent = "\n".join(m.text for m in model.requests[0])
    assert "hunter2" not in sent and "[REDACTED]" in sent
    assert_nowhere_on_disk(home, ["hunter2"])


# Evasions of the detector (tests/unit/test_secret_view.py): hidden characters inside a
# secret, look-alike letters, fullwidth forms. Each, as stored, and as a reader sees it.
def _forms(secret: str) -> list[str]:
    return [secret, visible_text(secret), unicodedata.normalize("NFKC", visible_text(secret))]


@pytest.mark.parametrize(("text", "secret"), EVASIONS.items())
def test_remember_refuses_an_evasion_and_nothing_of_it_is_written(
    memory: Memory, home: Path, text: str, secret: str
) -> None:
    with pytest.raises(SecretRefusedError, match="content holds a secret") as caught:
        memory.remember(text, user_id="ada", category="knowledge")
    assert caught.value.kinds and secret not in str(caught.value)
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    memory.close()
    assert_nowhere_on_disk(home, _forms(secret))


def test_observe_queues_evasions_redacted(home: Path) -> None:
    messages = [HumanMessage(text, id=f"m{n}") for n, text in enumerate(EVASIONS)]
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        assert memory.observe(messages, user_id="ada", thread_id="t1").queued == len(EVASIONS)
        queued = [
            m.content for entry in memory.queue.pending(user_id="ada") for m in entry.messages
        ]
        # Stored without the hidden characters that tried to split it (stored_text).
        redacted = [text.replace(secret, "[REDACTED]") for text, secret in EVASIONS.items()]
        assert queued == [stored_text(text) for text in redacted]
    assert_nowhere_on_disk(home, [form for secret in EVASIONS.values() for form in _forms(secret)])


def test_import_rejects_every_row_holding_an_evasion(memory: Memory, home: Path) -> None:
    memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    export = memory.export(user_id="ada")
    memory.forget(user_id="ada", purge=True)
    row = export["facts"][0]
    export["facts"] = [{**row, "id": f"{n:032x}", "content": text}
                       for n, text in enumerate(EVASIONS)]  # fmt: skip
    with pytest.raises(ImportRejectedError) as caught:
        memory.import_(export)
    assert {n for n, _ in caught.value.rejected} == set(range(len(EVASIONS)))
    assert memory.list(user_id="ada") == []
    memory.close()
    assert_nowhere_on_disk(home, [form for secret in EVASIONS.values() for form in _forms(secret)])
