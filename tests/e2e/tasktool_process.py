"""Whole-process tasktool runs: a fresh git repository, an isolated home, the CLI as a child."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


def git_repository(tmp_path: Path) -> Path:
    """``<tmp>/repo`` as a git work tree, with an empty ``<tmp>/home`` beside it."""
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (tmp_path / "home").mkdir()
    return root


def tasktool_env(home: Path) -> dict[str, str]:
    """This process's environment without ``TASKTOOL_*`` variables, ``HOME`` at ``home``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TASKTOOL_")}
    env["HOME"] = str(home)
    return env


def run_tasktool(
    args: tuple[str, ...], *, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """``python -m tasktool ARGS``, output captured, bounded in time, never raising on exit."""
    return subprocess.run(
        [sys.executable, "-m", "tasktool", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",  # file names that are not UTF-8 are printed as their bytes
        timeout=60,
        check=False,
    )


@contextmanager
def serving(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str]
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A ``web start`` process and the URL it says it listens on (its first stderr line);
    killed on the way out if it is still running."""
    process = subprocess.Popen(
        list(argv), cwd=cwd, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # blocks until the server says where it listens
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, line
        yield process, match.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
