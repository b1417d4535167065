"""``matchmaker admin apply``: the server ends up holding the file's Projects, idempotently,
or, for a file with one bad Project, nothing changes (on every store)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from matchmaker.cli import main
from matchmaker.model import Project, ProjectKey
from matchmaker.store import open_store
from tests.matchmaker.adminclient.conftest import serving
from tests.matchmaker.control.conftest import KEY

FILE = """\
projects:
  - id: chess
    keys: [{type: shared-secret, secret: chess-secret-1}]
    policies:
      - {name: blitz, mode: auto, groupSize: 2, default: true, filter: {band: "@self"}}
  - id: go
    displayName: Go
"""


@pytest.fixture
def admin_url(store_url: str) -> Iterator[str]:
    """A fresh server on each store backend (memory, SQLite, PostgreSQL)."""
    yield from serving(store_url)


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
        {"action": "delete", "id": "stray", "fields": []},  # removals first
        {"action": "unchanged", "id": "chess", "fields": []},
        {"action": "unchanged", "id": "go", "fields": []},
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


GOOD = """\
projects:
  - id: a
    keys: [{type: shared-secret, secret: a-secret}]
    policies: [{name: duel, mode: auto, groupSize: 2, default: true}]
  - id: b
    displayName: B
"""
BAD = [
    ("{name: p, mode: auto, groupSize: 2}, {name: p, mode: claim, groupSize: 2}", "duplicate"),
    (
        "{name: p, mode: auto, groupSize: 2, default: true},"
        " {name: q, mode: auto, groupSize: 2, default: true}",
        "at most one policy",
    ),
    ("{name: p, mode: claim, groupSize: 2, filter: {band: '@self'}}", "mode auto only"),
    ("{name: p, mode: auto, groupSize: 65}", "at most 64"),
    ("{name: p, mode: auto, groupSize: 0}", ">= 1"),
    (
        "{name: p, mode: auto, groupSize: 2,"
        " filter: {r: {within: 100, widen: {everyMs: 1, by: 1, max: 50}}}}",
        "at least within",
    ),
    ("{name: p, mode: auto, groupSize: 2, minGroupSize: 3, fillTimeoutMs: 1}", "at most groupSize"),
    ("{name: p, mode: claim, groupSize: 2, minGroupSize: 1, fillTimeoutMs: 1}", "mode auto"),
]


def state(http: httpx.Client) -> list[dict[str, Any]]:
    projects: list[dict[str, Any]] = http.get("/admin/projects").json()["projects"]
    return projects


@pytest.mark.parametrize(("policies", "words"), BAD)
def test_a_file_with_one_bad_project_changes_nothing(
    env: dict[str, str], tmp_path: Path, http: httpx.Client, policies: str, words: str
) -> None:
    assert http.post("/admin/projects", json={"id": "b", "lockdown": True}).is_success
    before = state(http)
    path = tmp_path / "projects.yaml"
    path.write_text(GOOD + f"  - id: c\n    policies: [{policies}]\n")
    for flags in ((), ("--dry-run",)):
        result = apply(env, path, *flags)
        assert result.exit_code == 1, result.output
        assert "'c'" in result.stderr
        assert "projects[2]" in result.stderr
        assert words in result.stderr
        assert "nothing was" in result.stderr
        assert "created" not in result.output
        assert state(http) == before


@pytest.mark.parametrize(
    ("project", "code"),
    [
        ("{id: c, keys: [{type: shared-secret, secret: held}]}", "project.secret_in_use"),
        (f"{{id: c, keys: [{{type: shared-secret, secret: {KEY}}}]}}", "request.invalid"),
        ("{id: default}", "project.reserved_id"),
        (
            "{id: c, keys: [{type: shared-secret, secret: " + "x" * 1025 + "}]}",
            "request.invalid",
        ),
    ],
)
def test_the_server_judges_the_whole_file_before_a_write(
    env: dict[str, str], tmp_path: Path, http: httpx.Client, project: str, code: str
) -> None:
    body = {"id": "other", "keys": [{"type": "shared-secret", "secret": "held"}]}
    assert http.post("/admin/projects", json=body).is_success
    before = state(http)
    path = tmp_path / "projects.yaml"
    path.write_text(GOOD + f"  - {project}\n")
    for flags in (("--dry-run",), ()):
        result = apply(env, path, *flags)
        assert result.exit_code == 1, result.output
        assert f"[{code}]" in result.stderr
        assert "projects[2]" in result.stderr
        assert KEY not in result.stderr
        assert "held" not in result.stderr
        assert state(http) == before


def test_a_secret_in_two_projects_of_the_file_is_refused_before_sending(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    path = tmp_path / "projects.yaml"
    path.write_text(GOOD + "  - {id: c, keys: [{type: shared-secret, secret: a-secret}]}\n")
    result = apply(env, path)
    assert result.exit_code == 1
    assert "projects[2] ('c'): a key secret is also in projects[0] ('a')" in result.stderr
    assert "a-secret" not in result.stderr
    assert state(http) == []


def keys(http: httpx.Client, project_id: str) -> list[str]:
    found = http.get(f"/admin/projects/{project_id}").json()["keys"]
    return [key["secret"] for key in found]


def test_secrets_move_and_swap_between_projects_of_one_file(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    def project(project_id: str, *secrets: str) -> str:
        listed = ", ".join(f"{{type: shared-secret, secret: {s}}}" for s in secrets)
        return f"  - {{id: {project_id}, keys: [{listed}]}}\n"

    path = tmp_path / "projects.yaml"
    path.write_text("projects:\n" + project("a", "s1", "kept") + project("b", "s2"))
    assert apply(env, path).exit_code == 0
    assert http.post(
        "/admin/projects", json={"id": "old", "keys": [{"type": "shared-secret", "secret": "s3"}]}
    ).is_success
    # a and b swap s1 and s2; c takes s3 from "old", which --prune deletes.
    path.write_text(
        "projects:\n" + project("a", "s2", "kept") + project("b", "s1") + project("c", "s3")
    )
    before = state(http)
    dry = apply(env, path, "--prune", "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    assert "dry run, nothing changed: 1 created, 2 patched, 1 deleted" in dry.output
    assert state(http) == before
    done = apply(env, path, "--prune")
    assert done.exit_code == 0, done.stderr
    assert "s1" not in done.output
    assert "s2" not in done.output
    assert (keys(http, "a"), keys(http, "b"), keys(http, "c")) == (["s2", "kept"], ["s1"], ["s3"])
    assert [p["id"] for p in state(http)] == ["a", "b", "c"]
    assert "0 created, 0 patched, 0 deleted, 3 unchanged" in apply(env, path, "--prune").output


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_write_that_fails_midway_says_what_was_applied(
    env: dict[str, str], tmp_path: Path, http: httpx.Client, store_url: str
) -> None:

    async def second_writer() -> None:
        # Another process writing the same file: the server's directory does not see it,
        # so its dry run passes, and the store's unique index refuses the real write.
        async with await open_store(store_url) as store:
            await store.create(Project("z", keys=(ProjectKey("shared-secret", "taken"),)))

    asyncio.run(second_writer())
    path = tmp_path / "projects.yaml"
    path.write_text(
        "projects:\n  - {id: a}\n  - {id: b, keys: [{type: shared-secret, secret: taken}]}\n"
        "  - {id: c}\n"
    )
    result = apply(env, path)
    assert result.exit_code == 1
    assert "+ a" in result.output
    assert "not applied: + b, + c" in result.output
    assert "creating Project 'b' (projects[1]) was refused" in result.stderr
    assert "[project.secret_in_use]" in result.stderr
    assert [p["id"] for p in state(http)] == ["a", "z"]
    as_json = json.loads(apply(env, path, "--format", "json").stdout)
    assert as_json["failed"]["id"] == "b"
    assert as_json["failed"]["code"] == "project.secret_in_use"
    assert [(c["action"], c["id"]) for c in as_json["not_applied"]] == [
        ("create", "b"),
        ("create", "c"),
    ]


def test_jwt_keys_apply_beside_moving_shared_secrets(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    hs256 = "an-hs256-key-applied-from-a-file-7c21e0"
    jwt_key = (
        f"{{type: jwt, algorithm: HS256, key: {hs256}, claims: {{rating: attributes.rating}}}}"
    )

    def project(project_id: str, *secrets: str) -> str:
        listed = "".join(f", {{type: shared-secret, secret: {s}}}" for s in secrets)
        return f"  - {{id: {project_id}, keys: [{jwt_key}{listed}]}}\n"

    path = tmp_path / "projects.yaml"
    path.write_text("projects:\n" + project("a", "s1") + project("b"))
    first = apply(env, path)
    assert first.exit_code == 0, first.output
    assert hs256 not in first.output
    path.write_text("projects:\n" + project("a") + project("b", "s1"))  # s1 moves to b
    moved = apply(env, path)
    assert moved.exit_code == 0, moved.output
    assert hs256 not in moved.output
    keys_of: dict[str, list[dict[str, str]]] = {
        str(p["id"]): p["keys"]  # type: ignore[misc]
        for p in stored(http)
    }
    assert [k.get("secret") for k in keys_of["b"]] == [None, "s1"]
    assert [k["type"] for k in keys_of["a"]] == ["jwt"]
