"""Fixtures of the sync tests: fake trackers served on loopback, a workspace with a CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tasktool.sync.trackers import FakeGitHub, FakeJira, Served, Workspace


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    tracker = FakeGitHub("acme/widgets")
    served = Served(tracker)
    yield tracker
    served.stop()


@pytest.fixture
def jira() -> Iterator[FakeJira]:
    tracker = FakeJira("PROJ")
    served = Served(tracker)
    yield tracker
    served.stop()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "repo")
