"""Shared by the hostile-input e2e tests: a repository with one good task, and a runner
that holds every run to the error standard (coded one-line diagnostics, no traceback)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .tasktool_process import git_repository, run_tasktool, tasktool_env

#: Every stderr line: ``warning:``/``error:`` + message + `` [dotted.code]``.
_DIAGNOSTIC = re.compile(r"(warning|error): .+ \[[a-z_]+(\.[a-z_]+)*\]")


class Hostile:
    """A fresh git repository after ``tasktool init`` and ``add "Good one"`` (task 001)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = git_repository(tmp_path)
        self.env = tasktool_env(tmp_path / "home")
        self.tasks = self.root / "tasks"
        self.run("init")
        self.run("add", "Good one")

    def run(self, *args: str, expect: int = 0, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run the CLI; assert the exit status and that stderr holds only coded lines."""
        done = run_tasktool(args, cwd=self.root, env={**self.env, **extra})
        assert "Traceback" not in done.stderr, done.stderr
        for line in done.stderr.splitlines():
            assert _DIAGNOSTIC.fullmatch(line), f"uncoded stderr line: {line!r}"
        assert done.returncode == expect, f"{args}: exit {done.returncode}: {done.stderr}"
        return done

    def write(self, name: str, data: bytes) -> Path:
        path = self.tasks / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path
