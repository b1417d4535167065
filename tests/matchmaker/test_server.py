"""The process shell: where each plane listens, and what the startup log says about it."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from matchmaker.config import ServerConfig
from tests.matchmaker.control.conftest import KEY, ServerThread


@pytest.mark.parametrize(
    ("management_host", "bound_to", "notice"),
    [(None, "127.0.0.1", True), ("0.0.0.0", "0.0.0.0", False)],
)
def test_the_control_plane_is_on_loopback_unless_named(
    caplog: pytest.LogCaptureFixture, management_host: str | None, bound_to: str, notice: bool
) -> None:
    caplog.set_level(logging.INFO, logger="matchmaker")
    config = ServerConfig(
        host="0.0.0.0",  # the data plane on every interface, as in compose
        port=0,
        management_host=management_host,
        management_port=0,
        metrics_port=0,
        management_key=KEY,
        store_url="memory://",
    )
    server = ServerThread(config)
    bound = server.start()
    try:
        assert bound.data[0] == "0.0.0.0"
        assert bound.management is not None
        assert bound.metrics is not None
        assert bound.management[0] == bound_to
        assert bound.metrics[0] == bound_to
        line = next(
            r.getMessage() for r in caplog.records if "control plane listening" in r.getMessage()
        )
        assert ("loopback by default: --management-host to change" in line) is notice
    finally:
        server.stop()


DOCS = Path(__file__).parents[2]


def _shape(line: str) -> str:
    """A startup line with what varies between runs (ports, server, store, counts) blanked."""
    line = re.sub(r":\d+", ":N", line)
    line = re.sub(r"server (granian|hypercorn)", "server S", line)
    line = re.sub(r"store [^ ,]+", "store X", line)
    return re.sub(r"\d+ Projects", "N Projects", line)


def _quoted(path: str, start: str) -> list[str]:
    text = (DOCS / path).read_text(encoding="utf-8")
    return [m.group(0) for m in re.finditer(rf"{start}[^\n`]*", text)]


def test_the_startup_lines_the_docs_quote_are_the_ones_logged(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.INFO, logger="matchmaker")
    store = f"sqlite:///{tmp_path / 'matchmaker.db'}"
    config = ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store)
    server = ServerThread(config)
    server.start()
    server.stop()
    logged = {_shape(r.getMessage()) for r in caplog.records if "listening on" in r.getMessage()}
    quoted = [
        *_quoted("README.md", "data plane listening on"),
        *_quoted("docs/control-plane.md", "(?<=INFO matchmaker: )[a-z]+ plane listening on"),
    ]
    assert len(quoted) == 3
    for line in quoted:
        assert _shape(line) in logged, line
