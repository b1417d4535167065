"""``tasktool sync`` as a whole process: the progress display only on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from tests.tasktool.sync.trackers import FakeGitHub, Workspace, github_entry


def _run(workspace: Workspace, *, terminal: bool) -> tuple[str, str]:
    """stdout and stderr of one sync; stderr is a pseudo-terminal when ``terminal``."""
    command = [sys.executable, "-m", "tasktool", "--config", ".tasktool.yaml", "sync"]
    env = {**os.environ, **workspace.env, "COLUMNS": "80", "TERM": "xterm"}
    if not terminal:
        done = subprocess.run(
            command,
            cwd=workspace.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout, done.stderr
    leader, follower = pty.openpty()
    with subprocess.Popen(
        command, cwd=workspace.root, env=env, stdout=subprocess.PIPE, stderr=follower
    ) as process:
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not chunk:
                break
            drawn += chunk
        assert process.stdout is not None
        out = process.stdout.read().decode()
        process.wait(timeout=60)
    os.close(leader)
    return out, drawn.decode(errors="replace")


def test_progress_only_on_a_terminal(workspace: Workspace, github: FakeGitHub) -> None:
    for number in range(1, 6):
        github.add(number, f"Issue {number}")
    workspace.configure(github_entry(github.url))
    out, err = _run(workspace, terminal=True)
    assert out.splitlines()[-1] == "created 5, updated 0, unchanged 0, conflicts 0, errors 0"
    assert "github: 5 items" in err
    out, err = _run(workspace, terminal=False)
    assert out == "created 0, updated 0, unchanged 5, conflicts 0, errors 0\n"
    assert err == ""
