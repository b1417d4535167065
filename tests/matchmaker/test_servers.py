"""Choosing the data plane's server: ``--server`` / ``MATCHMAKER_SERVER``."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
from importlib.machinery import ModuleSpec
from typing import Any

import pytest
from click.testing import CliRunner

from matchmaker.cli import main
from matchmaker.errors import MatchmakerError
from matchmaker.server import _listen
from matchmaker.servers import event_loop_factory, resolve_server
from matchmaker.servers.streams import cancelled_connections_unlogged


def _hidden(monkeypatch: pytest.MonkeyPatch, *hidden: str) -> None:
    """This interpreter as if the ``hidden`` modules were not installed."""
    find_spec = importlib.util.find_spec

    def hide(name: str, package: str | None = None) -> ModuleSpec | None:
        return None if name in hidden else find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", hide)


#: Why a test of the fast server skips: CI installs the extra, so there it never does.
FAST_EXTRA = "needs the `fast` extra: pip install './packages/matchmaker[fast]'"


@pytest.fixture
def without_picows(monkeypatch: pytest.MonkeyPatch) -> None:
    """This interpreter as if picows were not installed."""
    _hidden(monkeypatch, "picows")


def test_auto_is_picows_when_installed() -> None:
    pytest.importorskip("picows", reason=FAST_EXTRA)
    assert resolve_server("auto") == "picows"
    assert resolve_server("hypercorn") == "hypercorn"


@pytest.mark.usefixtures("without_picows")
def test_auto_falls_back_to_hypercorn_and_picows_alone_is_a_coded_error() -> None:
    assert resolve_server("auto") == "hypercorn"
    with pytest.raises(MatchmakerError) as missing:
        resolve_server("picows")
    assert missing.value.code == "server.unavailable"
    assert "matchmaker[fast]" in missing.value.message


def test_an_unknown_server_is_a_coded_error() -> None:
    with pytest.raises(MatchmakerError) as unknown:
        resolve_server("uvicorn")
    assert unknown.value.code == "server.unknown"


@pytest.mark.usefixtures("without_picows")
def test_the_command_refuses_picows_when_it_is_missing() -> None:
    result = CliRunner().invoke(main, ["--server", "picows", "--port", "0"])
    assert result.exit_code == 1
    assert "[server.unavailable]" in result.output


def test_the_environment_chooses_the_server_and_the_flag_checks_it() -> None:
    result = CliRunner().invoke(main, ["--port", "0"], env={"MATCHMAKER_SERVER": "uvicorn"})
    assert result.exit_code == 2
    assert "MATCHMAKER_SERVER must be one of auto, hypercorn, picows" in result.output


def test_uvloop_runs_picows_and_hypercorn_keeps_asyncio() -> None:
    assert event_loop_factory("hypercorn") is None
    pytest.importorskip("picows", reason=FAST_EXTRA)
    pytest.importorskip("uvloop", reason=FAST_EXTRA)
    factory = event_loop_factory("picows")
    assert factory is not None
    loop = factory()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()


def test_the_listening_socket_sends_small_frames_at_once() -> None:
    """Accepted sockets inherit the listening socket's TCP_NODELAY (picows sets it too).

    Without it a reply waited for a delayed ACK (the fastest connect+match took 44 ms).
    """
    sock = _listen("127.0.0.1", 0)
    try:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()


async def test_a_connection_cancelled_at_shutdown_is_not_reported_and_other_faults_are() -> None:
    """A stream server's connection task cancelled (as hypercorn cancels the ones left
    when the grace ends) reaches no exception handler; any other report still does."""
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    tasks: list[asyncio.Task[Any]] = []
    connected = asyncio.Event()

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.append(task)
        connected.set()
        await reader.read()
        writer.close()

    try:
        with cancelled_connections_unlogged():
            server = await asyncio.start_server(held, "127.0.0.1", 0)
            _, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
            await connected.wait()
            tasks[0].cancel()
            await asyncio.gather(tasks[0], return_exceptions=True)
            loop.call_exception_handler({"message": "another fault", "exception": ValueError()})
            writer.close()
            server.close()
            await server.wait_closed()
    finally:
        loop.set_exception_handler(None)
    assert [context["message"] for context in reported] == ["another fault"]
