"""The package as pip installs it: whole in its wheel, and never shadowed by a folder.

The wheel is built here offline (``--no-isolation``, from a copy of the checkout's
sources); scripts/check_wheel.sh, run by CI, installs such a wheel in a fresh venv and
runs the CLI, the README and the service from it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "plugin" / "recallmem"


def test_a_recallmem_folder_in_the_working_directory_does_not_shadow_the_package(
    tmp_path: Path,
) -> None:
    # A clone named recallmem beside the script: a folder without __init__.py, which
    # Python takes for a namespace package when nothing on sys.path claims the name first.
    (tmp_path / "recallmem" / "plugin").mkdir(parents=True)
    (tmp_path / "recallmem" / "README.md").write_text("# recallmem\n")
    ran = subprocess.run(
        [sys.executable, "-c", "import recallmem; from recallmem import Memory; "
         "from recallmem.prompts import load_tool_texts; load_tool_texts(); print(recallmem.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert Path(ran.stdout.strip()).parent.resolve() == PACKAGE.resolve()


def _package_files() -> set[str]:
    """What the wheel must hold: every module and data file under the package."""
    wanted = {"recallmem/py.typed"}
    for folder, _, files in os.walk(PACKAGE, followlinks=True):  # _prompts is a symlink
        for name in files:
            if Path(name).suffix in (".py", ".yaml", ".html", ".js", ".css"):
                relative = (Path(folder) / name).relative_to(PACKAGE.parent)
                wanted.add(relative.as_posix())
    return wanted


def test_the_wheel_holds_every_module_prompt_and_page_and_builds_without_warnings(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "plugin", source / "plugin", symlinks=True, ignore=ignore)
    shutil.copytree(ROOT / "prompts", source / "prompts", ignore=ignore)
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path / "dist"), "."],
        cwd=source, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    log = built.stdout + built.stderr
    assert built.returncode == 0, log
    # sdist first, then the wheel from the sdist: what `python -m build` ships
    assert "SetuptoolsDeprecationWarning" not in log and "\nWARNING" not in log, log
    wheel = next((tmp_path / "dist").glob("recallmem-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entries = archive.read(entry_points).decode()
    assert {n for n in names if n.startswith("recallmem/")} == _package_files()
    assert "recallmem/_prompts/tools.yaml" in names
    assert "recallmem/_prompts/evaluation/extraction.yaml" in names
    assert "recallmem/server/static/index.html" in names
    assert "recallmem = recallmem.cli:main" in entries
    assert "use = recallmem.embedders.use:UniversalSentenceEncoder" in entries
