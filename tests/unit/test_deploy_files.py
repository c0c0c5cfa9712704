"""deploy/ stays in step with the code: the settings it sets exist, the paths it checks
are routes, and it runs the Chroma version the package pins."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from recallmem.config import MemoryConfig
from recallmem.server.routes.readiness_routes import router
from recallmem.server.settings import ServerSettings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def service(name: str) -> Any:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"][name]


def test_every_recallmem_variable_in_compose_is_a_setting() -> None:
    fields = (*MemoryConfig.model_fields, *ServerSettings.model_fields)
    settings = {f"RECALLMEM_{name.upper()}" for name in fields}
    variables = set(service("recallmem")["environment"])
    assert variables <= settings, variables - settings


def test_the_checked_paths_are_the_services_readiness_and_liveness() -> None:
    checks = (DEPLOY / "haproxy.cfg").read_text() + (DEPLOY / "Dockerfile").read_text()
    checked = set(re.findall(r"/v1/[a-z]+", checks))
    assert checked == {"/v1/ready", "/v1/live"}
    assert checked <= {getattr(route, "path", None) for route in router.routes}


def test_compose_runs_the_chroma_version_the_package_pins() -> None:
    pyproject = (DEPLOY.parent / "pyproject.toml").read_text()
    pinned = re.search(r'"chromadb==([0-9.]+)"', pyproject)
    assert pinned is not None
    assert service("chroma")["image"] == f"chromadb/chroma:{pinned.group(1)}"


def test_the_balancer_reaches_the_port_the_services_listen_on() -> None:
    port = service("recallmem")["environment"]["RECALLMEM_PORT"]
    assert f"server-template recallmem 16 recallmem:{port}" in (DEPLOY / "haproxy.cfg").read_text()
