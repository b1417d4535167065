"""Importing the tasktool core loads no UI, server or git library (a fresh interpreter each).

The layers below the front ends (model, files, config, planning) are what the CLI, the web
dashboard and the MCP server share; a stray import of rich, starlette or mcp there would
slow every command and tie the core to one front end. The ``tasktool list --format json``
path is checked the same way (and, as a whole process, by ``test_list_read_path_stays_light``
in ``tests/e2e/test_tasktool_cli.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

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


LIST_PROBE = """
import json, sys
from tasktool.cli.main import main
try:
    main(["list", "--format", "json"], prog_name="tasktool")
except SystemExit as exit:
    assert not exit.code, exit.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_list_json_loads_no_heavy_library(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / ".tasktool.yaml").write_text("dir: tasks\n", encoding="utf-8")
    (tmp_path / "tasks" / "1-one.md").write_text(
        "---\nid: '1'\ntitle: One\nstatus: pending\n---\n", encoding="utf-8"
    )
    for path in (tmp_path / ".tasktool.yaml", tmp_path / "tasks" / "1-one.md"):
        os.utime(path, (time.time() - 60, time.time() - 60))  # old enough to be cached
    for _ in range(2):  # the first run fills the caches; a warm run parses no YAML at all
        done = subprocess.run(
            [sys.executable, "-c", LIST_PROBE],
            cwd=tmp_path,
            env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    assert [task["id"] for task in json.loads(done.stdout)] == ["1"]
    loaded = {name.partition(".")[0] for name in json.loads(done.stderr.splitlines()[-1])}
    assert "click" in loaded  # the CLI itself, so the probe does see imports
    assert loaded & (HEAVY - {"click"}) == set()
    assert loaded & {"ruamel", "yaml"} == set()
