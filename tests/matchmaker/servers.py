"""The data plane's servers every server-facing test runs against (``--server``)."""

from __future__ import annotations

import importlib.util

import pytest

SERVERS = [
    pytest.param("hypercorn", id="hypercorn"),
    pytest.param(
        "picows",
        id="picows",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("picows") is None,
            reason="picows is not installed (pip install './packages/matchmaker[fast]')",
        ),
    ),
]
