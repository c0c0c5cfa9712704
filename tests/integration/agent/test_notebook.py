"""notebooks/agent_memory.ipynb runs headless, offline, start to finish."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "agent_memory.ipynb"


def test_the_agent_memory_notebook_executes_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake models, whatever the developer's shell has configured.
    for name in [n for n in os.environ if n.startswith("RECALLMEM_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("RECALLMEM_HOME", str(tmp_path / "home"))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(tmp_path)}}).execute()  # fmt: skip
    printed = "".join(
        output.get("text", "")
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
    )
    assert "[preference] Prefers reports written in Chinese" in printed
    assert "planner calls: recall" in printed
    assert "hidden notes in the thread: ['block', 'recall']" in printed
    assert "extraction failed" not in printed
