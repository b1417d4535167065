"""Choosing the data plane's server: ``--server`` / ``MATCHMAKER_SERVER``."""

from __future__ import annotations

import importlib.util
import socket
from importlib.machinery import ModuleSpec

import pytest
from click.testing import CliRunner

from matchmaker.cli import main
from matchmaker.errors import MatchmakerError
from matchmaker.server import _listen
from matchmaker.servers import event_loop_factory, resolve_server


@pytest.fixture
def without_granian(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter as if granian were not installed."""
    find_spec = importlib.util.find_spec

    def hide(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name == "granian" else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", hide)


def test_auto_is_granian_when_installed() -> None:
    installed = importlib.util.find_spec("granian") is not None
    assert resolve_server("auto") == ("granian" if installed else "hypercorn")
    assert resolve_server("hypercorn") == "hypercorn"


@pytest.mark.usefixtures("without_granian")
def test_auto_falls_back_to_hypercorn_and_granian_alone_is_a_coded_error() -> None:
    assert resolve_server("auto") == "hypercorn"
    with pytest.raises(MatchmakerError) as missing:
        resolve_server("granian")
    assert missing.value.code == "server.unavailable"
    assert "matchmaker[fast]" in missing.value.message


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
    assert "MATCHMAKER_SERVER must be one of auto, hypercorn, granian" in result.output


def test_uvloop_runs_granian_and_hypercorn_keeps_asyncio() -> None:
    assert event_loop_factory("hypercorn") is None
    pytest.importorskip("granian")
    pytest.importorskip("uvloop")
    factory = event_loop_factory("granian")
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
