"""``matchmaker admin`` and ETags: ``--if-match``, ``apply``'s conditional writes,
``rotate-store-key``."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from matchmaker.adminclient.client import AdminClient, AdminError
from matchmaker.cli import main
from matchmaker.store import StoreKey, open_store
from tests.matchmaker.control.conftest import KEY
from tests.matchmaker.store.conftest import project
from tests.matchmaker.storekeys import new_key_file


def run(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["admin", *args], env=env)


def test_get_shows_the_etag_and_patch_and_delete_honour_if_match(
    env: dict[str, str], tmp_path: Path, http: httpx.Client
) -> None:
    stale = http.post("/admin/projects", json={"id": "chess"}).headers["ETag"]
    current = http.patch("/admin/projects/chess", json={"lockdown": True}).headers["ETag"]
    assert current in run(env, "projects", "get", "chess").output
    patch = tmp_path / "patch.json"
    patch.write_text('{"lockdown": false}')
    refused = run(env, "projects", "patch", "chess", "-f", str(patch), "--if-match", stale)
    assert refused.exit_code == 1
    assert "[project.conflict]" in refused.stderr
    assert http.get("/admin/projects/chess").json()["lockdown"] is True
    assert run(env, "projects", "delete", "chess", "--if-match", stale).exit_code == 1
    done = run(env, "projects", "patch", "chess", "-f", str(patch), "--if-match", current)
    assert done.exit_code == 0, done.output
    assert run(env, "projects", "delete", "chess").exit_code == 0  # unconditional, as before


def test_the_client_writes_what_it_listed_only_while_it_is_unchanged(
    admin_url: str, http: httpx.Client
) -> None:
    """What ``apply`` does between its plan and its writes: another writer in between
    makes its patch fail instead of being silently overwritten."""
    http.post("/admin/projects", json={"id": "a"})
    http.post("/admin/projects", json={"id": "b"})
    with AdminClient(admin_url, KEY) as client:
        client.list_projects()
        http.patch("/admin/projects/a", json={"displayName": "someone else"})
        with pytest.raises(AdminError) as refused:
            client.patch("a", {"lockdown": True}, if_match=client.etags["a"])
        assert refused.value.code == "project.conflict"
        client.patch("b", {"lockdown": True}, if_match=client.etags["b"])
        client.delete("b", if_match=client.etags["b"])  # the patch's ETag was kept
    assert http.get("/admin/projects/a").json()["lockdown"] is False


def key_file(tmp_path: Path, name: str) -> str:
    return str(new_key_file(tmp_path / name))


async def create_in_clear(url: str) -> None:
    async with await open_store(url) as store:
        await store.create(project("a", "client-secret-to-rotate"))


async def read_under(url: str, key_path: str) -> object:
    async with await open_store(url, StoreKey.from_file(key_path)) as store:
        return await store.get("a")


def test_rotate_store_key_seals_a_clear_store_then_moves_it_to_a_new_key(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'projects.db'}"
    asyncio.run(create_in_clear(url))
    first, second = key_file(tmp_path, "first.key"), key_file(tmp_path, "second.key")
    sealed = run({"MATCHMAKER_STORE": url}, "rotate-store-key", "--new-key-file", first)
    assert sealed.exit_code == 0, sealed.output
    said = r"re-sealed the secrets of 1 Project\(s\) under store key \w{16}\n"
    assert re.fullmatch(said, sealed.output)
    wrong = run({}, "rotate-store-key", "--store", url, "--new-key-file", second)
    assert wrong.exit_code == 1
    assert "[store.key_mismatch]" in wrong.stderr
    moved = run(
        {}, "rotate-store-key", "--store", url, "--old-key-file", first, "--new-key-file", second
    )
    assert moved.exit_code == 0, moved.output
    assert asyncio.run(read_under(url, second)) == project("a", "client-secret-to-rotate")
    assert b"client-secret-to-rotate" not in (tmp_path / "projects.db").read_bytes()
