"""``import matchmaker`` and ``import tasktool`` load no server, UI or git library.

Each check runs in a fresh interpreter: this test process has loaded everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = (
    "starlette",
    "hypercorn",
    "picows",
    "uvicorn",
    "mcp",
    "aiortc",
    "git",
    "websockets",
)


def loaded_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return {name.split(".")[0] for name in json.loads(result.stdout)}


@pytest.mark.parametrize("package", ["matchmaker", "tasktool"])
def test_importing_the_package_loads_no_heavy_library(package: str) -> None:
    loaded = loaded_after(f"import {package}")
    assert package in loaded
    assert not loaded & {*HEAVY, "click", "rich", "httpx", "msgspec", "yaml", "ruamel"}


def test_the_matchmaker_client_loads_no_server_library() -> None:
    loaded = loaded_after("import matchmaker\nmatchmaker.Client")
    assert "websockets" in loaded
    assert not loaded & {"starlette", "hypercorn", "picows", "aiosqlite", "asyncpg"}


def test_loading_tasks_loads_no_front_end() -> None:
    loaded = loaded_after(
        "import tasktool\ntasktool.load_context\ntasktool.rank\ntasktool.update_task"
    )
    assert not loaded & {*HEAVY, "click", "rich"}
