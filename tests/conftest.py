"""Suite-wide rules: in CI a test that needs a real component may not skip.

A test marked ``postgres``, ``redis``, ``browser``, ``backlogmd`` or ``unprivileged`` needs
something outside Python (a server, Debian ``chromium``, Backlog.md's ``backlog`` CLI, a
non-root uid). Outside CI such a test
may skip when the component is missing. In CI (``CI`` set to anything but ``0``/``false``,
as ``.ci/run`` does) its skip is reported as a failure, so a green run proves that every
store, browser and privilege case really ran.

Tests marked ``unprivileged`` check file modes, which root bypasses. Run as root they
skip, or in CI are deselected: the ``unprivileged`` nox session runs them again as a
throwaway uid (``setpriv``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Generator, Iterator
from typing import Any

import pytest

#: Markers naming a component a test cannot run without.
REQUIRED_MARKERS = ("postgres", "redis", "browser", "backlogmd", "unprivileged")
#: Fixtures that imply a marker, so a test cannot forget it.
FIXTURE_MARKERS = {
    "postgres_url": "postgres",
    "browser": "browser",
    "own_redis": "redis",
    "backlog_cli": "backlogmd",
}


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def needed_components(item: pytest.Item) -> list[str]:
    return [name for name in REQUIRED_MARKERS if item.get_closest_marker(name) is not None]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)
    if os.geteuid() != 0:
        return
    privileged = [item for item in items if item.get_closest_marker("unprivileged")]
    if in_ci():
        # Root in CI: these run in the ``unprivileged`` nox session instead.
        config.hook.pytest_deselected(items=privileged)
        items[:] = [item for item in items if not item.get_closest_marker("unprivileged")]
        return
    skip = pytest.mark.skip(reason="root bypasses file modes (nox -s unprivileged runs this)")
    for item in privileged:
        item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.skipped and not hasattr(report, "wasxfail") and in_ci():
        needs = needed_components(item)
        if needs:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            report.outcome = "failed"
            report.longrepr = (
                f"skipped in CI, but this test needs {', '.join(needs)} and must run: {reason}"
            )
    return report


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's ``chromium`` driven by Playwright (one per module); skips, a failure in CI,
    where it is not installed (``.ci/run`` installs it).

    Module scope, not session: Playwright's sync API keeps an event loop running on the
    main thread while it is open, and every pytest-asyncio test after it would then fail
    with "Runner.run() cannot be called from a running event loop"."""
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip(
            "Debian's chromium is not installed (apt-get install chromium; .ci/run installs "
            "it, and in CI this skip is a failure)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: the suite runs as root in CI, where Chromium's sandbox refuses to start.
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()
