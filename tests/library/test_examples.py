"""The user-style example tests in ``examples/`` pass, run as a user runs them.

They are copied into an empty directory (no conftest, no pytest config of ours) and run
by pytest in a fresh process, so the fixtures can only come from the installed
``pytest11`` plugins.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


def run_pytest(project: Path, example: str, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh process in ``project``, holding a copy of ``example`` and nothing else."""
    shutil.copy(EXAMPLES / example, project / example)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, example],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("example", "passed"),
    [("test_matchmaker_example.py", 2), ("test_tasktool_example.py", 2)],
)
def test_example_passes_in_a_user_project(tmp_path: Path, example: str, passed: int) -> None:
    result = run_pytest(tmp_path, example)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{passed} passed" in result.stdout


def test_without_the_plugin_the_fixtures_are_missing(tmp_path: Path) -> None:
    """The examples' fixtures do come from the plugins (the test above would not run)."""
    result = run_pytest(tmp_path, "test_tasktool_example.py", "-p", "no:tasktool")
    assert result.returncode == 1
    assert "fixture 'tasktool_repo' not found" in result.stdout
