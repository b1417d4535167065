"""``matchmaker admin projects ...`` against a real server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from click.testing import CliRunner, Result

from matchmaker.adminclient.commands import HINTS
from matchmaker.cli import main
from matchmaker.errors import CATALOGUE, STATUS_BY_CODE


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["admin", *args], env=env)


def test_create_list_get_patch_delete(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    project = tmp_path / "chess.yaml"
    project.write_text(
        "id: chess\nkeys: [{type: shared-secret, secret: s3cret-value}]\n"
        "policies: [{name: blitz, mode: auto, groupSize: 2, default: true}]\n"
    )
    created = run(env, "projects", "create", "-f", str(project))
    assert created.exit_code == 0, created.output
    assert created.output == "created chess\n"
    assert http.get("/admin/projects/chess").json()["policies"][0]["name"] == "blitz"

    listed = run(env, "projects", "list")
    assert listed.exit_code == 0
    assert "chess" in listed.output
    assert "blitz*" in listed.output
    assert "s3cret-value" not in listed.output
    as_json = json.loads(run(env, "projects", "list", "--format", "json").output)
    assert [p["id"] for p in as_json] == ["chess"]

    got = run(env, "projects", "get", "chess")
    assert "blitz" in got.output
    assert "s3cret-value" not in got.output
    assert (
        json.loads(run(env, "projects", "get", "chess", "--format", "json").output)["id"] == "chess"
    )

    patch = tmp_path / "patch.json"
    patch.write_text('{"lockdown": true}')
    assert run(env, "projects", "patch", "chess", "-f", str(patch)).exit_code == 0
    assert http.get("/admin/projects/chess").json()["lockdown"] is True

    assert run(env, "projects", "delete", "chess").output == "deleted chess\n"
    assert http.get("/admin/projects/chess").status_code == 404


def test_errors_are_one_line_with_a_hint_and_exit_1(env: dict[str, str], admin_url: str) -> None:
    missing = run(env, "projects", "get", "nope")
    assert missing.exit_code == 1
    assert "no Project with id 'nope'" in missing.stderr
    assert "[project.not_found]" in missing.stderr
    assert HINTS["project.not_found"] in missing.stderr

    wrong_key = run({**env, "MATCHMAKER_MANAGEMENT_KEY": "wrong"}, "projects", "list")
    assert wrong_key.exit_code == 1
    assert "[auth.unauthorized]" in wrong_key.stderr
    assert "wrong" not in wrong_key.stderr

    nowhere = run({**env, "MATCHMAKER_ADMIN_URL": "http://127.0.0.1:1"}, "projects", "list")
    assert nowhere.exit_code == 1
    assert "[admin.unreachable]" in nowhere.stderr
    assert "Traceback" not in nowhere.output

    data_port = run({**env, "MATCHMAKER_ADMIN_URL": admin_url + "/admin"}, "projects", "list")
    assert "[route.not_found]" in data_port.stderr


def test_a_bad_body_is_refused_by_the_server_and_reported(
    env: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\npolicies: [{name: p, mode: claim, groupSize: 2, filter: {a: 1}}]\n")
    result = run(env, "projects", "create", "-f", str(bad))
    assert result.exit_code == 1
    assert "[request.invalid]" in result.stderr
    assert "mode auto only" in result.stderr


def test_every_error_code_of_the_management_port_has_a_hint() -> None:
    admin_codes = {code for code, spec in CATALOGUE.items() if "admin" in spec.surfaces}
    assert set(STATUS_BY_CODE) | admin_codes == set(HINTS)


def test_the_key_is_required(admin_url: str) -> None:
    result = CliRunner().invoke(main, ["admin", "projects", "list", "--url", admin_url], env={})
    assert result.exit_code == 2
    assert "--key" in result.stderr
