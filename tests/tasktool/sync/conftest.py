"""Fixtures of the sync tests: fake trackers served on loopback, a workspace with a CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tests.tasktool.sync.trackers import FakeGitHub, FakeJira, Served, Tracker, Workspace

T = TypeVar("T", bound=Tracker)


def _serve(tracker: T) -> Iterator[T]:
    served = Served(tracker)
    yield tracker
    served.stop()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    yield from _serve(FakeGitHub("acme/widgets"))


@pytest.fixture
def jira() -> Iterator[FakeJira]:
    yield from _serve(FakeJira("PROJ"))


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "repo")
