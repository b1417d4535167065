"""Importing the tasktool core loads no UI, server or git library (a fresh interpreter each).

The layers below the front ends (model, files, config, planning) are what the CLI, the web
dashboard and the MCP server share; a stray import of rich, starlette or mcp there would
slow every command and tie the core to one front end. ``test_list_read_path_stays_light``
in ``tests/e2e/test_tasktool_cli.py`` checks the ``tasktool list --format json`` path.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CORE = ("tasktool.model", "tasktool.files", "tasktool.config", "tasktool.planning")
HEAVY = {"click", "rich", "starlette", "mcp", "git", "hypercorn", "granian", "httpx"}

PROBE = """
import importlib, json, pkgutil, sys
for package in {core!r}:
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(module.__path__, package + "."):
        importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""


def loaded_after_importing(packages: tuple[str, ...]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(core=packages)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize("package", CORE)
def test_core_layer_loads_no_heavy_library(package: str) -> None:
    loaded = loaded_after_importing((package,))
    assert "tasktool.planning" not in loaded or package == "tasktool.planning"
    assert {name.partition(".")[0] for name in loaded} & HEAVY == set()


def test_the_probe_sees_a_heavy_import() -> None:
    """The probe itself works: the CLI front end does load click."""
    loaded = loaded_after_importing(("tasktool.cli",))
    assert {"click", "tasktool.cli.commands.listing"} <= loaded
