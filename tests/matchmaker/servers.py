"""The data plane's servers every server-facing test runs against (``--server``)."""

from __future__ import annotations

import importlib.util

import pytest


def _optional(name: str, extra: str) -> object:
    return pytest.param(
        name,
        id=name,
        marks=pytest.mark.skipif(
            importlib.util.find_spec(name) is None,
            reason=f"{name} is not installed (pip install './packages/matchmaker[{extra}]')",
        ),
    )


SERVERS = [
    pytest.param("hypercorn", id="hypercorn"),
    _optional("picows", "fast"),
    _optional("granian", "granian"),
]
