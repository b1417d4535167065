"""A real server on free loopback ports for the admin CLI to talk to."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from matchmaker.config import ServerConfig
from tests.matchmaker.control.conftest import KEY, ServerThread


def serving(store_url: str) -> Iterator[str]:
    """The management URL of a fresh server on ``store_url``, stopped afterwards."""
    config = ServerConfig(port=0, management_port=0, management_key=KEY, store_url=store_url)
    server = ServerThread(config)
    bound = server.start()
    assert bound.management is not None
    host, port = bound.management
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def admin_url() -> Iterator[str]:
    """The management URL of a fresh server (memory store)."""
    yield from serving("memory://")


@pytest.fixture
def env(admin_url: str) -> dict[str, str]:
    """How an operator points the CLI at the server: the two documented variables."""
    return {"MATCHMAKER_ADMIN_URL": admin_url, "MATCHMAKER_MANAGEMENT_KEY": KEY}


@pytest.fixture
def http(admin_url: str) -> Iterator[httpx.Client]:
    """Direct access, to check what the CLI did."""
    headers = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=admin_url, headers=headers, timeout=10) as client:
        yield client
