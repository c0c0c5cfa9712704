"""The CLI drives the same Memory: readable tables, clear non-zero exits."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from recallmem.cli import main


def run(home: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["--home", str(home), *argv], out=out), out.getvalue()


def test_remember_recall_list_forget_round(home: Path) -> None:
    code, out = run(home, "remember", "报告请用中文写", "--user", "ada", "--category", "preference")
    assert code == 0 and "[preference] 报告请用中文写" in out
    fact_id = out.split()[0]
    code, out = run(home, "recall", "报告 中文", "--user", "ada")
    assert code == 0 and out.splitlines()[0].split() == [
        "score",
        "dense",
        "lexical",
        "id",
        "category",
        "content",
    ]
    assert "报告请用中文写" in out
    code, out = run(home, "list", "--user", "ada")
    assert code == 0 and fact_id[:12] in out and "active" in out
    code, out = run(home, "forget", fact_id[:12], "--user", "ada")
    assert (code, out) == (0, "forgot 1 fact(s)\n")
    _, out = run(home, "list", "--user", "ada", "--status", "deleted")
    assert fact_id[:12] in out


def test_export_then_import_elsewhere(home: Path, tmp_path: Path) -> None:
    run(home, "remember", "Likes tea", "--user", "ada", "--category", "preference")
    target = tmp_path / "ada.json"
    code, out = run(home, "export", "--user", "ada", "-o", str(target))
    assert code == 0 and json.loads(target.read_text())["facts"][0]["content"] == "Likes tea"
    code, out = run(tmp_path / "other", "import", str(target))
    assert (code, out) == (0, "imported 1 fact(s), 0 profile(s) for ada\n")


def test_errors_exit_non_zero_with_a_message(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(home, "forget", "0" * 32)
    assert code == 2 and "no fact of any user has id" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _ = run(home, "import", str(bad))
    assert code == 2 and "is not JSON" in capsys.readouterr().err
    code, _ = run(home, "recall", "  ", "--user", "ada")
    assert code == 2 and "query is empty" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\xff\xfe{}", "is not UTF-8 text"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"format": "recallmem.export", "version": ' + b"9" * 5000 + b"}", "4300 digits"),
    ],
)
def test_an_unreadable_import_file_says_why(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, words: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    code, _ = run(home, "import", str(bad))
    err = capsys.readouterr().err
    assert code == 2 and words in err and "nothing was imported" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_console_script_runs(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "recallmem.cli", "--home", str(home), "list", "--user", "nobody"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "user 'nobody' has no active facts\n"


def test_queue_commands_show_pending_work(home: Path) -> None:
    from recallmem import Memory, MemoryConfig

    with Memory(MemoryConfig(home=home)) as memory:  # no model: turns wait in the queue
        memory.observe([{"role": "user", "content": "I'm on the front-end team"}],
                       user_id="ada", thread_id="t1")  # fmt: skip
    code, out = run(home, "pending", "--user", "ada")
    assert code == 0
    header, row = out.splitlines()
    assert header.split()[:4] == ["user", "thread", "messages", "attempts"]
    assert row.split()[:3] == ["ada", "t1", "1"] and "front-end team" in row
    code, out = run(home, "dead-letters")
    assert (code, out) == (0, "no dead letters: every window was extracted or is pending\n")


def test_eval_extract_replays_the_labelled_set(home: Path) -> None:
    code, out = run(home, "eval-extract", "--replay")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].startswith("prompt extract@")
    overall = lines[-1].split()
    assert overall[0] == "all" and float(overall[2]) >= 0.8 and float(overall[3]) >= 0.8


def test_eval_extract_without_a_model_says_how_to_get_one(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(home, "eval-extract")
    assert code == 1 and "--replay" in capsys.readouterr().err


def test_a_dead_letter_is_listed_and_discarded(home: Path) -> None:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.testing import FakeChatModel

    model = FakeChatModel(responses=[RuntimeError("provider is down")])
    with Memory(MemoryConfig(home=home, max_attempts=1), model=model) as memory:
        memory.observe([{"role": "user", "content": "I live in Berlin"}], user_id="ada",
                       thread_id="t1")  # fmt: skip
        memory.flush(timeout=10)
        (letter,) = memory.queue.dead_letters()
    code, out = run(home, "dead-letters")
    assert code == 0 and "provider is down" in out and str(letter.id) in out
    assert run(home, "drop-dead-letter", str(letter.id)) == (
        0,
        f"dead letter {letter.id} is discarded\n",
    )
    assert run(home, "dead-letters")[1].splitlines()[1:] == []
    assert run(home, "drop-dead-letter", str(letter.id))[0] == 2  # no such letter any more


def test_control_characters_are_not_stored_nor_printed_as_terminal_commands(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fact that, printed raw, would clear the line and write over it: it is stored
    # without its escapes, and an argument echoed in an error is printed escaped.
    hostile = "Likes tea\x1b[2K\x08\x1b[1AEVIL: all good\u202e"
    code, out = run(home, "remember", hostile, "--user", "ada", "--category", "preference")
    assert code == 0 and "\x1b" not in out
    for command in (["list", "--user", "ada"], ["recall", "tea", "--user", "ada"]):
        code, out = run(home, *command)
        assert code == 0 and "Likes teaEVIL: all good" in out, out
        assert not any(c in out for c in "\x1b\x08\u202e")
    code, _ = run(home, "forget", "x\x1b[2Kx", "--user", "ada")
    err = capsys.readouterr().err
    assert code == 2 and "\x1b" not in err and "x\\x1b[2Kx" in err
