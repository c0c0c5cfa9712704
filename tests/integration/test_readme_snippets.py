"""Every ```python block of the README runs, in order, in one namespace, offline.

A block that needs a real model is marked with ``<!-- readme-test: needs VARIABLE -->`` on
the line before it. It runs with a fake key until its model call, which must be the only
thing that fails (its endpoint is a closed loopback port), and is then skipped for that.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"
_BLOCK = re.compile(
    r"(?:<!-- readme-test: needs (?P<needs>[A-Z_]+) -->\n)?```python\n(?P<code>.*?)```", re.S
)


@dataclass(frozen=True)
class Snippet:
    line: int
    code: str
    needs: str | None


def snippets() -> list[Snippet]:
    text = README.read_text(encoding="utf-8")
    return [
        Snippet(text.count("\n", 0, m.start("code")) + 1, m["code"], m["needs"])
        for m in _BLOCK.finditer(text)
    ]


def test_the_readme_has_snippets_that_run_and_one_that_needs_a_key() -> None:
    found = snippets()
    assert len([s for s in found if s.needs is None]) >= 3
    assert [s.needs for s in found if s.needs] == ["RECALLMEM_OPENAI_API_KEY"]


def test_every_runnable_snippet_runs_in_order() -> None:
    namespace: dict[str, object] = {"__name__": "readme"}
    for snippet in (s for s in snippets() if s.needs is None):
        code = compile(snippet.code, f"README.md:{snippet.line}", "exec")
        exec(code, namespace)  # a failure's traceback names the README line
    memory = namespace["memory"]
    memory.close()  # type: ignore[attr-defined]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refused(exc: BaseException | None) -> bool:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return any(isinstance(e, ConnectionRefusedError) for e in seen) or any(
        "ConnectError" in type(e).__name__ and "refused" in str(e).lower() for e in seen
    )


@pytest.mark.parametrize(
    "snippet", [s for s in snippets() if s.needs], ids=lambda s: f"README.md:{s.line}"
)
def test_a_snippet_needing_a_key_fails_only_for_the_key(
    snippet: Snippet, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert snippet.needs is not None and snippet.needs in snippet.code  # the mark is honest
    # With a fake key and an endpoint on a closed loopback port, everything runs up to the
    # model call, which is refused: nothing leaves the machine.
    monkeypatch.setenv("RECALLMEM_LLM_MODEL", "gpt-4o-mini")
    monkeypatch.setenv(snippet.needs, "sk-readme-test-not-a-real-key")
    monkeypatch.setenv("RECALLMEM_OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    namespace: dict[str, object] = {"__name__": "readme"}
    with pytest.raises(Exception) as failed:  # which one is checked below
        exec(compile(snippet.code, f"README.md:{snippet.line}", "exec"), namespace)
    namespace["memory"].close()  # type: ignore[attr-defined]
    assert _refused(failed.value), repr(failed.value)
    pytest.skip(f"needs a real model: set {snippet.needs} and RECALLMEM_LLM_MODEL")


def test_the_quickstart_runs_while_the_service_owns_the_default_home(tmp_path: Path) -> None:
    # The README's first command runs `recallmem serve` on the default home; the
    # Quickstart, run next, must not need that home (it failed with StoreLockedError).
    import os
    import subprocess
    import sys

    home = Path(os.environ["RECALLMEM_HOME"])
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from recallmem.store.chroma.home_lock import acquire; "
         f"acquire(__import__('pathlib').Path({str(home)!r})); print('held', flush=True); "
         "sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        quickstart = snippets()[0]
        assert "Memory(" in quickstart.code and "FakeChatModel" in quickstart.code
        namespace: dict[str, object] = {"__name__": "readme"}
        exec(compile(quickstart.code, f"README.md:{quickstart.line}", "exec"), namespace)
        namespace["memory"].close()  # type: ignore[attr-defined]
    finally:
        holder.communicate("", timeout=30)
