"""scripts/setup.sh installs on a fresh checkout, then skips the install until it matters.

It runs on a copy of the checkout's two inputs with a stand-in ``python3`` on PATH that
records each call, so the script's own logic is what is tested, in milliseconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
FAKE_PYTHON = """#!/usr/bin/env bash
echo "$(basename "$0") $*" >> "$SETUP_LOG"
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python"; fi
if [ "$1" = "-c" ] && [ -n "${IMPORT_FAILS:-}" ]; then exit 1; fi
exit 0
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(FAKE_PYTHON)
    (bin_dir / "python3").chmod(0o755)
    return tmp_path


def setup(checkout: Path, **env: str) -> list[str]:
    """Run setup.sh; the pip installs it made."""
    log = checkout / "calls.log"
    log.write_text("")
    path = f"{checkout / 'fakebin'}{os.pathsep}{os.environ['PATH']}"
    subprocess.run(["bash", "scripts/setup.sh"], cwd=checkout, check=True, timeout=60,
                   env={**os.environ, "PATH": path, "SETUP_LOG": str(log), **env})  # fmt: skip
    return [line for line in log.read_text().splitlines() if "pip install" in line]


def test_a_fresh_checkout_installs_and_writes_the_stamp(checkout: Path) -> None:
    installs = setup(checkout)
    assert installs[-1] == "python -m pip install --quiet -e .[dev]"
    assert (checkout / ".venv" / ".recallmem-setup").read_text().strip()


def test_nothing_changed_means_no_install(checkout: Path) -> None:
    setup(checkout)
    assert setup(checkout) == []


def test_a_changed_pyproject_reinstalls(checkout: Path) -> None:
    setup(checkout)
    with (checkout / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a new dependency would go here\n")
    assert setup(checkout)[-1] == "python -m pip install --quiet -e .[dev]"
    assert setup(checkout) == []


def test_a_broken_venv_reinstalls_despite_the_stamp(checkout: Path) -> None:
    setup(checkout)
    assert setup(checkout, IMPORT_FAILS="1") != []
