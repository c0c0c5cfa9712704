"""Every notebook in notebooks/ runs top to bottom, offline, with the shipped fakes."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A live endpoint is the notebook's opt-in; CI runs the fake path.
    for var in ("RECALLMEM_OPENAI_API_KEY", "RECALLMEM_OPENAI_BASE_URL", "RECALLMEM_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RECALLMEM_HOME", str(tmp_path / "home"))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()  # fmt: skip
    errors = [
        o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"
    ]
    assert errors == []
