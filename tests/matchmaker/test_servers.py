"""Choosing the data plane's server: ``--server`` / ``MATCHMAKER_SERVER``."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

import pytest
from click.testing import CliRunner

from matchmaker.cli import main
from matchmaker.errors import MatchmakerError
from matchmaker.server import _listen
from matchmaker.servers import event_loop_factory, resolve_server


def _hidden(monkeypatch: pytest.MonkeyPatch, *hidden: str) -> None:
    """This interpreter as if the ``hidden`` modules were not installed."""
    find_spec = importlib.util.find_spec

    def hide(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name in hidden else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", hide)


@pytest.fixture
def without_granian(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter as if granian were not installed."""
    _hidden(monkeypatch, "granian")


@pytest.fixture
def without_fast_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter as if neither picows nor granian were installed."""
    _hidden(monkeypatch, "picows", "granian")


def test_auto_is_picows_when_installed() -> None:
    pytest.importorskip("picows")
    assert resolve_server("auto") == "picows"
    assert resolve_server("hypercorn") == "hypercorn"


def test_auto_is_granian_without_picows(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("granian")
    _hidden(monkeypatch, "picows")
    assert resolve_server("auto") == "granian"


@pytest.mark.usefixtures("without_fast_servers")
def test_auto_falls_back_to_hypercorn_and_a_missing_server_is_a_coded_error() -> None:
    assert resolve_server("auto") == "hypercorn"
    for server, extra in (("picows", "matchmaker[fast]"), ("granian", "matchmaker[granian]")):
        with pytest.raises(MatchmakerError) as missing:
            resolve_server(server)
        assert missing.value.code == "server.unavailable"
        assert extra in missing.value.message


def test_an_unknown_server_is_a_coded_error() -> None:
    with pytest.raises(MatchmakerError) as unknown:
        resolve_server("uvicorn")
    assert unknown.value.code == "server.unknown"


@pytest.mark.usefixtures("without_granian")
def test_the_command_refuses_granian_when_it_is_missing() -> None:
    result = CliRunner().invoke(main, ["--server", "granian", "--port", "0"])
    assert result.exit_code == 1
    assert "[server.unavailable]" in result.output


def test_the_environment_chooses_the_server_and_the_flag_checks_it() -> None:
    result = CliRunner().invoke(main, ["--port", "0"], env={"MATCHMAKER_SERVER": "uvicorn"})
    assert result.exit_code == 2
    assert "MATCHMAKER_SERVER must be one of auto, hypercorn, picows, granian" in result.output


@pytest.mark.parametrize("server", ["picows", "granian"])
def test_uvloop_runs_the_fast_servers_and_hypercorn_keeps_asyncio(server: str) -> None:
    assert event_loop_factory("hypercorn") is None
    pytest.importorskip(server)
    pytest.importorskip("uvloop")
    factory = event_loop_factory(server)
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_the_listening_socket_sends_small_frames_at_once() -> None:
    """granian sets no TCP_NODELAY on a socket it is handed; accepted sockets inherit ours.

    Without it a reply waited for a delayed ACK (the fastest connect+match took 44 ms).
    """
    sock = _listen("127.0.0.1", 0)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()


#: The library's embedded server, serving one match, then the interpreter's exit.
EMBEDDED = """
import asyncio
import matchmaker

async def main():
    async with matchmaker.serve(matchmaker.ServerConfig(port=0, server="granian")) as server:
        async with (
            await matchmaker.Client.connect(server.ws_url) as alice,
            await matchmaker.Client.connect(server.ws_url) as bob,
        ):
            for client in (alice, bob):
                await client.enter(pool="duel", create=True, mode="auto", group_size=2)
            await alice.next_event("session.created")

asyncio.run(main())
print("served")
"""


@pytest.mark.skipif(
    importlib.util.find_spec("granian") is None,
    reason="granian is not installed (pip install './packages/matchmaker[fast]'; CI installs it)",
)
def test_the_embedded_granian_server_lets_the_interpreter_exit_cleanly(tmp_path: Path) -> None:
    """granian's thread that stops a worker still needs the GIL after its stop callback:
    an interpreter exiting right after ``serve`` would end it inside Rust and abort the
    process (it did in about one exit in three with two at a time). Twelve runs, three at
    a time, all exit 0 without a panic."""
    script = tmp_path / "embedded.py"
    script.write_text(EMBEDDED, encoding="utf-8")
    for _ in range(4):
        runs = [
            subprocess.Popen(
                [sys.executable, str(script)],
                cwd=tmp_path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(3)
        ]
        for run in runs:
            out, err = run.communicate(timeout=60)
            assert (run.returncode, out.strip()) == (0, b"served"), err.decode()
            assert b"panicked" not in err
