"""What importing a layer of the matchmaker loads, checked in a fresh interpreter.

The import contracts (``lint-imports``, root ``pyproject.toml``) check the static graph;
this checks the effect that matters at run time: the sans-I/O core and the control
plane can be imported without the server libraries or the data plane coming along.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SERVER_LIBRARIES = (
    "starlette",
    "hypercorn",
    "picows",
    "aiortc",
    "websockets",
    "click",
)


def loaded_after(*modules: str) -> set[str]:
    """The modules a fresh interpreter holds after importing ``modules``."""
    script = (
        "import json, sys\n"
        + "".join(f"import {module}\n" for module in modules)
        + "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    return set(json.loads(out))


def under(loaded: set[str], *roots: str) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in roots or m.startswith(roots))


def test_the_core_loads_no_server_library_store_or_wire_module() -> None:
    loaded = loaded_after(
        "matchmaker.core",
        "matchmaker.core.conversation",
        "matchmaker.core.engine",
        "matchmaker.core.modes",
    )
    assert "matchmaker.core.engine" in loaded
    assert under(loaded, *SERVER_LIBRARIES) == []
    assert under(loaded, "matchmaker.data", "matchmaker.control", "matchmaker.store") == []
    assert under(loaded, "matchmaker.jsonhttp", "matchmaker.server", "matchmaker.cli") == []


def test_the_control_plane_does_not_load_the_data_plane_or_the_core() -> None:
    loaded = loaded_after("matchmaker.control")
    assert "matchmaker.control.app" in loaded
    assert under(loaded, "matchmaker.data", "matchmaker.core") == []
    assert under(loaded, "hypercorn", "websockets", "aiortc") == []


@pytest.mark.parametrize(
    "module",
    [
        "matchmaker.data.protocol.requests",
        "matchmaker.data.protocol.replies",
        "matchmaker.data.protocol.events",
        "matchmaker.data.translate",
    ],
)
def test_a_data_module_alone_does_not_load_the_app(module: str) -> None:
    loaded = loaded_after(module)
    assert under(loaded, "starlette", "hypercorn") == []
    assert "matchmaker.data.app" not in loaded


def test_the_python_client_loads_none_of_the_server() -> None:
    loaded = loaded_after("matchmaker.client")
    assert "websockets" in loaded
    assert under(loaded, "starlette", "hypercorn") == []
    assert under(loaded, "matchmaker.core", "matchmaker.data", "matchmaker.control") == []
    assert under(loaded, "matchmaker.store", "matchmaker.server") == []


def test_the_command_line_loads_no_server_http_client_or_rich() -> None:
    """``matchmaker --help``, ``config show`` and ``admin`` parse without the heavy libraries;
    the server, httpx and rich are imported by the command that runs them."""
    loaded = loaded_after("matchmaker.cli")
    assert "matchmaker.adminclient.commands" in loaded
    assert under(loaded, "starlette", "hypercorn", "picows", "httpx", "rich") == []
    assert under(loaded, "asyncpg") == []
    assert under(loaded, "matchmaker.server", "matchmaker.data", "matchmaker.control") == []


def test_the_launcher_imports_a_data_plane_server_only_when_it_is_chosen() -> None:
    """picows is loaded by ``serve_function`` when it is chosen, never by the launcher
    or the data plane themselves (a hypercorn process does not hold it)."""
    loaded = loaded_after("matchmaker.server", "matchmaker.data.app", "matchmaker.servers")
    assert "matchmaker.data.direct" in loaded
    assert under(loaded, "picows", "uvloop") == []
