"""Imports run downward only: each module imports from its own layer or below
(docs/architecture.md, "Layers"), read from the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import recallmem

ROOT = Path(recallmem.__file__).parent
# Module (or package) prefixes by layer, as drawn in docs/architecture.md. The longest
# matching prefix decides.
LAYERS: dict[str, int] = {
    "recallmem": 9,  # the package's __init__: the public names, re-exported
    "recallmem.cli": 8,
    "recallmem.server": 7,
    "recallmem.agent": 6,
    "recallmem.integrations": 6,
    "recallmem.memory": 5,
    "recallmem.memory_background": 5,
    "recallmem.operations": 5,
    "recallmem.extraction": 4,
    "recallmem.lifecycle": 4,
    "recallmem.persistence": 3,
    "recallmem.retrieval": 2,
    "recallmem.store": 1,
    **dict.fromkeys(
        [
            "recallmem.durability",
            "recallmem.embedders",
            "recallmem.endpoints",
            "recallmem.facts",
            "recallmem.replay",
            "recallmem.secrets",
            "recallmem.signals",
            "recallmem.text",
        ],
        0,
    ),
    # the shared vocabulary, the only modules besides the facade at the package's root
    **{
        f"recallmem.{name}": 0
        for name in [
            "_async",
            "config",
            "errors",
            "events",
            "limits",
            "prompts",
            "testing",
            "types",
        ]
    },
}


def _layer(module: str) -> int:
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        if (prefix := ".".join(parts[:end])) in LAYERS:
            return LAYERS[prefix]
    raise AssertionError(f"{module} has no layer: add it to LAYERS and the drawing")


def _modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = ("recallmem", *path.relative_to(ROOT).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found.append((name, path))
    return found


def _imports(name: str, path: Path) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("recallmem")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            if base.startswith("recallmem"):
                out.add(base)
    return out


def test_every_import_runs_downward() -> None:
    upward = [
        f"{name} (layer {_layer(name)}) imports {imported} (layer {_layer(imported)})"
        for name, path in _modules()
        for imported in _imports(name, path)
        if not imported.startswith("recallmem._prompts") and _layer(imported) > _layer(name)
    ]
    assert upward == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from recallmem.memory import Memory\n", encoding="utf-8")
    assert _imports("recallmem.store.probe", probe) == {"recallmem.memory"}
    assert _layer("recallmem.memory") > _layer("recallmem.store.probe")
