"""The README's matchmaker quick start, as written, against the real executable.

Only the ports change (free ones instead of 8080/8081): the flags, the Project
body of the curl command and the two-player script are taken from README.md.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import httpx

from .matchmaker_process import MatchmakerProcess

README = Path(__file__).resolve().parents[2] / "README.md"


def quick_start() -> str:
    text = README.read_text()
    return text.split("## Quick start: matchmaker", 1)[1].split("\n## ", 1)[0]


def test_the_readme_quick_start_matches_two_players(tmp_path: Path) -> None:
    section = quick_start()
    command = re.search(r"^matchmaker (.*)$", section, re.M)
    assert command is not None
    flags = shlex.split(command[1])
    flags[flags.index("--port") + 1] = "0"
    flags[flags.index("--management-port") + 1] = "0"
    key = re.search(r"export REALTIME_MGMT_KEY=(\S+)", section)
    assert key is not None
    body = re.search(r"-d '(.*?)'", section, re.S)
    assert body is not None
    script = re.search(r"Save this as `two_players.py`:\n\n```python\n(.*?)```", section, re.S)
    assert script is not None

    mm = MatchmakerProcess(
        flags,
        cwd=tmp_path,
        env={"REALTIME_MGMT_KEY": key[1]},
    )
    try:
        # The README names the server line the log shows: picows with the fast extra.
        assert re.search(
            r"data plane listening on \S+ \(WebSocket \S+, server (picows|hypercorn)\)",
            mm.log(),
        )
        created = httpx.post(
            f"{mm.control_url}/admin/projects",
            content=body[1],
            headers={"Authorization": f"Bearer {key[1]}", "Content-Type": "application/json"},
        )
        assert created.status_code == 201, created.text
        assert created.json() == {"displayName": None, **json.loads(body[1])}
        code = script[1].replace(":8080/", f":{mm.ports['data']}/")
        (tmp_path / "two_players.py").write_text(code)
        run = subprocess.run(
            [sys.executable, "two_players.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        lines = sorted(run.stdout.splitlines())
        assert len(lines) == 2, run.stdout
        sessions = {line.split(" with ")[0].split("session ")[1] for line in lines}
        assert len(sessions) == 1
        for name, line in zip(("alice", "bob"), lines, strict=True):
            assert line.startswith(f"{name}: session ")
            assert sorted(ast.literal_eval(line.split(" with ")[1])) == ["alice", "bob"]
    finally:
        assert mm.stop() == 0
    assert (tmp_path / "matchmaker.db").exists()
