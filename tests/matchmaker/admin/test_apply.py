"""``matchmaker admin apply``: the server ends up holding the file's Projects, idempotently."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
from click.testing import CliRunner, Result

from matchmaker.cli import main

FILE = """\
projects:
  - id: chess
    keys: [{type: shared-secret, secret: chess-secret-1}]
    policies:
      - {name: blitz, mode: auto, groupSize: 2, default: true, filter: {band: "@self"}}
  - id: go
    displayName: Go
"""


def apply(env: dict[str, str], path: Path, *flags: str) -> Result:
    return CliRunner().invoke(main, ["admin", "apply", "-f", str(path), *flags], env=env)


def stored(http: httpx.Client) -> list[dict[str, object]]:
    projects: list[dict[str, object]] = http.get("/admin/projects").json()["projects"]
    return projects


def test_apply_creates_then_changes_nothing_on_rerun(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "projects.yaml"
    path.write_text(FILE)
    first = apply(env, path)
    assert first.exit_code == 0, first.output
    assert "+ chess" in first.output
    assert "2 created, 0 patched, 0 deleted, 0 unchanged" in first.output
    assert "chess-secret-1" not in first.output
    after_first = stored(http)
    assert [p["id"] for p in after_first] == ["chess", "go"]

    second = apply(env, path)
    assert second.exit_code == 0
    assert "0 created, 0 patched, 0 deleted, 2 unchanged" in second.output
    assert stored(http) == after_first


def test_dry_run_prints_the_diff_and_changes_nothing(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "projects.yaml"
    path.write_text(FILE)
    apply(env, path)
    before = stored(http)
    path.write_text(FILE.replace("groupSize: 2", "groupSize: 4").replace("chess-secret-1", "new-1"))
    dry = apply(env, path, "--dry-run")
    assert dry.exit_code == 0
    assert "~ chess" in dry.output
    assert '"groupSize":2' in dry.output
    assert '"groupSize":4' in dry.output
    assert "keys: 1 key(s) -> 1 key(s)" in dry.output
    assert "new-1" not in dry.output
    assert "dry run, nothing changed: 0 created, 1 patched" in dry.output
    assert stored(http) == before

    applied = apply(env, path)
    assert applied.exit_code == 0
    assert http.get("/admin/projects/chess").json()["policies"][0]["groupSize"] == 4


def test_prune_deletes_what_the_file_does_not_list(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    assert http.post("/admin/projects", json={"id": "stray"}).status_code == 201
    path = tmp_path / "projects.yaml"
    path.write_text(FILE)
    kept = apply(env, path)
    assert "stray" not in kept.output
    assert "stray" in [p["id"] for p in stored(http)]
    pruned = apply(env, path, "--prune", "--format", "json")
    assert json.loads(pruned.output)["changes"] == [
        {"action": "unchanged", "id": "chess", "fields": []},
        {"action": "unchanged", "id": "go", "fields": []},
        {"action": "delete", "id": "stray", "fields": []},
    ]
    assert [p["id"] for p in stored(http)] == ["chess", "go"]


def test_an_invalid_file_sends_nothing(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "projects.yaml"
    for text, words in [
        ("projects: [{id: a}, {id: a}]\n", "appears twice"),
        ("project: []\n", "'projects:' list"),
        ("projects: [{id: a, groupSize: 2}]\n", "projects[0]"),
        ("projects: [\n", ":2:"),
    ]:
        path.write_text(text)
        result = apply(env, path)
        assert result.exit_code == 1, text
        assert words in result.stderr, (text, result.stderr)
    assert stored(http) == []


def test_the_installed_command_applies_a_file(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "projects.yaml"
    path.write_text(FILE)
    script = shutil.which("matchmaker", path=str(Path(sys.executable).parent))
    assert script is not None
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MATCHMAKER_")}
    done = subprocess.run(
        [script, "admin", "apply", "-f", str(path)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "2 created" in done.stdout
    assert [p["id"] for p in stored(http)] == ["chess", "go"]
