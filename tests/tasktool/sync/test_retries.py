"""Retries and rate limits against the real local trackers, with a clock that never sleeps."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tasktool.config import Overrides
from tasktool.model.errors import TaskToolError
from tasktool.planning.repository import load_context
from tasktool.sync import RetryPolicy, SyncReport, configured_sources, run_sync
from tasktool.sync.transport import Transport
from tests.tasktool.sync.trackers import (
    Canned,
    FakeGitHub,
    FakeJira,
    Workspace,
    github_entry,
    jira_entry,
)

NOW = 1_800_000_000.0


class RecordingClock:
    """A fixed ``now`` and a ``sleep`` that records the wait and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def now(self) -> float:
        return NOW

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def _sync(workspace: Workspace, clock: RecordingClock, **policy: float) -> SyncReport:
    repo = load_context(
        Overrides(config=str(workspace.root / ".tasktool.yaml")),
        cwd=workspace.root,
        env=workspace.env,
    )
    return run_sync(
        repo,
        configured_sources(repo),
        env=workspace.env,
        policy=RetryPolicy(**policy),  # type: ignore[arg-type]
        clock=clock,
    )


@pytest.fixture
def one_issue(workspace: Workspace, github: FakeGitHub) -> Workspace:
    github.add(1, "One")
    workspace.configure(github_entry(github.url))
    return workspace


def test_github_primary_rate_limit_waits_until_reset(
    one_issue: Workspace, github: FakeGitHub
) -> None:
    github.fail_next(
        Canned(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW) + 30)})
    )
    clock = RecordingClock()
    report = _sync(one_issue, clock)
    assert report.summary() == "created 1, updated 0, unchanged 0, conflicts 0, errors 0"
    assert clock.waits == [30.0]
    assert report.sources[0].retries == 1
    assert len(github.seen) == 2


def test_github_secondary_rate_limit_honours_retry_after(
    one_issue: Workspace, github: FakeGitHub
) -> None:
    github.fail_next(Canned(403, {"Retry-After": "7"}), Canned(429, {"Retry-After": "2"}))
    clock = RecordingClock()
    report = _sync(one_issue, clock)
    assert report.totals()["created"] == 1
    assert clock.waits == [7.0, 2.0]


def test_a_plain_403_is_refused_credentials_not_a_rate_limit(
    one_issue: Workspace, github: FakeGitHub
) -> None:
    github.fail_next(Canned(403, {"X-RateLimit-Remaining": "4999"}))
    clock = RecordingClock()
    report = _sync(one_issue, clock)
    assert report.sources[0].error_code == "sync.auth"
    assert clock.waits == []
    assert len(github.seen) == 1


def test_jira_rate_limit(workspace: Workspace, jira: FakeJira) -> None:
    jira.add(1, "One")
    jira.fail_next(Canned(429, {"Retry-After": "3"}))
    workspace.configure(jira_entry(jira.url))
    clock = RecordingClock()
    report = _sync(workspace, clock)
    assert report.totals()["created"] == 1
    assert clock.waits == [3.0]


def test_server_errors_back_off_exponentially(one_issue: Workspace, github: FakeGitHub) -> None:
    github.fail_next(Canned(502), Canned(503), Canned(500))
    clock = RecordingClock()
    report = _sync(one_issue, clock, backoff=0.5)
    assert report.totals()["created"] == 1
    assert clock.waits == [0.5, 1.0, 2.0]


def test_too_long_a_rate_limit_is_an_error_not_a_wait(
    one_issue: Workspace, github: FakeGitHub
) -> None:
    github.fail_next(Canned(429, {"Retry-After": "3600"}))
    clock = RecordingClock()
    report = _sync(one_issue, clock, max_wait=60)
    source = report.sources[0]
    assert source.error_code == "sync.rate_limited"
    assert "rate limited for another 3600 s" in (source.error or "")
    assert clock.waits == []
    assert report.totals()["errors"] == 1
    assert one_issue.task_files() == {}


def test_retries_are_bounded(one_issue: Workspace, github: FakeGitHub) -> None:
    github.fail_next(*[Canned(500)] * 10)
    clock = RecordingClock()
    report = _sync(one_issue, clock, attempts=3, backoff=1, max_backoff=1.5)
    assert report.sources[0].error_code == "sync.unavailable"
    assert "giving up after 3 attempts (last: HTTP 500)" in (report.sources[0].error or "")
    assert clock.waits == [1.0, 1.5]  # no wait after the last attempt
    assert len(github.seen) == 3


def test_connection_refused_is_retried_then_reported(workspace: Workspace, tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    workspace.configure(github_entry(f"http://127.0.0.1:{port}"))
    clock = RecordingClock()
    report = _sync(workspace, clock, attempts=2, backoff=0.25)
    assert report.sources[0].error_code == "sync.unavailable"
    assert "ConnectError" in (report.sources[0].error or "")
    assert clock.waits == [0.25]


def test_next_page_on_another_host_is_not_followed(
    workspace: Workspace, github: FakeGitHub
) -> None:
    for number in (1, 2, 3):
        github.add(number, f"Issue {number}")
    github.link_host = "127.0.0.2:9"
    workspace.configure(github_entry(github.url))
    report = _sync(workspace, RecordingClock())
    source = report.sources[0]
    assert source.error_code == "sync.response"
    assert "not following it with the token" in (source.error or "")
    assert report.totals()["created"] == 2  # the first page was imported
    assert len(github.seen) == 1


def test_a_protocol_error_never_shows_the_header(github: FakeGitHub) -> None:
    transport = Transport(
        source="github",
        headers={"Authorization": "Bearer abc\ndef"},
        policy=RetryPolicy(attempts=2),
        clock=RecordingClock(),
    )
    with transport, pytest.raises(TaskToolError) as caught:
        transport.request("GET", f"{github.url}/repos/acme/widgets/issues")
    assert caught.value.code == "sync.unavailable"
    assert "LocalProtocolError" in caught.value.message
    assert "abc" not in caught.value.message
