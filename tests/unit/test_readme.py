"""The README stays true: its two opening commands, and a row per configuration field."""

from __future__ import annotations

from pathlib import Path

from recallmem.config import MemoryConfig

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def test_readme_opens_with_exactly_two_commands() -> None:
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["bash scripts/serve.sh", "bash scripts/test.sh"]
    for command in commands:
        assert (Path(__file__).parents[2] / command.split()[1]).is_file()


def test_every_setting_is_documented() -> None:
    for name in MemoryConfig.model_fields:
        assert f"| `{name}` |" in README, name


def test_every_service_setting_is_documented() -> None:
    from recallmem.server.settings import ServerSettings

    for name in ServerSettings.model_fields:
        assert f"| `RECALLMEM_{name.upper()}` |" in README, name
